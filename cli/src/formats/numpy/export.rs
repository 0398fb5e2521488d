//! tpack → `.npz`, as `numpy.savez` writes one: a zip archive of stored (uncompressed) `.npy` members, one
//! per entry in table order, each named `ENTRY.npy`, with a version 1.0 header (2.0 when the header needs
//! more than 65535 bytes) padded so that the elements start at a multiple of 64 bytes, as numpy pads.
//!
//! Refused, before any file is created: entries of a dtype numpy has no type for (bfloat16, float8, the
//! GGML block types: writing their bytes as `uint8` would lose what they are, so convert those to
//! safetensors or GGUF instead), RAW and nested containers, and names that numpy's archive could not hold
//! safely (absolute, `..`, backslash). Metadata and load addresses have no place in an `.npz`: dropped, with
//! a note.

use std::io::{BufWriter, Write};
use std::path::Path;

use tpack::{Container, Dtype};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use super::array::DESCRS;
use super::header::MAGIC;
use super::Npz;
use crate::describe::dtype_name;
use crate::error::{CliError, Result};
use crate::formats::tpack::{content_entries, dropped_signature, is_signed_attribute};
use crate::formats::{Export, ExportOptions, Exported, Format};
use crate::output::TempOutput;

/// numpy's `ARRAY_ALIGN`: the elements of a `.npy` start at a multiple of this.
const ARRAY_ALIGN: usize = 64;

/// numpy's `GROWTH_AXIS_MAX_DIGITS`: the header leaves room for the first dimension to have this many digits.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// Bytes of a zip buffer.
const BUFFER: usize = 1 << 20;

/// The `.npy` header numpy writes for an array of `descr` and `shape` in C order: magic, version, length,
/// and the dict padded with spaces to [`ARRAY_ALIGN`] and ended by a newline.
#[must_use]
pub(crate) fn npy_header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let dims = match shape {
        [one] => format!("({one},)"),
        _ => format!("({})", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    // numpy leaves room for the first dimension to grow to GROWTH_AXIS_MAX_DIGITS digits in place.
    if let Some(first) = shape.first() {
        let digits = first.to_string().len();
        dict.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits)));
    }
    // Version 1.0 has a u16 length; numpy moves to 2.0 (a u32) only when the header does not fit.
    let (version, field) =
        if dict.len() + 1 + MAGIC.len() + 4 <= usize::from(u16::MAX) { (1u8, 2) } else { (2, 4) };
    let prefix = MAGIC.len() + 2 + field;
    let total = (prefix + dict.len() + 1).next_multiple_of(ARRAY_ALIGN);
    let text_len = total - prefix;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend([version, 0]);
    if field == 2 {
        out.extend(u16::try_from(text_len).unwrap_or(u16::MAX).to_le_bytes());
    } else {
        out.extend(u32::try_from(text_len).unwrap_or(u32::MAX).to_le_bytes());
    }
    out.extend(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// One member to write.
struct Member<'c> {
    name: String,
    header: Vec<u8>,
    data: &'c [u8],
}

/// Every entry of `container` as a member, refusing what an `.npz` cannot hold.
fn members<'c>(input: &Path, container: &Container<'c>) -> Result<Vec<Member<'c>>> {
    let mut out = Vec::with_capacity(container.len());
    for e in content_entries(container) {
        let refuse = |why: String| {
            CliError::input(format!(
                "{}: entry {:?} {why}, so it cannot be written to .npz",
                input.display(),
                e.name()
            ))
        };
        let dtype = e.dtype();
        let Some(&(_, descr)) = DESCRS.iter().find(|(d, _)| *d == dtype) else {
            let why = match dtype {
                Dtype::RAW => "is RAW (opaque bytes), which numpy has no array type for".to_owned(),
                Dtype::CONTAINER => "is a nested container".to_owned(),
                _ => format!(
                    "has dtype {}, which numpy has no type for (an .npz holds float16/32/64, int8-64, uint8-64, \
                     bool and complex64; writing the bytes as uint8 would lose what they are: convert to \
                     safetensors or GGUF instead)",
                    dtype_name(dtype)
                ),
            };
            return Err(refuse(why));
        };
        let name = e.name();
        if name.starts_with('/') || name.contains('\\') || name.split('/').any(|p| p == "..") {
            return Err(refuse(
                "has an absolute path, a '..' component or a backslash in its name, which an archive member must \
                 not have"
                    .to_owned(),
            ));
        }
        out.push(Member {
            name: format!("{name}.npy"),
            header: npy_header(descr, e.shape().dims()),
            data: e.payload(),
        });
    }
    Ok(out)
}

impl Export for Npz {
    fn format(&self) -> Format {
        Format::Npz
    }

    /// See the module documentation. The same container always gives the same bytes (every member dated
    /// 1980-01-01, zip's earliest date).
    fn write(
        &self,
        input: &Path,
        container: &Container<'_>,
        dir: &Path,
        name: &str,
        _options: &ExportOptions,
    ) -> Result<Exported> {
        let members = members(input, container)?;
        let output = dir.join(name);
        let mut file = TempOutput::create(&output)
            .map_err(|e| CliError::io("cannot create a file next to", &output, &e))?;
        let zip_error =
            |e: zip::result::ZipError| CliError::io("cannot write", &output, &std::io::Error::other(e));
        {
            let mut zip = ZipWriter::new(BufWriter::with_capacity(BUFFER, file.file_mut()));
            for m in &members {
                let size = (m.header.len() + m.data.len()) as u64;
                let options = SimpleFileOptions::default()
                    .compression_method(CompressionMethod::Stored)
                    .last_modified_time(DateTime::default())
                    .large_file(size >= u64::from(u32::MAX));
                zip.start_file(m.name.as_str(), options).map_err(zip_error)?;
                zip.write_all(&m.header).map_err(|e| CliError::io("cannot write", &output, &e))?;
                zip.write_all(m.data).map_err(|e| CliError::io("cannot write", &output, &e))?;
            }
            let mut inner = zip.finish().map_err(zip_error)?;
            inner.flush().map_err(|e| CliError::io("cannot write", &output, &e))?;
        }
        file.commit().map_err(|e| CliError::io("cannot save", &output, &e))?;
        let mut notes = Vec::new();
        let metadata = container.metadata().iter().filter(|(k, _)| !is_signed_attribute(k)).count();
        if metadata > 0 {
            notes.push(format!("an .npz has no metadata; the {metadata} metadata value(s) were dropped"));
        }
        let targets = content_entries(container).filter(|e| e.target().is_some()).count();
        if targets > 0 {
            notes.push(format!("an .npz has no load addresses; those of {targets} entries were dropped"));
        }
        if let Some(note) = dropped_signature(container, ".npz") {
            notes.push(note);
        }
        Ok(Exported { entries: members.len(), metadata: 0, notes, files: vec![name.to_owned()] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::numpy::header;

    #[test]
    fn headers_are_numpys_and_parse_back() {
        let h = npy_header("<f4", &[2, 3]);
        // numpy.save's header for this array, byte for byte: 59 characters, 20 of room, padding to 128.
        assert_eq!(h.len(), 128);
        assert!(h.ends_with(b"\n"));
        assert_eq!(
            std::str::from_utf8(&h[10..]).unwrap().trim_end(),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
        );
        for shape in [&[][..], &[7], &[1, 2, 3, 4]] {
            let h = npy_header("|b1", shape);
            let back = header::parse(&h).unwrap();
            assert_eq!((back.shape.as_slice(), back.data_offset), (shape, h.len()));
            assert_eq!(h.len() % ARRAY_ALIGN, 0);
        }
    }
}
