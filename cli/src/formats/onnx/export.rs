//! tpack → an ONNX external-data file set: `NAME.onnx`, a model whose graph holds every entry as an
//! initializer (no nodes), and `NAME.onnx.data` beside it, the tensors' bytes, each at a multiple of 64,
//! named by `location`, `offset` and `length` as `onnx.save_model(save_as_external_data=True)` names them.
//! `onnx.load` reads the pair; the initializers can then be merged into a graph that uses them.
//!
//! The model's own fields come back from the `onnx.*` metadata an ONNX import records (IR version, opsets,
//! producer, `metadata_props`); without them, IR version [`DEFAULT_IR_VERSION`] and the default opset
//! [`DEFAULT_OPSET`]. Other string metadata becomes `metadata_props`; other metadata is dropped, with a note.
//! Refused, before any file is created: dtypes ONNX has no type for (the GGML block types, `F6*`), `RAW` and
//! nested containers.

use std::io::Write;
use std::path::Path;

use prost::Message;
use tpack::{Container, Dtype, MetaValue};

use super::proto::tensor_proto::{DataLocation, DataType};
use super::proto::{GraphProto, ModelProto, OperatorSetIdProto, StringStringEntryProto, TensorProto};
use super::{Onnx, META_PREFIX};
use crate::describe::dtype_name;
use crate::error::{CliError, Result};
use crate::formats::tpack::{content_entries, dropped_signature, is_signed_attribute};
use crate::formats::{Export, ExportOptions, Exported, Format};
use crate::output::TempOutput;

/// The IR version written when the container records none: ONNX 1.15's, which every current runtime reads.
pub(crate) const DEFAULT_IR_VERSION: i64 = 9;

/// The default-domain opset written when the container records none.
pub(crate) const DEFAULT_OPSET: i64 = 20;

/// Where each tensor starts in the data file: a multiple of this.
const DATA_ALIGN: u64 = 64;

/// The suffix of the data file's name.
const DATA_SUFFIX: &str = ".data";

/// The ONNX data type of a tpack dtype, if ONNX has one of the same bytes.
fn to_onnx(d: Dtype) -> Option<DataType> {
    Some(match d {
        Dtype::F32 => DataType::Float,
        Dtype::U8 => DataType::Uint8,
        Dtype::I8 => DataType::Int8,
        Dtype::U16 => DataType::Uint16,
        Dtype::I16 => DataType::Int16,
        Dtype::I32 => DataType::Int32,
        Dtype::I64 => DataType::Int64,
        Dtype::BOOL => DataType::Bool,
        Dtype::F16 => DataType::Float16,
        Dtype::F64 => DataType::Double,
        Dtype::U32 => DataType::Uint32,
        Dtype::U64 => DataType::Uint64,
        Dtype::C64 => DataType::Complex64,
        Dtype::BF16 => DataType::Bfloat16,
        Dtype::F8E4M3 => DataType::Float8e4m3fn,
        Dtype::F8E4M3FNUZ => DataType::Float8e4m3fnuz,
        Dtype::F8E5M2 => DataType::Float8e5m2,
        Dtype::F8E5M2FNUZ => DataType::Float8e5m2fnuz,
        Dtype::F8E8M0 => DataType::Float8e8m0,
        Dtype::F4E2M1 => DataType::Float4e2m1,
        _ => return None,
    })
}

fn entry(key: &str, value: impl Into<String>) -> StringStringEntryProto {
    StringStringEntryProto { key: Some(key.to_owned()), value: Some(value.into()) }
}

/// The model (less its initializers' places, which [`Onnx::write`] fills) and the notes on what was dropped.
fn model(container: &Container<'_>) -> (ModelProto, Vec<String>) {
    let mut m = ModelProto {
        ir_version: Some(DEFAULT_IR_VERSION),
        graph: Some(GraphProto { name: Some("tpack".to_owned()), ..GraphProto::default() }),
        ..ModelProto::default()
    };
    let mut dropped = 0usize;
    for (key, value) in container.metadata().iter().filter(|(k, _)| !is_signed_attribute(k)) {
        let onnx_key = key.strip_prefix(META_PREFIX);
        match (onnx_key, value) {
            (Some("ir_version"), MetaValue::I64(v)) => m.ir_version = Some(v),
            (Some("model_version"), MetaValue::I64(v)) => m.model_version = Some(v),
            (Some("producer_name"), MetaValue::String(v)) => m.producer_name = Some(v.to_owned()),
            (Some("producer_version"), MetaValue::String(v)) => m.producer_version = Some(v.to_owned()),
            (Some("domain"), MetaValue::String(v)) => m.domain = Some(v.to_owned()),
            (Some("doc_string"), MetaValue::String(v)) => m.doc_string = Some(v.to_owned()),
            (Some("graph_name"), MetaValue::String(v)) => {
                if let Some(g) = m.graph.as_mut() {
                    g.name = Some(v.to_owned());
                }
            }
            (Some(k), MetaValue::I64(v)) if k.starts_with("opset.") => {
                let domain = k.strip_prefix("opset.").filter(|d| *d != "ai.onnx").unwrap_or_default();
                m.opset_import.push(OperatorSetIdProto { domain: Some(domain.to_owned()), version: Some(v) });
            }
            (Some(k), MetaValue::String(v)) if k.starts_with("metadata_props.") => {
                m.metadata_props.push(entry(k.strip_prefix("metadata_props.").unwrap_or(k), v));
            }
            (None, MetaValue::String(v)) => m.metadata_props.push(entry(key, v)),
            _ => dropped += 1,
        }
    }
    // A model that came from ONNX keeps its producer; any other is tpack's.
    if m.producer_name.is_none() {
        m.producer_name = Some("tpack".to_owned());
        m.producer_version = Some(env!("CARGO_PKG_VERSION").to_owned());
    }
    if m.opset_import.is_empty() {
        m.opset_import.push(OperatorSetIdProto { domain: Some(String::new()), version: Some(DEFAULT_OPSET) });
    }
    let notes = if dropped > 0 {
        vec![format!(
            "{dropped} metadata value(s) that are neither strings nor the onnx.* fields of a model were dropped: \
             ONNX's metadata_props hold strings"
        )]
    } else {
        Vec::new()
    };
    (m, notes)
}

impl Export for Onnx {
    fn format(&self) -> Format {
        Format::Onnx
    }

    fn file_names(
        &self,
        _container: &Container<'_>,
        name: &str,
        options: &ExportOptions,
    ) -> Result<Vec<String>> {
        if options.max_shard_size.is_some() {
            return Err(CliError::input("--max-shard-size is not supported for ONNX output".to_owned()));
        }
        Ok(vec![name.to_owned(), format!("{name}{DATA_SUFFIX}")])
    }

    /// See the module documentation: the data file first, then the model that names it.
    fn write(
        &self,
        input: &Path,
        container: &Container<'_>,
        dir: &Path,
        name: &str,
        _options: &ExportOptions,
    ) -> Result<Exported> {
        let data_name = format!("{name}{DATA_SUFFIX}");
        let (mut m, mut notes) = model(container);
        let mut payloads = Vec::new();
        let mut offset = 0u64;
        for e in content_entries(container) {
            let refuse = |why: String| {
                CliError::input(format!(
                    "{}: entry {:?} {why}, so it cannot be written to ONNX",
                    input.display(),
                    e.name()
                ))
            };
            let data_type = to_onnx(e.dtype()).ok_or_else(|| {
                refuse(format!("has dtype {}, which ONNX has no tensor type for", dtype_name(e.dtype())))
            })?;
            let dims = e
                .shape()
                .dims()
                .iter()
                .map(|&d| i64::try_from(d))
                .collect::<std::result::Result<Vec<i64>, _>>()
                .map_err(|_| refuse("has a dimension above 2^63 - 1".to_owned()))?;
            let start = offset.next_multiple_of(DATA_ALIGN);
            let length = e.byte_len();
            offset = start.saturating_add(length);
            let t = TensorProto {
                name: Some(e.name().to_owned()),
                dims,
                data_type: Some(data_type as i32),
                data_location: Some(DataLocation::External as i32),
                external_data: vec![
                    entry("location", data_name.as_str()),
                    entry("offset", start.to_string()),
                    entry("length", length.to_string()),
                ],
                ..TensorProto::default()
            };
            if let Some(g) = m.graph.as_mut() {
                g.initializer.push(t);
            }
            payloads.push((start, e.payload()));
        }
        let data_path = dir.join(&data_name);
        let mut data = TempOutput::create(&data_path)
            .map_err(|e| CliError::io("cannot create a file next to", &data_path, &e))?;
        {
            let file = data.file_mut();
            let mut at = 0u64;
            let mut put = |bytes: &[u8]| {
                file.write_all(bytes).map_err(|e| CliError::io("cannot write", &data_path, &e))
            };
            for (start, payload) in &payloads {
                let pad = usize::try_from(start.saturating_sub(at)).unwrap_or(0);
                put(&vec![0u8; pad])?;
                put(payload)?;
                at = start.saturating_add(payload.len() as u64);
            }
        }
        data.commit().map_err(|e| CliError::io("cannot save", &data_path, &e))?;
        let model_path = dir.join(name);
        crate::output::write_file(&model_path, &m.encode_to_vec(), false)?;
        let entries = m.graph.as_ref().map_or(0, |g| g.initializer.len());
        if content_entries(container).any(|e| e.target().is_some()) {
            notes.push("ONNX has no load addresses; the entries' load addresses were dropped".to_owned());
        }
        if let Some(note) = dropped_signature(container, "ONNX") {
            notes.push(note);
        }
        Ok(Exported {
            entries,
            metadata: m.metadata_props.len(),
            notes,
            files: vec![name.to_owned(), data_name],
        })
    }
}
