//! The error context the rule table generates: every rule's error goes to plain fields and back unchanged,
//! carries the fields its message names, and the wrapping errors give the rule's error as their source.

use std::error::Error as _;

use tpack::format::Section;
use tpack::stream::{DecodeError, PlaceError};
use tpack::write::WriteError;
use tpack::{Error, ErrorContext, Nesting, Rule, SignedAttribute};

/// A context with every slot set, to small numbers every field's type holds.
fn full() -> ErrorContext {
    ErrorContext {
        entry: Some(3),
        record: Some(4),
        position: Some(5),
        offset: Some(6),
        section: Some(Section::Names),
        value: Some(7),
        stored: Some(8),
        computed: Some(9),
        depth: Some(2),
        outer_entry: Some(10),
        inner_rule: Some(Rule::NameUtf8),
    }
}

#[test]
fn every_rule_goes_to_fields_and_back() {
    for &rule in Rule::ALL {
        // R56's number is a signed attribute, shown by its key.
        let attribute = (rule == Rule::SignatureMeta).then_some(SignedAttribute::Counter);
        let mut context = full();
        if let Some(attribute) = attribute {
            context.value = Some(u64::from(attribute));
        }
        let error = Error::from_context(rule, &context)
            .unwrap_or_else(|| panic!("{rule}: no error from a full context"));
        assert_eq!(error.rule(), rule);
        let context = error.context();
        assert_eq!(Error::from_context(rule, &context), Some(error), "{rule}");
        // Every field the context holds is one the error's message shows.
        let message = error.to_string();
        for (slot, shown) in [
            (context.entry.map(u64::from), "3"),
            (context.record.map(u64::from), "4"),
            (context.position.map(u64::from), "5"),
            (context.offset, "6"),
            (context.value.filter(|_| attribute.is_none()), "7"),
            (context.depth.filter(|&d| d > 0).map(u64::from), "2"),
            (context.outer_entry.filter(|_| rule != Rule::NestedInvalid).map(u64::from), "10"),
        ] {
            if slot.is_some() {
                assert!(message.contains(shown), "{rule}: {message:?} does not show {shown}");
            }
        }
        if attribute.is_some() {
            assert!(message.contains("tpack.sig.counter"), "{message}");
        }
    }
}

#[test]
fn contexts_hold_what_each_kind_of_rule_is_about() {
    let e = Error::EntryChecksum { entry: 1, stored: 2, computed: 3, nesting: Nesting::OUTERMOST };
    let c = e.context();
    assert_eq!((c.entry, c.stored, c.computed, c.record, c.value), (Some(1), Some(2), Some(3), None, None));
    assert_eq!((c.depth, c.outer_entry), (Some(0), None));
    let e = Error::EntryChecksum { entry: 1, stored: 2, computed: 3, nesting: Nesting::new(2, 5) };
    let c = e.context();
    assert_eq!((c.entry, c.depth, c.outer_entry), (Some(1), Some(2), Some(5)));
    let e = Error::PaddingNonZero { offset: 7, nesting: Nesting::new(1, 0) };
    let c = e.context();
    assert_eq!((c.offset, c.depth, c.outer_entry, c.entry), (Some(7), Some(1), Some(0), None));
    let e = Error::NestedInvalid { entry: 4, depth: 2, inner: Rule::MetaBool };
    let c = e.context();
    assert_eq!((c.entry, c.depth, c.inner_rule), (Some(4), Some(2), Some(Rule::MetaBool)));
    // R39's entry is the outermost container's, like an integrity error's outer entry.
    assert_eq!(c.outer_entry, Some(4));
    assert_eq!(e.nesting(), Nesting::new(2, 4));
    assert_eq!(Error::NameUtf8 { entry: 1 }.nesting(), Nesting::OUTERMOST);
    assert_eq!(Nesting::new(0, 9), Nesting::OUTERMOST);
    assert_eq!(Nesting::OUTERMOST.outer_entry(), None);
    assert_eq!(Error::BadMagic.context(), ErrorContext::default());
    assert_eq!(Error::MetaUnknownType { record: 1, code: 99 }.context().value, Some(99));
    assert_eq!(Error::SectionLength { section: Section::Trailer }.context().section, Some(Section::Trailer));
}

#[test]
fn a_missing_or_out_of_range_field_gives_no_error() {
    let mut context = full();
    context.entry = None;
    assert_eq!(Error::from_context(Rule::NameUtf8, &context), None);
    // R23's rank is a u8: 300 does not fit.
    let mut context = full();
    context.value = Some(300);
    assert_eq!(Error::from_context(Rule::RankTooLarge, &context), None);
    // Fields a rule does not use are ignored.
    assert_eq!(Error::from_context(Rule::BadMagic, &full()), Some(Error::BadMagic));
}

#[test]
fn wrapping_errors_give_the_rule_as_source() {
    let rule_error = Error::NameUtf8 { entry: 2 };
    let decode = DecodeError::Invalid(rule_error);
    let source = decode.source().and_then(|s| s.downcast_ref::<Error>());
    assert_eq!(source, Some(&rule_error));
    assert!(DecodeError::Finished.source().is_none());

    let write: WriteError<std::io::Error> = WriteError::Format(rule_error);
    assert_eq!(write.source().and_then(|s| s.downcast_ref::<Error>()), Some(&rule_error));
    let io: WriteError<std::io::Error> = WriteError::Io(std::io::Error::other("disk"));
    assert_eq!(io.source().map(ToString::to_string), Some("disk".to_owned()));
    assert!(WriteError::<std::io::Error>::Poisoned.source().is_none());

    let place: PlaceError<std::io::Error> = PlaceError::Region(std::io::Error::other("flash"));
    assert_eq!(place.source().map(ToString::to_string), Some("flash".to_owned()));
    assert!(PlaceError::<std::io::Error>::OutOfOrder.source().is_none());
}

#[test]
fn every_writer_error_has_the_class_bindings_map() {
    use tpack::write::{Buffer, WriteErrorClass};
    let io = std::io::Error::other("disk");
    let rule_error = Error::NameUtf8 { entry: 2 };
    assert!(matches!(WriteError::Io(io).class(), WriteErrorClass::Io(e) if e.to_string() == "disk"));
    assert_eq!(WriteError::<()>::Format(rule_error).class(), WriteErrorClass::Format(rule_error));
    assert_eq!(
        WriteError::<()>::BufferFull(Buffer::Names).class(),
        WriteErrorClass::BufferFull(Buffer::Names)
    );
    assert_eq!(WriteError::<()>::TooLarge.class(), WriteErrorClass::TooLarge);
    assert_eq!(WriteError::<()>::Poisoned.class(), WriteErrorClass::Poisoned);
    let misuse = |entry, value| -> WriteErrorClass<'static, ()> { WriteErrorClass::Misuse { entry, value } };
    for (error, want) in [
        (WriteError::SinkPosition { position: 9, written: 8 }, misuse(None, None)),
        (WriteError::TooManyEntries, misuse(None, None)),
        (WriteError::AlreadyStarted, misuse(None, None)),
        (WriteError::PayloadTooLong { entry: 1, expected: 16 }, misuse(Some(1), Some(16))),
        (WriteError::PayloadTooShort { entry: 2, expected: 16, written: 3 }, misuse(Some(2), Some(16))),
        (WriteError::UnknownLength { entry: 3 }, misuse(Some(3), None)),
        (WriteError::UnsizedNotBytes { entry: 4 }, misuse(Some(4), None)),
        (WriteError::EntriesMissing { written: 5, declared: 7 }, misuse(Some(5), Some(7))),
    ] {
        assert_eq!(error.class(), want, "{error}");
    }
    let numbers: Vec<u8> = [Buffer::Entries, Buffer::Names, Buffer::MetadataRecords, Buffer::MetadataBytes]
        .map(Buffer::number)
        .to_vec();
    assert_eq!(numbers, [0, 1, 2, 3]);
}
