//! `tpack convert`: safetensors → tpack, GGUF → tpack and tpack → safetensors, tensor bytes unchanged.
//!
//! Inputs are validated completely before anything is written: safetensors by the `safetensors` crate (header
//! size limit, JSON, dtypes, contiguous offsets that cover the data exactly), GGUF by [`crate::gguf`], tpack
//! by the full verification of `tpack verify`.

use std::collections::HashMap;
use std::path::Path;

use safetensors::tensor::Dtype as StDtype;
use safetensors::SafeTensors;
use tpack::format::{Storage, DEFAULT_ALIGNMENT};
use tpack::{Dtype, MetaValue};

use crate::describe::dtype_name;
use crate::error::{CliError, Result};
use crate::fsutil::{check_overwrite, size_short};
use crate::gguf::{self, GgmlType, GgufArray, GgufValue};
use crate::manifest::OwnedValue;
use crate::pack::{write_container, OutEntry, Payload};

/// A file format, told by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A tpack container.
    Tpack,
    /// A safetensors file.
    Safetensors,
    /// A GGUF file.
    Gguf,
    /// None of these.
    Unknown,
}

impl Format {
    /// The format's usual name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Format::Tpack => "tpack",
            Format::Safetensors => "safetensors",
            Format::Gguf => "GGUF",
            Format::Unknown => "unknown",
        }
    }

    /// The format an output path's extension asks for.
    #[must_use]
    pub fn of_extension(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("tpack") => Format::Tpack,
            Some("safetensors") => Format::Safetensors,
            Some("gguf") => Format::Gguf,
            _ => Format::Unknown,
        }
    }
}

/// Tells the format from the first bytes: the tpack magic, `GGUF`, or a safetensors header (a little-endian
/// u64 length followed by `{`).
#[must_use]
pub fn sniff(bytes: &[u8]) -> Format {
    if bytes.starts_with(&tpack::format::MAGIC) {
        Format::Tpack
    } else if bytes.starts_with(b"GGUF") {
        Format::Gguf
    } else if bytes.len() > 8 && bytes[8] == b'{' {
        Format::Safetensors
    } else {
        Format::Unknown
    }
}

/// Runs `tpack convert IN OUT`; `to` overrides the output format told by OUT's extension.
///
/// # Errors
/// An input that is invalid or cannot be represented in the output format ([`crate::Kind::Input`] or
/// [`crate::Kind::Invalid`] for a bad tpack input), an existing output without `force`, I/O failures.
pub fn run(input: &Path, output: &Path, to: Option<Format>, force: bool, quiet: bool) -> Result<String> {
    let map = crate::fsutil::map(input)?;
    let from = sniff(&map);
    let to = to.unwrap_or_else(|| Format::of_extension(output));
    if to == Format::Unknown {
        return Err(CliError::input(format!(
            "cannot tell the output format from {}; name it .tpack or .safetensors, or pass --to",
            output.display()
        )));
    }
    check_overwrite(output, force)?;
    match (from, to) {
        (Format::Safetensors, Format::Tpack) => safetensors_to_tpack(input, &map, output, quiet),
        (Format::Gguf, Format::Tpack) => gguf_to_tpack(input, &map, output, quiet),
        (Format::Tpack, Format::Safetensors) => tpack_to_safetensors(input, &map, output, quiet),
        (Format::Unknown, _) => Err(CliError::input(format!(
            "{} is not a tpack, safetensors or GGUF file (its first bytes match none of them)",
            input.display()
        ))),
        (from, to) => Err(CliError::input(format!(
            "cannot convert {} from {} to {}: supported are safetensors → tpack, GGUF → tpack and tpack → safetensors",
            input.display(),
            from.name(),
            to.name()
        ))),
    }
}

/// The tpack dtype of a safetensors dtype, if tpack 1.0 has it.
#[must_use]
pub fn from_safetensors(d: StDtype) -> Option<Dtype> {
    Some(match d {
        StDtype::BOOL => Dtype::Bool,
        StDtype::U8 => Dtype::U8,
        StDtype::I8 => Dtype::I8,
        StDtype::F8_E5M2 => Dtype::F8E5M2,
        StDtype::F8_E4M3 => Dtype::F8E4M3,
        StDtype::I16 => Dtype::I16,
        StDtype::U16 => Dtype::U16,
        StDtype::F16 => Dtype::F16,
        StDtype::BF16 => Dtype::BF16,
        StDtype::I32 => Dtype::I32,
        StDtype::U32 => Dtype::U32,
        StDtype::F32 => Dtype::F32,
        StDtype::F64 => Dtype::F64,
        StDtype::I64 => Dtype::I64,
        StDtype::U64 => Dtype::U64,
        _ => return None,
    })
}

/// The safetensors dtype of a tpack dtype, if safetensors has it.
#[must_use]
pub fn to_safetensors(d: Dtype) -> Option<StDtype> {
    Some(match d {
        Dtype::Bool => StDtype::BOOL,
        Dtype::U8 => StDtype::U8,
        Dtype::I8 => StDtype::I8,
        Dtype::F8E5M2 => StDtype::F8_E5M2,
        Dtype::F8E4M3 => StDtype::F8_E4M3,
        Dtype::I16 => StDtype::I16,
        Dtype::U16 => StDtype::U16,
        Dtype::F16 => StDtype::F16,
        Dtype::BF16 => StDtype::BF16,
        Dtype::I32 => StDtype::I32,
        Dtype::U32 => StDtype::U32,
        Dtype::F32 => StDtype::F32,
        Dtype::F64 => StDtype::F64,
        Dtype::I64 => StDtype::I64,
        Dtype::U64 => StDtype::U64,
        _ => return None,
    })
}

fn to_u64_dims(shape: &[usize]) -> Vec<u64> {
    shape.iter().map(|&d| d as u64).collect()
}

fn done(input: &Path, output: &Path, entries: usize, metadata: usize) -> String {
    let bytes = std::fs::metadata(output).map(|m| m.len()).unwrap_or(0);
    format!(
        "converted {} ({entries} tensors, {metadata} metadata values) to {} ({})\n",
        input.display(),
        output.display(),
        size_short(bytes)
    )
}

fn safetensors_to_tpack(input: &Path, bytes: &[u8], output: &Path, quiet: bool) -> Result<String> {
    // One parse of the header: `read_metadata` validates everything `deserialize` does (offsets contiguous and
    // covering the data exactly, sizes matching dtypes and shapes) and keeps the file order.
    let invalid = |e: safetensors::SafeTensorError| {
        CliError::input(format!("{} is not a valid safetensors file: {e}", input.display()))
    };
    let (header_len, header) = SafeTensors::read_metadata(bytes).map_err(invalid)?;
    // The crate accepted the header, so these bytes exist and are UTF-8; a repeated key is still ambiguous.
    let text = bytes.get(8..8 + header_len).and_then(|h| std::str::from_utf8(h).ok()).unwrap_or_default();
    crate::json_strict::check_no_duplicate_keys(text).map_err(|why| {
        CliError::input(format!(
            "{} is not a valid safetensors file: its header is ambiguous: {why}",
            input.display()
        ))
    })?;
    let data = bytes.get(8 + header_len..).unwrap_or_default();
    // Tensors in file order, as the producer laid them out.
    let names = header.offset_keys();
    let mut views: Vec<(String, StDtype, &[u8], Vec<u64>)> = Vec::with_capacity(names.len());
    for name in names {
        let info = header.info(&name);
        let payload = info.and_then(|i| data.get(i.data_offsets.0..i.data_offsets.1));
        let (Some(info), Some(payload)) = (info, payload) else {
            return Err(CliError::input(format!(
                "{}: tensor {name:?} lies outside the file",
                input.display()
            )));
        };
        let dims = to_u64_dims(&info.shape);
        views.push((name, info.dtype, payload, dims));
    }
    let mut entries = Vec::with_capacity(views.len());
    for (name, st_dtype, payload, dims) in &views {
        let dtype = from_safetensors(*st_dtype).ok_or_else(|| {
            CliError::input(format!(
                "{}: tensor {name:?} has dtype {st_dtype:?}, which tpack 1.0 cannot store",
                input.display(),
            ))
        })?;
        entries.push(OutEntry {
            name,
            dtype,
            shape: dims,
            alignment: DEFAULT_ALIGNMENT,
            target: None,
            length: payload.len() as u64,
            payload: Payload::Bytes(payload),
        });
    }
    let mut metadata: Vec<(String, OwnedValue)> = header
        .metadata()
        .iter()
        .flat_map(HashMap::iter)
        .map(|(k, v)| (k.clone(), OwnedValue::String(v.clone())))
        .collect();
    metadata.sort_by(|a, b| a.0.cmp(&b.0));
    write_container(output, 0, &entries, &metadata, quiet)?;
    Ok(done(input, output, entries.len(), metadata.len()))
}

/// The tpack dtype of a GGML tensor type, if tpack 1.0 stores it with the same bytes.
#[must_use]
pub fn from_ggml(t: GgmlType) -> Option<Dtype> {
    Some(match t {
        GgmlType::F32 => Dtype::F32,
        GgmlType::F16 => Dtype::F16,
        GgmlType::BF16 => Dtype::BF16,
        GgmlType::F64 => Dtype::F64,
        GgmlType::Q8_0 => Dtype::Q8_0,
        GgmlType::Q4_0 => Dtype::Q4_0,
        GgmlType::I8 => Dtype::I8,
        GgmlType::I16 => Dtype::I16,
        GgmlType::I32 => Dtype::I32,
        GgmlType::I64 => Dtype::I64,
        _ => return None,
    })
}

/// A GGUF metadata value as tpack metadata. Integers widen to u64/i64 and f32 to f64 (exactly); a bool array
/// becomes a u64[] of 0 and 1. Nested arrays have no tpack form.
fn gguf_value(v: &GgufValue<'_>) -> std::result::Result<OwnedValue, &'static str> {
    Ok(match v {
        GgufValue::U8(x) => OwnedValue::U64(u64::from(*x)),
        GgufValue::U16(x) => OwnedValue::U64(u64::from(*x)),
        GgufValue::U32(x) => OwnedValue::U64(u64::from(*x)),
        GgufValue::U64(x) => OwnedValue::U64(*x),
        GgufValue::I8(x) => OwnedValue::I64(i64::from(*x)),
        GgufValue::I16(x) => OwnedValue::I64(i64::from(*x)),
        GgufValue::I32(x) => OwnedValue::I64(i64::from(*x)),
        GgufValue::I64(x) => OwnedValue::I64(*x),
        GgufValue::F32(x) => OwnedValue::F64(f64::from(*x)),
        GgufValue::F64(x) => OwnedValue::F64(*x),
        GgufValue::Bool(x) => OwnedValue::Bool(*x),
        GgufValue::String(s) => OwnedValue::String((*s).to_owned()),
        GgufValue::Array(a) => match a {
            GgufArray::U8(x) => OwnedValue::U64Array(x.iter().map(|&v| u64::from(v)).collect()),
            GgufArray::U16(x) => OwnedValue::U64Array(x.iter().map(|&v| u64::from(v)).collect()),
            GgufArray::U32(x) => OwnedValue::U64Array(x.iter().map(|&v| u64::from(v)).collect()),
            GgufArray::U64(x) => OwnedValue::U64Array(x.clone()),
            GgufArray::I8(x) => OwnedValue::I64Array(x.iter().map(|&v| i64::from(v)).collect()),
            GgufArray::I16(x) => OwnedValue::I64Array(x.iter().map(|&v| i64::from(v)).collect()),
            GgufArray::I32(x) => OwnedValue::I64Array(x.iter().map(|&v| i64::from(v)).collect()),
            GgufArray::I64(x) => OwnedValue::I64Array(x.clone()),
            GgufArray::F32(x) => OwnedValue::F64Array(x.iter().map(|&v| f64::from(v)).collect()),
            GgufArray::F64(x) => OwnedValue::F64Array(x.clone()),
            GgufArray::Bool(x) => OwnedValue::U64Array(x.iter().map(|&v| u64::from(v)).collect()),
            GgufArray::String(x) => OwnedValue::StringArray(x.iter().map(|s| (*s).to_owned()).collect()),
            GgufArray::Array(_) => return Err("an array of arrays, which tpack metadata cannot hold"),
        },
    })
}

fn gguf_to_tpack(input: &Path, bytes: &[u8], output: &Path, quiet: bool) -> Result<String> {
    let file = gguf::parse(bytes)
        .map_err(|e| CliError::input(format!("{} is not a valid GGUF file: {e}", input.display())))?;
    let mut metadata = Vec::with_capacity(file.metadata.len());
    for (key, value) in &file.metadata {
        let v = gguf_value(value)
            .map_err(|why| CliError::input(format!("{}: metadata {key:?} is {why}", input.display())))?;
        metadata.push(((*key).to_owned(), v));
    }
    let alignment = u32::try_from(file.alignment)
        .unwrap_or(u32::MAX)
        .clamp(DEFAULT_ALIGNMENT, tpack::format::MAX_ALIGNMENT);
    // GGUF lists dimensions innermost first; tpack outermost first.
    let shapes: Vec<Vec<u64>> = file.tensors.iter().map(|t| t.dims.iter().rev().copied().collect()).collect();
    let mut entries = Vec::with_capacity(file.tensors.len());
    for (t, shape) in file.tensors.iter().zip(&shapes) {
        let dtype = from_ggml(t.ggml_type).ok_or_else(|| {
            CliError::input(format!(
                "{}: tensor {:?} has GGML type {}, which tpack 1.0 cannot store (it stores F32, F16, BF16, F64, \
                 Q8_0, Q4_0, I8, I16, I32 and I64)",
                input.display(),
                t.name,
                t.ggml_type.name()
            ))
        })?;
        let payload = if file.big_endian {
            // tpack is little-endian: each element is byte-swapped on the way through. A block type has no
            // defined big-endian layout (gguf-py's writer swaps element types only and leaves block scales
            // little-endian), so its bytes cannot be trusted either way.
            match dtype.storage() {
                Some(Storage::Element(width)) => Payload::Swapped { bytes: t.data, width: width as usize },
                _ => {
                    return Err(CliError::input(format!(
                        "{}: tensor {:?} is {} in a big-endian GGUF file; the byte order of quantized blocks in \
                         big-endian GGUF is not defined (gguf-py leaves their scales little-endian), so it is \
                         refused",
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
            name: t.name,
            dtype,
            shape,
            alignment,
            target: None,
            length: t.data.len() as u64,
            payload,
        });
    }
    write_container(output, 0, &entries, &metadata, quiet)?;
    Ok(done(input, output, entries.len(), metadata.len()))
}

/// A tpack metadata value as a safetensors `__metadata__` string: strings as they are, everything else as the
/// JSON of spec §13.
fn metadata_string(value: &MetaValue<'_>) -> String {
    match value {
        MetaValue::String(s) => (*s).to_owned(),
        other => crate::describe::meta_value_json(other).to_string(),
    }
}

struct View<'a> {
    dtype: StDtype,
    shape: Vec<usize>,
    data: &'a [u8],
}

impl safetensors::View for &View<'_> {
    fn dtype(&self) -> StDtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

fn tpack_to_safetensors(input: &Path, bytes: &[u8], output: &Path, quiet: bool) -> Result<String> {
    let container = crate::open_container(input, bytes)?;
    let bar = crate::progress::bytes(container.entries().map(|e| e.byte_len()).sum(), "verifying", quiet);
    let problems = crate::verify::check(&container, &mut |n| bar.inc(n));
    bar.finish_and_clear();
    if let Some(p) = problems.first() {
        return Err(CliError::invalid(format!(
            "{} is corrupt, so it is not converted: entry {} {:?}: {} (`tpack verify` lists every problem)",
            input.display(),
            p.entry,
            p.name,
            p.what
        )));
    }
    let mut views = Vec::with_capacity(container.len());
    let mut targets = 0usize;
    for e in container.entries() {
        let dtype = to_safetensors(e.dtype()).ok_or_else(|| {
            CliError::input(format!(
                "{}: entry {:?} has dtype {}, which safetensors cannot store",
                input.display(),
                e.name(),
                dtype_name(e.dtype())
            ))
        })?;
        let shape = e
            .shape()
            .dims()
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| {
                CliError::input(format!(
                    "{}: entry {:?} is too large for this machine",
                    input.display(),
                    e.name()
                ))
            })?;
        targets += usize::from(e.target().is_some());
        views.push((e.name().to_owned(), View { dtype, shape, data: e.payload() }));
    }
    let metadata: HashMap<String, String> =
        container.metadata().map(|(k, v)| (k.to_owned(), metadata_string(&v))).collect();
    let info = if metadata.is_empty() { None } else { Some(metadata) };
    let count = views.len();
    let meta_count = info.as_ref().map_or(0, HashMap::len);
    safetensors::serialize_to_file(views.iter().map(|(n, v)| (n.as_str(), v)), info, output)
        .map_err(|e| CliError::new(crate::Kind::Io, format!("cannot write {}: {e}", output.display())))?;
    let mut report = done(input, output, count, meta_count);
    if targets > 0 {
        report.push_str(&format!(
            "note: safetensors has no load addresses or alignments; the load addresses of {targets} entries were dropped\n"
        ));
    }
    Ok(report)
}
