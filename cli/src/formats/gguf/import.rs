//! GGUF → tpack: every tensor with its bytes, every metadata value with its exact type, and what the GGUF
//! file needs to be rebuilt byte for byte (its key order and version, under the reserved keys).

use std::borrow::Cow;
use std::path::Path;

use tpack::format::{Packing, DEFAULT_ALIGNMENT, MAX_ALIGNMENT};
use tpack::{OwnedMetaValue, UnwritableValue};
use tpack_gguf::{GgufArray, GgufValue, MAX_ARRAY_DEPTH};

use super::encode::{info_len, Header, TensorInfo};
use super::{
    from_ggml, layout, Gguf, BIG_ENDIAN, KEY_ORDER, RESERVED_KEYS, RESERVED_PREFIX, UNPADDED, VERSION,
};
use crate::error::{CliError, Result};
use crate::formats::tpack::{OutEntry, Payload};
use crate::formats::{Format, Import, Model};

/// A GGUF metadata value as tpack metadata of the same type: `uint8` → `u8`, `float32` → `f32` (its bits
/// kept), a `bool` array → `bool[]`, an array of arrays → `array[]` (items converted the same way).
///
/// # Errors
/// What tpack cannot hold: a string of 4 GiB or more, arrays nested deeper than tpack holds (the parser
/// refuses those first: `tpack_gguf::MAX_ARRAY_DEPTH`).
fn metadata_value(v: &GgufValue<'_>) -> std::result::Result<OwnedMetaValue, UnwritableValue> {
    Ok(match v {
        GgufValue::U8(x) => OwnedMetaValue::from(*x),
        GgufValue::I8(x) => OwnedMetaValue::from(*x),
        GgufValue::U16(x) => OwnedMetaValue::from(*x),
        GgufValue::I16(x) => OwnedMetaValue::from(*x),
        GgufValue::U32(x) => OwnedMetaValue::from(*x),
        GgufValue::I32(x) => OwnedMetaValue::from(*x),
        GgufValue::F32(x) => OwnedMetaValue::from(*x),
        GgufValue::U64(x) => OwnedMetaValue::from(*x),
        GgufValue::I64(x) => OwnedMetaValue::from(*x),
        GgufValue::F64(x) => OwnedMetaValue::from(*x),
        GgufValue::Bool(x) => OwnedMetaValue::from(*x),
        GgufValue::String(s) => OwnedMetaValue::from(*s),
        GgufValue::Array(a) => array_value(a)?,
    })
}

/// The elements of variant `$variant` among `$items` (all of them: the parser checked that every element
/// of an array has its element type).
macro_rules! elements {
    ($items:expr, $variant:ident) => {
        $items.filter_map(|v| match v {
            GgufValue::$variant(x) => Some(x),
            _ => None,
        })
    };
}

/// A GGUF array as the tpack array of its element type; see [`metadata_value`].
fn array_value(a: &GgufArray<'_>) -> std::result::Result<OwnedMetaValue, UnwritableValue> {
    let items = a.iter();
    Ok(match a.element_type_name() {
        "uint8" => OwnedMetaValue::u8_array(elements!(items, U8).collect::<Vec<_>>()),
        "int8" => OwnedMetaValue::from(elements!(items, I8).collect::<Vec<_>>()),
        "uint16" => OwnedMetaValue::from(elements!(items, U16).collect::<Vec<_>>()),
        "int16" => OwnedMetaValue::from(elements!(items, I16).collect::<Vec<_>>()),
        "uint32" => OwnedMetaValue::from(elements!(items, U32).collect::<Vec<_>>()),
        "int32" => OwnedMetaValue::from(elements!(items, I32).collect::<Vec<_>>()),
        "float32" => OwnedMetaValue::from(elements!(items, F32).collect::<Vec<_>>()),
        "uint64" => OwnedMetaValue::from(elements!(items, U64).collect::<Vec<_>>()),
        "int64" => OwnedMetaValue::from(elements!(items, I64).collect::<Vec<_>>()),
        "float64" => OwnedMetaValue::from(elements!(items, F64).collect::<Vec<_>>()),
        "bool" => OwnedMetaValue::from(elements!(items, Bool).collect::<Vec<_>>()),
        "string" => OwnedMetaValue::string_array(elements!(items, String))?,
        // Depth is bounded by the parser (tpack_gguf::MAX_ARRAY_DEPTH), so this recursion is too.
        _ => OwnedMetaValue::array_array(
            elements!(items, Array)
                .map(|inner| array_value(&inner))
                .collect::<std::result::Result<Vec<_>, _>>()?,
        )?,
    })
}

impl Import for Gguf {
    fn format(&self) -> Format {
        Format::Gguf
    }

    /// Tensors in file order with shapes reversed (GGUF lists dimensions innermost first, tpack outermost
    /// first), at the larger of the file's alignment and tpack's default (a file asking for more than
    /// tpack's maximum is refused); a big-endian file's element tensors are byte-swapped on the way through
    /// and its quantized ones refused. Metadata with its exact types, plus [`KEY_ORDER`] and [`VERSION`] (and
    /// [`BIG_ENDIAN`] for a big-endian file).
    fn read<'a>(&self, input: &Path, bytes: &'a [u8]) -> Result<Model<'a>> {
        let file = parse(input, bytes)?;
        let mut metadata = Vec::with_capacity(file.metadata.len().saturating_add(2));
        for (key, value) in &file.metadata {
            let value = metadata_value(value).map_err(|e| {
                CliError::input(format!(
                    "{}: metadata {key:?} cannot be stored in tpack: {e}",
                    input.display()
                ))
            })?;
            metadata.push(((*key).to_owned(), value));
        }
        let order = OwnedMetaValue::string_array(file.metadata.iter().map(|(k, _)| *k)).map_err(|e| {
            CliError::input(format!("{}: its key order cannot be recorded: {e}", input.display()))
        })?;
        metadata.push((KEY_ORDER.to_owned(), order));
        metadata.push((VERSION.to_owned(), OwnedMetaValue::from(file.version)));
        if file.big_endian {
            metadata.push((BIG_ENDIAN.to_owned(), OwnedMetaValue::from(true)));
        }
        // A file with no tensors may end before its data section (see `UNPADDED`); whether it ends right at
        // its tensor infos is checked with the rest of its layout (`unreproducible`).
        let unpadded = file.tensors.is_empty() && (bytes.len() as u64) < file.data_offset;
        if unpadded {
            metadata.push((UNPADDED.to_owned(), OwnedMetaValue::from(true)));
        }
        let entries = entries(input, &file)?;
        let notes = match unreproducible(&file, bytes, unpadded) {
            Some(why) => vec![format!(
                "converting this tpack file back to GGUF will not give {} byte for byte: {why}; the GGUF written \
                 back holds the same tensors and metadata, laid out as gguf-py and llama.cpp lay out their files",
                input.display()
            )],
            None => Vec::new(),
        };
        Ok(Model { compat_flags: 0, entries, metadata, notes })
    }
}

/// Parses `bytes` (the content of `input`) as a GGUF file whose metadata keys tpack can store: none under
/// [`RESERVED_PREFIX`]. Metadata values stay views of `bytes`.
///
/// # Errors
/// [`crate::Kind::Input`]: not a valid GGUF file, or a key tpack reserves.
pub(crate) fn parse<'a>(input: &Path, bytes: &'a [u8]) -> Result<tpack_gguf::Gguf<'a>> {
    let file = tpack_gguf::parse(bytes).map_err(|e| match e {
        // A valid GGUF file (the format sets no depth), but beyond what a tpack value holds.
        tpack_gguf::GgufError::ArrayTooDeep { key } => CliError::input(format!(
            "{}: metadata {key:?} nests arrays more than {MAX_ARRAY_DEPTH} levels deep, and a tpack value holds at \
             most {} levels of array[] around arrays of values ({MAX_ARRAY_DEPTH} in all; spec §7.1), so it cannot \
             be converted; flatten that value in the GGUF file (ggml itself reads no nested arrays)",
            input.display(),
            ::tpack::format::MAX_ARRAY_DEPTH
        )),
        other => CliError::input(format!("{} is not a valid GGUF file: {other}", input.display())),
    })?;
    if let Some((key, _)) = file.metadata.iter().find(|(key, _)| key.starts_with(RESERVED_PREFIX)) {
        return Err(CliError::input(format!(
            "{}: metadata key {key:?} is in the namespace {RESERVED_PREFIX:?}, which tpack reserves for \
             the GGUF file's own structure ({RESERVED_KEYS}), so it could not be told apart; \
             rename the key in the GGUF file and convert that",
            input.display()
        )));
    }
    Ok(file)
}

/// The entries `convert` writes for the tensors of `file` (read from `input`): in file order with shapes
/// reversed (GGUF lists dimensions innermost first, tpack outermost first), at the larger of the file's
/// alignment and tpack's default, a big-endian file's element tensors byte-swapped on the way through.
///
/// # Errors
/// [`crate::Kind::Input`]: an alignment larger than tpack's maximum, or a quantized tensor in a big-endian
/// file.
pub(crate) fn entries<'a>(input: &Path, file: &tpack_gguf::Gguf<'a>) -> Result<Vec<OutEntry<'a>>> {
    // A larger alignment cannot be kept, and silently using a smaller one would contradict the file's own
    // `general.alignment`, which is kept as metadata: refused. A smaller one is raised to tpack's default
    // (both are powers of two, so every payload stays aligned as the file asks).
    let alignment = u32::try_from(file.alignment).ok().filter(|&a| a <= MAX_ALIGNMENT).ok_or_else(|| {
            CliError::input(format!(
                "{}: general.alignment is {}, more than the largest payload alignment tpack can store \
                 ({MAX_ALIGNMENT}), so its layout cannot be kept; rewrite the GGUF file with an alignment of at \
                 most {MAX_ALIGNMENT} (gguf-py: GGUFWriter.add_custom_alignment) and convert that",
                input.display(),
                file.alignment
            ))
        })?;
    let alignment = alignment.max(DEFAULT_ALIGNMENT);
    let mut entries = Vec::with_capacity(file.tensors.len());
    for t in &file.tensors {
        let dtype = from_ggml(t.ggml_type);
        let payload = if file.big_endian {
            // tpack is little-endian: each element is byte-swapped on the way through. A block type has no
            // defined big-endian layout (gguf-py's writer swaps element types only and leaves block scales
            // little-endian), so its bytes cannot be trusted either way.
            match dtype.packing() {
                    Some(Packing::Element(width)) => Payload::Swapped { bytes: t.data, width: width as usize },
                    _ => {
                        return Err(CliError::input(format!(
                            "{}: tensor {:?} is {} in a big-endian GGUF file; the byte order of quantized blocks \
                             in big-endian GGUF is not defined (gguf-py leaves their scales little-endian), so \
                             it is refused",
                            input.display(),
                            t.name,
                            t.ggml_type.name()
                        )))
                    }
                }
        } else {
            Payload::Bytes(t.data)
        };
        entries.push(OutEntry {
            name: Cow::Borrowed(t.name),
            dtype,
            shape: t.dims.iter().rev().copied().collect(),
            alignment,
            target: None,
            length: t.data.len() as u64,
            payload,
        });
    }
    Ok(entries)
}

/// Why the GGUF written back from this file's conversion would differ from `bytes` (the file), if it would:
/// the header tpack would write is not this one, or the tensor data is not laid out as GGUF writers lay it
/// out ([`layout`]), with zero padding. An `unpadded` file (no tensors, recorded as [`UNPADDED`]) must end
/// right after its tensor infos.
fn unreproducible(file: &tpack_gguf::Gguf<'_>, bytes: &[u8], unpadded: bool) -> Option<String> {
    let sizes: Vec<u64> = file.tensors.iter().map(|t| t.data.len() as u64).collect();
    let mut header =
        Header::new(file.version, sizes.len() as u64, file.metadata.len() as u64, file.big_endian);
    for (key, value) in &file.metadata {
        // Every GGUF value has a tpack form that encodes back to the same bytes; a failure here is a
        // difference.
        if metadata_value(value).map_or(true, |v| header.pair(key, &v.as_value()).is_err()) {
            return Some(format!("its metadata {key:?} cannot be written back as it is"));
        }
    }
    let Some((data_start, offsets, end)) =
        layout(header.len().saturating_add(info_bytes(file)), &sizes, file.alignment)
    else {
        return Some("its layout is too large to compute".to_owned());
    };
    for (t, offset) in file.tensors.iter().zip(&offsets) {
        header.tensor(&TensorInfo {
            name: t.name,
            ne: t.dims.clone(),
            ggml_type: t.ggml_type,
            offset: *offset,
        });
    }
    let header = header.into_bytes();
    let end = if unpadded { header.len() as u64 } else { end };
    if data_start != file.data_offset || bytes.get(..header.len()) != Some(header.as_slice()) {
        return Some(
            "its tensor data is not in tensor-info order, each tensor at the next multiple of the alignment"
                .to_owned(),
        );
    }
    if (bytes.len() as u64) != end {
        return Some(format!(
            "it is {} bytes long, where its tensors (or, with none, its tensor infos) end with their padding at \
             byte {end}",
            bytes.len()
        ));
    }
    // Every byte outside the header and the tensors is padding: zero.
    let mut at = header.len();
    for t in &file.tensors {
        let start = usize::try_from(t.offset).unwrap_or(usize::MAX);
        if bytes.get(at..start).is_none_or(|pad| pad.iter().any(|&b| b != 0)) {
            return Some(format!("the padding before tensor {:?} is not zero", t.name));
        }
        at = start.saturating_add(t.data.len());
    }
    if bytes.get(at..).is_none_or(|pad| pad.iter().any(|&b| b != 0)) {
        return Some("the padding after the last tensor is not zero".to_owned());
    }
    None
}

/// The bytes of the tensor infos of `file`.
fn info_bytes(file: &tpack_gguf::Gguf<'_>) -> u64 {
    file.tensors.iter().map(|t| info_len(t.name, t.dims.len())).fold(0u64, u64::saturating_add)
}
