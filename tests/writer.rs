//! The streaming writers: both produce the builder's bytes whatever the chunking, refuse misuse with a precise
//! error, and never leave a file that parses as valid after an error.

mod support;

use embedded_io::Write as _;
use proptest::prelude::*;
use support::entry::EntrySpec;
use support::sinks::{MemSink, PipeSink};
use tpack::write::{
    Bookkeeping, Buffer, Builder, EntryDecl, FixedBookkeeping, Mode, SeekWriter, ShortStorage,
    SliceBookkeeping, StreamWriter, VecBookkeeping, WriteError, Writer,
};
use tpack::{Container, Dtype, MetaValue};

#[derive(Clone, Debug)]
struct Item {
    entry: EntrySpec,
    /// Declare without a shape (RAW only, seekable writer only).
    open_ended: bool,
}

fn sample() -> Vec<Item> {
    vec![
        Item {
            entry: EntrySpec {
                name: "w".into(),
                dtype: Dtype::F32,
                shape: vec![2, 3],
                alignment: 64,
                target: None,
                data: (0..24).collect(),
            },
            open_ended: false,
        },
        Item {
            entry: EntrySpec {
                name: "code".into(),
                dtype: Dtype::RAW,
                shape: vec![10],
                alignment: 4,
                target: Some(0x2000_0000),
                data: (100..110).collect(),
            },
            open_ended: true,
        },
        Item {
            entry: EntrySpec {
                name: "empty".into(),
                dtype: Dtype::I16,
                shape: vec![0],
                alignment: 64,
                target: None,
                data: vec![],
            },
            open_ended: false,
        },
    ]
}

fn decl(item: &Item, open_ended: bool) -> EntryDecl<'_> {
    let e = &item.entry;
    if !open_ended {
        return e.decl();
    }
    let mut d = EntryDecl::open_ended(&e.name, e.dtype).with_alignment(e.alignment);
    d.target = e.target;
    d
}

const META: &[(&str, MetaValue<'static>)] =
    &[("layers", MetaValue::U64(2)), ("arch", MetaValue::String("toy"))];

fn builder_bytes(items: &[Item]) -> Vec<u8> {
    let mut b = Builder::new();
    for i in items {
        b.push(i.entry.decl().with_data(&i.entry.data)).unwrap();
    }
    for (k, v) in META {
        b.metadata(k, *v).unwrap();
    }
    b.finish().unwrap()
}

/// Declares `items` (open-ended where `open_ended` says so) and `META`, then writes each payload in
/// `chunk`-byte pieces: what both modes do before `finish`, which differs between them.
fn feed<S: embedded_io::Write, M: Mode>(
    w: &mut Writer<S, VecBookkeeping, M>,
    items: &[Item],
    chunk: usize,
    open_ended: impl Fn(&Item) -> bool,
) -> Result<(), WriteError<S::Error>> {
    for i in items {
        w.declare(decl(i, open_ended(i)))?;
    }
    for (k, v) in META {
        w.metadata(k, *v)?;
    }
    for i in items {
        for piece in i.entry.data.chunks(chunk.max(1)) {
            w.write(piece)?;
        }
        w.end_entry()?;
    }
    Ok(())
}

/// Writes `items` with the seekable writer, payloads cut into `chunk`-byte pieces.
fn seek_write(
    items: &[Item],
    sink: &mut MemSink,
    chunk: usize,
) -> Result<(), WriteError<embedded_io::ErrorKind>> {
    let mut w = SeekWriter::new(sink, VecBookkeeping);
    feed(&mut w, items, chunk, |i| i.open_ended)?;
    w.finish().map(drop)
}

/// Writes `items` with the one-pass writer (which needs every length up front), payloads cut into
/// `chunk`-byte pieces.
fn stream_write(
    items: &[Item],
    sink: &mut PipeSink,
    chunk: usize,
) -> Result<(), WriteError<embedded_io::ErrorKind>> {
    let mut w = StreamWriter::new(sink, VecBookkeeping);
    feed(&mut w, items, chunk, |_| false)?;
    w.finish().map(drop)
}

fn valid(bytes: &[u8]) -> bool {
    Container::parse(bytes).and_then(|c| c.verify()).is_ok()
}

#[test]
fn both_writers_produce_the_builders_bytes() {
    let items = sample();
    let expected = builder_bytes(&items);
    for chunk in [1, 3, 7, 64, 4096] {
        let mut sink = MemSink::default();
        seek_write(&items, &mut sink, chunk).unwrap();
        assert_eq!(sink.bytes, expected, "seekable, chunk {chunk}");
        assert_eq!(
            sink.seeks, 4,
            "one to learn where the container began, one back to patch the prefix, one to write the magic \
             last, one to return to its end"
        );
        let mut pipe = PipeSink::default();
        stream_write(&items, &mut pipe, chunk).unwrap();
        assert_eq!(pipe.0.bytes, expected, "one-pass, chunk {chunk}");
    }
    assert!(valid(&expected));
}

#[test]
fn an_io_failure_at_any_byte_is_an_error_and_leaves_no_valid_file() {
    let items = sample();
    let mut full = MemSink::default();
    seek_write(&items, &mut full, 5).unwrap();
    let total_seek = full.written;
    let mut pipe = PipeSink::default();
    stream_write(&items, &mut pipe, 5).unwrap();
    let total_stream = pipe.0.written;
    // Every byte natively; under Miri every 7th (and the last), which still crosses every section.
    let step = if cfg!(miri) { 7 } else { 1 };
    for k in (0..total_seek).step_by(step).chain([total_seek - 1]) {
        let mut sink = MemSink::failing_at(k);
        let err = seek_write(&items, &mut sink, 5).expect_err("the sink failed");
        assert!(matches!(err, WriteError::Io(_)), "k={k}: {err:?}");
        assert!(!valid(&sink.bytes), "seekable writer left a valid file after failing at byte {k}");
    }
    for k in (0..total_stream).step_by(step).chain([total_stream - 1]) {
        let mut sink = PipeSink(MemSink::failing_at(k));
        let err = stream_write(&items, &mut sink, 5).expect_err("the sink failed");
        assert!(matches!(err, WriteError::Io(_)), "k={k}: {err:?}");
        assert!(!valid(&sink.0.bytes), "one-pass writer left a valid file after failing at byte {k}");
    }
}

#[test]
fn after_an_error_the_writer_refuses_further_use() {
    let mut sink = MemSink::failing_at(10);
    let mut w = SeekWriter::new(&mut sink, VecBookkeeping);
    w.declare(EntryDecl::new("a", Dtype::U8, &[4])).unwrap();
    assert!(matches!(w.write(&[1, 2, 3, 4]), Err(WriteError::Io(_))));
    assert_eq!(w.write(&[1]), Err(WriteError::Poisoned));
    assert_eq!(w.end_entry(), Err(WriteError::Poisoned));
    assert_eq!(w.declare(EntryDecl::new("b", Dtype::U8, &[1])), Err(WriteError::Poisoned));
    assert!(matches!(w.finish(), Err(WriteError::Poisoned)));
}

fn seek_writer() -> SeekWriter<MemSink, VecBookkeeping> {
    SeekWriter::new(MemSink::default(), VecBookkeeping)
}

#[test]
fn a_payload_longer_than_its_shape_is_refused() {
    let mut w = seek_writer();
    w.declare(EntryDecl::new("a", Dtype::U16, &[2])).unwrap();
    w.write(&[1, 2, 3]).unwrap();
    assert_eq!(w.write(&[4, 5]), Err(WriteError::PayloadTooLong { entry: 0, expected: 4 }));
    assert_eq!(w.write(&[4]), Err(WriteError::Poisoned));
}

#[test]
fn a_payload_shorter_than_its_shape_is_refused() {
    let mut w = seek_writer();
    w.declare(EntryDecl::new("a", Dtype::U16, &[2])).unwrap();
    w.write(&[1, 2, 3]).unwrap();
    assert_eq!(w.end_entry(), Err(WriteError::PayloadTooShort { entry: 0, expected: 4, written: 3 }));
}

#[test]
fn duplicate_names_are_refused_before_any_payload_byte() {
    let mut pipe = PipeSink::default();
    let mut w = StreamWriter::new(&mut pipe, VecBookkeeping);
    w.declare(EntryDecl::new("same", Dtype::U8, &[1])).unwrap();
    w.declare(EntryDecl::new("other", Dtype::U8, &[1])).unwrap();
    w.declare(EntryDecl::new("same", Dtype::U8, &[1])).unwrap();
    let err = w.write(&[1]).unwrap_err();
    assert!(matches!(err, WriteError::Format(e) if e.rule() == tpack::Rule::DuplicateName), "{err:?}");
    drop(w);
    assert!(pipe.0.bytes.is_empty());
}

#[test]
fn duplicate_metadata_keys_are_refused() {
    let mut w = seek_writer();
    w.metadata("k", MetaValue::U64(1)).unwrap();
    w.metadata("k", MetaValue::U64(2)).unwrap();
    let err = w.finish().unwrap_err();
    assert!(matches!(err, WriteError::Format(e) if e.rule() == tpack::Rule::MetaDuplicateKey), "{err:?}");
}

#[test]
fn bad_declarations_name_their_rule() {
    use tpack::Rule::*;
    let cases: Vec<(EntryDecl<'static>, tpack::Rule)> = vec![
        (EntryDecl::new("a", Dtype::U8, &[1]).with_alignment(3), BadAlignment),
        (EntryDecl::new("a", Dtype::U8, &[1]).with_alignment(0), BadAlignment),
        (EntryDecl::new("a", Dtype::U8, &[1]).with_alignment(1 << 17), BadAlignment),
        (EntryDecl::new("", Dtype::U8, &[1]), NameLength),
        (EntryDecl::new("a", Dtype::U8, &[1; 9]), RankTooLarge),
        (EntryDecl::new("a", Dtype::F32, &[1 << 63, 2]), ShapeOverflow),
        (EntryDecl::new("a", Dtype::Q4_0, &[31]), BlockShape),
        (EntryDecl::new("a", Dtype::RAW, &[2, 2]), ByteShape),
        (EntryDecl::new("a", Dtype::from_code(99), &[1]), UnknownDtype),
        (EntryDecl::new("a", Dtype::U8, &[16]).with_target(u64::MAX - 4), TargetOverflow),
    ];
    for (d, rule) in cases {
        let mut w = seek_writer();
        let err = w.declare(d).unwrap_err();
        assert!(matches!(err, WriteError::Format(e) if e.rule() == rule), "{d:?}: {err:?}");
    }
    let mut w = seek_writer();
    assert_eq!(
        w.declare(EntryDecl::open_ended("a", Dtype::F32)),
        Err(WriteError::UnsizedNotBytes { entry: 0 })
    );
}

#[test]
fn an_open_ended_target_that_overflows_is_refused_at_its_end() {
    let mut w = seek_writer();
    w.declare(EntryDecl::open_ended("seg", Dtype::RAW).with_target(u64::MAX - 2)).unwrap();
    w.write(&[0; 8]).unwrap();
    let err = w.end_entry().unwrap_err();
    assert!(matches!(err, WriteError::Format(e) if e.rule() == tpack::Rule::TargetOverflow), "{err:?}");
}

#[test]
fn writing_past_the_last_entry_is_refused() {
    let mut w = seek_writer();
    w.declare(EntryDecl::new("a", Dtype::U8, &[1])).unwrap();
    w.write_entry(&[1]).unwrap();
    assert_eq!(w.write(&[2]), Err(WriteError::TooManyEntries));
}

#[test]
fn declaring_after_payloads_began_is_refused() {
    let mut w = seek_writer();
    w.declare(EntryDecl::new("a", Dtype::U8, &[2])).unwrap();
    w.write(&[1]).unwrap();
    assert_eq!(w.declare(EntryDecl::new("b", Dtype::U8, &[1])), Err(WriteError::AlreadyStarted));
}

#[test]
fn finishing_early_is_refused_and_leaves_no_valid_file() {
    let mut sink = MemSink::default();
    let mut w = SeekWriter::new(&mut sink, VecBookkeeping);
    w.declare(EntryDecl::new("a", Dtype::U8, &[1])).unwrap();
    w.declare(EntryDecl::new("b", Dtype::U8, &[1])).unwrap();
    w.write_entry(&[1]).unwrap();
    assert!(matches!(w.finish(), Err(WriteError::EntriesMissing { written: 1, declared: 2 })));
    assert!(!valid(&sink.bytes));
}

#[test]
fn the_one_pass_writer_needs_every_length() {
    // Refused when declared, naming the entry (not later, when payloads begin), and the writer is poisoned.
    let mut pipe = PipeSink::default();
    let mut w = StreamWriter::new(&mut pipe, VecBookkeeping);
    w.declare(EntryDecl::new("w", Dtype::U8, &[1])).unwrap();
    assert_eq!(
        w.declare(EntryDecl::open_ended("code", Dtype::RAW)),
        Err(WriteError::UnknownLength { entry: 1 })
    );
    assert_eq!(w.write(&[1]), Err(WriteError::Poisoned));
}

#[test]
fn fixed_capacity_storage_reports_when_full() {
    let mut w = SeekWriter::new(MemSink::default(), FixedBookkeeping::<2, 16>);
    w.declare(EntryDecl::new("a", Dtype::U8, &[1])).unwrap();
    w.declare(EntryDecl::new("b", Dtype::U8, &[1])).unwrap();
    assert_eq!(w.declare(EntryDecl::new("c", Dtype::U8, &[1])), Err(WriteError::BufferFull(Buffer::Entries)));

    let mut w = SeekWriter::new(MemSink::default(), FixedBookkeeping::<4, 8>);
    assert_eq!(
        w.declare(EntryDecl::new("a-long-name", Dtype::U8, &[1])),
        Err(WriteError::BufferFull(Buffer::Names))
    );

    let mut w = SeekWriter::new(MemSink::default(), FixedBookkeeping::<4, 24>);
    assert_eq!(
        w.metadata("key", MetaValue::String("a value too long")),
        Err(WriteError::BufferFull(Buffer::MetadataBytes))
    );
}

/// The bytes the seekable writer gives for `items` and `META` keeping its books in `bookkeeping`, each payload
/// written whole by `write_entry`.
fn seek_write_whole(items: &[Item], bookkeeping: impl Bookkeeping) -> Vec<u8> {
    let mut sink = MemSink::default();
    let mut w = SeekWriter::new(&mut sink, bookkeeping);
    for i in items {
        w.declare(decl(i, i.open_ended)).unwrap();
    }
    for (k, v) in META {
        w.metadata(k, *v).unwrap();
    }
    for i in items {
        w.write_entry(&i.entry.data).unwrap();
    }
    w.finish().unwrap();
    sink.bytes
}

#[test]
fn fixed_capacity_storage_writes_the_same_bytes() {
    let items = sample();
    let expected = builder_bytes(&items);
    assert_eq!(seek_write_whole(&items, FixedBookkeeping::<4, 64>), expected);
}

#[test]
fn slice_storage_writes_the_same_bytes_at_any_alignment() {
    let items = sample();
    let expected = builder_bytes(&items);
    let needed = SliceBookkeeping::storage_len(4, 64).unwrap();
    let mut storage = vec![0xa5u8; needed + 8];
    // Every start address modulo 4 (and 8): the words are aligned inside the slack.
    for skip in 0..8 {
        let bookkeeping = SliceBookkeeping::new(&mut storage[skip..skip + needed], 4, 64).unwrap();
        assert_eq!(seek_write_whole(&items, bookkeeping), expected, "storage at offset {skip}");
    }
}

#[test]
fn slice_storage_is_full_where_fixed_storage_is() {
    let mut storage = [0u8; 1024];
    let mut w = SeekWriter::new(MemSink::default(), SliceBookkeeping::new(&mut storage, 2, 16).unwrap());
    w.declare(EntryDecl::new("a", Dtype::U8, &[1])).unwrap();
    w.declare(EntryDecl::new("b", Dtype::U8, &[1])).unwrap();
    assert_eq!(w.declare(EntryDecl::new("c", Dtype::U8, &[1])), Err(WriteError::BufferFull(Buffer::Entries)));

    let mut storage = [0u8; 1024];
    let mut w = SeekWriter::new(MemSink::default(), SliceBookkeeping::new(&mut storage, 4, 8).unwrap());
    assert_eq!(
        w.declare(EntryDecl::new("a-long-name", Dtype::U8, &[1])),
        Err(WriteError::BufferFull(Buffer::Names))
    );

    let mut storage = [0u8; 1024];
    let mut w = SeekWriter::new(MemSink::default(), SliceBookkeeping::new(&mut storage, 4, 24).unwrap());
    assert_eq!(
        w.metadata("key", MetaValue::String("a value too long")),
        Err(WriteError::BufferFull(Buffer::MetadataBytes))
    );

    let mut storage = [0u8; 1024];
    let mut w = SeekWriter::new(MemSink::default(), SliceBookkeeping::new(&mut storage, 1, 64).unwrap());
    w.metadata("a", MetaValue::U64(1)).unwrap();
    assert_eq!(w.metadata("b", MetaValue::U64(2)), Err(WriteError::BufferFull(Buffer::MetadataRecords)));
}

#[test]
fn slice_storage_too_short_is_refused_with_the_length_needed() {
    let needed = SliceBookkeeping::storage_len(3, 100).unwrap();
    let mut storage = vec![0u8; needed];
    assert_eq!(
        SliceBookkeeping::new(&mut storage[..needed - 1], 3, 100).err(),
        Some(ShortStorage { needed: Some(needed), len: needed - 1 })
    );
    assert!(SliceBookkeeping::new(&mut storage, 3, 100).is_ok());
    assert_eq!(SliceBookkeeping::storage_len(usize::MAX, 1), None);
    assert_eq!(
        SliceBookkeeping::new(&mut storage, 1, usize::MAX).err(),
        Some(ShortStorage { needed: None, len: needed })
    );
    // Zero capacity: nothing can be declared, but an empty container can be written.
    let mut none = [0u8; 3];
    let mut out = MemSink::default();
    let w = SeekWriter::new(&mut out, SliceBookkeeping::new(&mut none, 0, 0).unwrap());
    w.finish().unwrap();
    assert_eq!(Container::parse(&out.bytes).unwrap().entries().len(), 0);
}

fn item_strategy() -> impl Strategy<Value = Item> {
    let dtypes = vec![Dtype::U8, Dtype::F32, Dtype::I64, Dtype::Q4_0, Dtype::RAW, Dtype::BF16];
    (
        "[a-z]{1,6}",
        proptest::sample::select(dtypes),
        proptest::collection::vec(0u64..4, 1..3),
        0u32..8,
        proptest::option::of(0u64..1 << 32),
        any::<bool>(),
        any::<u8>(),
    )
        .prop_map(|(name, dtype, mut shape, align_log2, target, open_ended, seed)| {
            let count: u64 = match dtype {
                Dtype::Q4_0 => {
                    *shape.last_mut().unwrap() *= 32;
                    shape.iter().product::<u64>() / 32 * 18
                }
                Dtype::RAW => {
                    shape.truncate(1);
                    shape[0]
                }
                _ => {
                    shape.iter().product::<u64>()
                        * dtype.packing().map_or(1, |s| match s {
                            tpack::format::Packing::Element(n) => n,
                            _ => 1,
                        })
                }
            };
            let data = (0..count as usize).map(|i| (i as u8).wrapping_add(seed)).collect();
            Item {
                entry: EntrySpec { name, dtype, shape, alignment: 1 << align_log2, target, data },
                open_ended: open_ended && dtype == Dtype::RAW,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 128 }))]

    #[test]
    fn any_chunking_and_either_writer_gives_the_same_bytes(
        items in proptest::collection::vec(item_strategy(), 0..6),
        chunk in 1usize..50,
    ) {
        let mut items = items;
        for (i, item) in items.iter_mut().enumerate() {
            item.entry.name = format!("{}{i}", item.entry.name);
        }
        let expected = builder_bytes(&items);
        let mut sink = MemSink::default();
        seek_write(&items, &mut sink, chunk).unwrap();
        prop_assert_eq!(&sink.bytes, &expected);
        let mut pipe = PipeSink::default();
        stream_write(&items, &mut pipe, chunk).unwrap();
        prop_assert_eq!(&pipe.0.bytes, &expected);
        let c = Container::parse(&expected).unwrap();
        c.verify().unwrap();
        for (e, i) in c.entries().zip(&items) {
            prop_assert_eq!(e.payload(), &i.entry.data[..]);
            let shape = e.shape();
            prop_assert_eq!(shape.dims(), &i.entry.shape[..]);
            prop_assert_eq!(e.target(), i.entry.target);
        }
    }
}

/// Fuzz regression (`writer` target): a seekable writer of an empty container whose sink failed at byte 315,
/// inside the last header bytes — which equal the zero placeholder — used to leave a file that parsed as valid
/// although `finish` had failed. The magic is now written last.
#[test]
fn regression_failure_in_the_last_header_bytes_leaves_no_valid_file() {
    let mut full = MemSink::default();
    SeekWriter::new(&mut full, VecBookkeeping).finish().unwrap();
    for k in 0..full.written {
        let mut sink = MemSink::failing_at(k);
        assert!(SeekWriter::new(&mut sink, VecBookkeeping).finish().is_err());
        assert!(!valid(&sink.bytes), "failing at byte {k} left a valid file");
    }
}

/// Regression: the seekable writer used to write the prefix and back-patch at absolute positions 0 and 8, so a
/// container written after a preamble overwrote it and was itself invalid. It now writes where the sink stood.
#[test]
fn the_seekable_writer_places_the_container_where_the_sink_stood() {
    let preamble: Vec<u8> = (0..29u8).map(|i| i.wrapping_mul(37) | 1).collect();
    let items = sample();
    let expected = builder_bytes(&items);
    for chunk in [1, 4096] {
        let mut sink = MemSink::default();
        sink.write_all(&preamble).unwrap();
        seek_write(&items, &mut sink, chunk).unwrap();
        assert_eq!(&sink.bytes[..29], &preamble[..], "chunk {chunk}: the preamble is left as it was");
        assert_eq!(
            &sink.bytes[29..],
            &expected[..],
            "chunk {chunk}: the container follows it, byte for byte"
        );
        assert_eq!(sink.position, sink.bytes.len(), "chunk {chunk}: the sink is left after the container");
        let c = Container::parse(&sink.bytes[29..]).unwrap();
        c.verify().unwrap();
    }
    // The one-pass writer never seeks; it too writes from where the sink stands.
    let mut pipe = PipeSink::default();
    pipe.write_all(&preamble).unwrap();
    stream_write(&items, &mut pipe, 7).unwrap();
    assert_eq!(&pipe.0.bytes[29..], &expected[..]);
}

/// A sink moved behind the seekable writer's back is reported, not written over.
#[test]
fn a_sink_moved_behind_the_writers_back_is_reported() {
    let mut sink = ShortPosition::default();
    let mut w = SeekWriter::new(&mut sink, VecBookkeeping);
    w.declare(EntryDecl::new("a", Dtype::U8, &[2])).unwrap();
    w.write_entry(&[1, 2]).unwrap();
    assert!(matches!(w.finish(), Err(WriteError::SinkPosition { position: 0, .. })));
    assert!(!valid(&sink.0.bytes), "nothing that parses is left");
}

/// A seekable sink whose position always reads 0: one moved behind the writer's back.
#[derive(Default)]
struct ShortPosition(MemSink);

impl embedded_io::ErrorType for ShortPosition {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Write for ShortPosition {
    fn write(&mut self, data: &[u8]) -> Result<usize, Self::Error> {
        self.0.write(data)
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl embedded_io::Seek for ShortPosition {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.0.seek(pos).map(|_| 0)
    }
}

/// Regression: a container too large for 64-bit offsets used to be reported as the reader's rule R10
/// (`SectionBounds`); the writer has its own error for it.
#[test]
fn a_container_past_64_bit_offsets_is_the_writers_own_error() {
    let mut w = StreamWriter::new(PipeSink::default(), VecBookkeeping);
    w.declare(EntryDecl::new("huge", Dtype::U8, &[u64::MAX - 8])).unwrap();
    // Placing the payload after the prefix overflows: refused before a byte is written.
    assert_eq!(w.write(&[0]), Err(WriteError::TooLarge));
}

/// Values read from a container are written to another as they are, string arrays and unknown types included
/// (which the writers, writing format 1.0, refuse with R46).
#[test]
fn metadata_read_back_writes_again_and_unknown_types_are_refused() {
    let mut w = seek_writer();
    assert_eq!(
        w.metadata("k", tpack::MetaValue::Unknown { code: 77, bytes: b"x" }),
        Err(WriteError::Format(tpack::Error::MetaUnknownType { record: 0, code: 77 }))
    );
}

/// Native numbers and strings given item by item are stored exactly as the same values as little-endian
/// slices, on any host, and `finish_with_len` gives the container's length in either mode.
#[test]
fn native_arrays_are_stored_as_their_little_endian_values() {
    use tpack::write::{NativeArray, StringItems};
    use tpack::zerocopy::little_endian::{F32, I64, U16};
    let names = ["up", "", "d\u{f6}wn"];
    let each = |emit: &mut dyn FnMut(&str) -> bool| names.iter().all(|s| emit(s));
    let declare = |w: &mut dyn FnMut(&str, NativeArray<'_>, MetaValue<'_>)| {
        let f32s = [F32::new(0.5), F32::new(-2.0)];
        let u16s = [U16::new(1), U16::new(0x1234)];
        let i64s = [I64::new(i64::MIN)];
        w("f32", NativeArray::F32(&[0.5, -2.0]), MetaValue::F32Array(&f32s));
        w("u16", NativeArray::U16(&[1, 0x1234]), MetaValue::U16Array(&u16s));
        w("i64", NativeArray::I64(&[i64::MIN]), MetaValue::I64Array(&i64s));
        w(
            "s",
            NativeArray::Strings(StringItems::new(&each)),
            MetaValue::StringArray(tpack::StringArray::new(&names)),
        );
    };
    let mut outputs = Vec::new();
    for native in [true, false] {
        let mut sink = MemSink::default();
        let mut w = SeekWriter::new(&mut sink, VecBookkeeping);
        declare(&mut |key, n, v| {
            if native {
                w.metadata_native(key, n).unwrap();
            } else {
                w.metadata(key, v).unwrap();
            }
        });
        let (_, len) = w.finish_with_len().unwrap();
        assert_eq!(len, sink.bytes.len() as u64);
        outputs.push(sink.bytes);
    }
    assert_eq!(outputs[0], outputs[1]);
    let c = Container::parse(&outputs[0]).unwrap();
    assert_eq!(c.metadata().get("u16"), Some(MetaValue::U16Array(&[U16::new(1), U16::new(0x1234)])));
    let mut pipe = PipeSink::default();
    let mut w = StreamWriter::new(&mut pipe, VecBookkeeping);
    w.metadata_native("s", NativeArray::Strings(StringItems::new(&each))).unwrap();
    let (_, len) = w.finish_with_len().unwrap();
    assert_eq!(len, pipe.0.bytes.len() as u64);
}
