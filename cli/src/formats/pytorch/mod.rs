//! PyTorch → tpack: `torch.save` zip archives (`.pt`, `.pth`, `pytorch_model.bin`), legacy `torch.save`
//! streams and TorchScript archives, read by the workspace crate `tpack-pytorch` (`pytorch/`), whose
//! restricted pickle machine builds tensors and plain values and never runs anything.
//!
//! Each tensor becomes an entry named by its flattened path (`encoder.layers.0.weight`), its payload a view
//! of the file when it is contiguous in its storage, else the copy the reader gathered; tensors that share a
//! storage (tied weights, views) each get their own payload, and a note says which. Ints, floats, strings
//! and bools become metadata under their flattened names.

use std::borrow::Cow;
use std::path::Path;

use tpack::format::DEFAULT_ALIGNMENT;
use tpack::{Dtype, OwnedMetaValue};
use tpack_pytorch::{Checkpoint, Element, Scalar};

use crate::error::{CliError, Result};
use crate::formats::tpack::{OutEntry, Payload};
use crate::formats::{Format, Import, Model};

/// The PyTorch checkpoint formats.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pytorch;

/// Whether `bytes` is a checkpoint `tpack-pytorch` reads: a legacy stream's head, or a zip archive with a
/// `<name>/data.pkl` record (an `.npz`, also a zip, has none).
pub(crate) fn sniff(bytes: &[u8]) -> bool {
    tpack_pytorch::sniff(bytes)
}

/// tpack's dtype for a PyTorch element type, and the width in which a big-endian element is swapped.
fn dtype(element: Element) -> Option<(Dtype, usize)> {
    Some(match element {
        Element::F64 => (Dtype::F64, 8),
        Element::F32 => (Dtype::F32, 4),
        Element::F16 => (Dtype::F16, 2),
        Element::BF16 => (Dtype::BF16, 2),
        Element::F8E4M3 => (Dtype::F8E4M3, 1),
        Element::F8E5M2 => (Dtype::F8E5M2, 1),
        Element::I64 => (Dtype::I64, 8),
        Element::I32 => (Dtype::I32, 4),
        Element::I16 => (Dtype::I16, 2),
        Element::I8 => (Dtype::I8, 1),
        Element::U64 => (Dtype::U64, 8),
        Element::U32 => (Dtype::U32, 4),
        Element::U16 => (Dtype::U16, 2),
        Element::U8 => (Dtype::U8, 1),
        Element::Bool => (Dtype::BOOL, 1),
        // Two f32 parts, each swapped on its own.
        Element::C64 => (Dtype::C64, 4),
        _ => return None,
    })
}

/// The payload of `data`, little-endian as tpack stores it.
fn payload(data: Cow<'_, [u8]>, big_endian: bool, width: usize) -> Payload<'_> {
    match (data, big_endian && width > 1) {
        (Cow::Borrowed(bytes), false) => Payload::Bytes(bytes),
        (Cow::Borrowed(bytes), true) => Payload::Swapped { bytes, width },
        (Cow::Owned(bytes), false) => Payload::Owned(bytes),
        (Cow::Owned(mut bytes), true) => {
            for element in bytes.chunks_mut(width) {
                element.reverse();
            }
            Payload::Owned(bytes)
        }
    }
}

/// The metadata value of a plain value.
fn meta(value: &Scalar<'_>) -> OwnedMetaValue {
    match value {
        Scalar::Int(i) => OwnedMetaValue::from(*i),
        Scalar::Float(f) => OwnedMetaValue::from(*f),
        Scalar::Str(s) => OwnedMetaValue::from(*s),
        Scalar::Bool(b) => OwnedMetaValue::from(*b),
    }
}

/// Up to three names of `names`, quoted, for a note.
fn some_names<'n>(names: impl Iterator<Item = &'n str>) -> String {
    let names: Vec<&str> = names.collect();
    let shown: Vec<String> = names.iter().take(3).map(|n| format!("{n:?}")).collect();
    match names.len() {
        0..=3 => shown.join(", "),
        n => format!("{}, and {} more", shown.join(", "), n.saturating_sub(3)),
    }
}

impl Import for Pytorch {
    fn format(&self) -> Format {
        Format::Pytorch
    }

    /// Tensors in the order the checkpoint's pickle names them, at tpack's default alignment; plain values
    /// as metadata. See the module documentation.
    fn read<'a>(&self, input: &Path, bytes: &'a [u8]) -> Result<Model<'a>> {
        let checkpoint: Checkpoint<'a> = tpack_pytorch::read(bytes).map_err(|e| {
            CliError::input(format!("{} is not a PyTorch checkpoint tpack can read: {e}", input.display()))
        })?;
        let mut entries = Vec::with_capacity(checkpoint.tensors.len());
        let mut shared = Vec::new();
        for t in checkpoint.tensors {
            let (dtype, width) = dtype(t.element).ok_or_else(|| {
                CliError::input(format!(
                    "{}: tensor {:?} is torch.{}, which tpack cannot store",
                    input.display(),
                    t.name,
                    t.element.dtype_name()
                ))
            })?;
            if t.shares_storage {
                shared.push(t.name.clone());
            }
            entries.push(OutEntry {
                name: Cow::Owned(t.name),
                dtype,
                shape: t.shape,
                alignment: DEFAULT_ALIGNMENT,
                target: None,
                length: t.data.len() as u64,
                payload: payload(t.data, t.big_endian, width),
            });
        }
        let metadata = checkpoint.values.iter().map(|(k, v)| (k.clone(), meta(v))).collect();
        let mut notes = Vec::new();
        if !shared.is_empty() {
            notes.push(format!(
                "{} tensors share a storage with another ({}): tied weights or views; each is written with its own \
                 copy of its elements, so the sharing is not kept",
                shared.len(),
                some_names(shared.iter().map(String::as_str))
            ));
        }
        if !checkpoint.skipped.is_empty() {
            notes.push(format!(
                "{} values that are neither tensors nor ints, floats, strings or bools are left out ({})",
                checkpoint.skipped.len(),
                some_names(checkpoint.skipped.iter().map(String::as_str))
            ));
        }
        if checkpoint.kind == tpack_pytorch::Kind::TorchScript {
            notes.push(
                "this is a TorchScript archive: its tensors and attributes are converted, its compiled code is not"
                    .to_owned(),
            );
        }
        Ok(Model { compat_flags: 0, entries, metadata, notes })
    }
}
