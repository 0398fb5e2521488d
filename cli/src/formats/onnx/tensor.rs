//! One ONNX `TensorProto` as tpack's dtype, shape and little-endian bytes, from whichever field holds its
//! elements: `raw_data` (a view of the input, no copy), the typed fields (`float_data`; `int32_data`, which
//! also holds int8/int16/uint8/uint16/bool and the bits of float16, bfloat16 and float8; `int64_data`;
//! `double_data`; `uint64_data`, which also holds uint32), or an external file (module `external`).
//!
//! Refused by name: strings, complex128, the 2- and 4-bit integer types and float6 (no tpack dtype), float4
//! and float6 in `int32_data`, segmented tensors, negative dimensions, a typed value out of its type's range,
//! a count of elements other than the shape's, and data in more than one field.

use bytes::Bytes;
use tpack::Dtype;

use super::external::ExternalFiles;
use super::proto::{tensor_proto::DataLocation, tensor_proto::DataType, TensorProto};

/// A tensor's elements as tpack holds them.
#[derive(Debug)]
pub(crate) struct Tensor {
    pub(crate) dtype: Dtype,
    pub(crate) shape: Vec<u64>,
    pub(crate) data: Bytes,
}

/// The tpack dtype of an ONNX data type, or why there is none.
fn dtype(code: i32) -> Result<Dtype, String> {
    let Ok(t) = DataType::try_from(code) else {
        return Err(format!("has data type {code}, which ONNX does not define"));
    };
    Ok(match t {
        DataType::Float => Dtype::F32,
        DataType::Uint8 => Dtype::U8,
        DataType::Int8 => Dtype::I8,
        DataType::Uint16 => Dtype::U16,
        DataType::Int16 => Dtype::I16,
        DataType::Int32 => Dtype::I32,
        DataType::Int64 => Dtype::I64,
        DataType::Bool => Dtype::BOOL,
        DataType::Float16 => Dtype::F16,
        DataType::Double => Dtype::F64,
        DataType::Uint32 => Dtype::U32,
        DataType::Uint64 => Dtype::U64,
        DataType::Complex64 => Dtype::C64,
        DataType::Bfloat16 => Dtype::BF16,
        DataType::Float8e4m3fn => Dtype::F8E4M3,
        DataType::Float8e4m3fnuz => Dtype::F8E4M3FNUZ,
        DataType::Float8e5m2 => Dtype::F8E5M2,
        DataType::Float8e5m2fnuz => Dtype::F8E5M2FNUZ,
        DataType::Float8e8m0 => Dtype::F8E8M0,
        DataType::Float4e2m1 => Dtype::F4E2M1,
        other => return Err(format!("has data type {}, which tpack has no dtype for", other.as_str_name())),
    })
}

/// Which typed field holds a dtype's elements, and how each value becomes bytes.
#[derive(Debug, Clone, Copy)]
enum Typed {
    /// `float_data`, `per_element` floats each.
    Float { per_element: u64 },
    /// `int32_data`, each value in `min..=max`, written as `width` little-endian bytes.
    Int32 { min: i64, max: i64, width: usize },
    /// `int64_data`.
    Int64,
    /// `double_data`.
    Double,
    /// `uint64_data`, each value at most `max`, written as `width` bytes.
    Uint64 { max: u64, width: usize },
}

fn typed(d: Dtype) -> Option<Typed> {
    let int32 = |min: i64, max: i64, width: usize| Some(Typed::Int32 { min, max, width });
    match d {
        Dtype::F32 => Some(Typed::Float { per_element: 1 }),
        Dtype::C64 => Some(Typed::Float { per_element: 2 }),
        Dtype::I32 => int32(i64::from(i32::MIN), i64::from(i32::MAX), 4),
        Dtype::I16 => int32(i64::from(i16::MIN), i64::from(i16::MAX), 2),
        Dtype::U16 | Dtype::F16 | Dtype::BF16 => int32(0, i64::from(u16::MAX), 2),
        Dtype::I8 => int32(i64::from(i8::MIN), i64::from(i8::MAX), 1),
        Dtype::U8 | Dtype::F8E4M3 | Dtype::F8E4M3FNUZ | Dtype::F8E5M2 | Dtype::F8E5M2FNUZ | Dtype::F8E8M0 => {
            int32(0, i64::from(u8::MAX), 1)
        }
        Dtype::BOOL => int32(0, 1, 1),
        Dtype::I64 => Some(Typed::Int64),
        Dtype::F64 => Some(Typed::Double),
        Dtype::U32 => Some(Typed::Uint64 { max: u64::from(u32::MAX), width: 4 }),
        Dtype::U64 => Some(Typed::Uint64 { max: u64::MAX, width: 8 }),
        _ => None,
    }
}

/// The tensor `t`, its external data looked up through `files`.
///
/// # Errors
/// Why it is refused, in words (the caller adds the file and the tensor's name).
pub(crate) fn convert(t: &TensorProto, files: &mut ExternalFiles) -> Result<Tensor, String> {
    let dtype = dtype(t.data_type.unwrap_or(0))?;
    if t.segment.is_some() {
        return Err("is stored in segments, which ONNX itself no longer reads".to_owned());
    }
    let shape = t
        .dims
        .iter()
        .map(|&d| u64::try_from(d).map_err(|_| format!("has the negative dimension {d}")))
        .collect::<Result<Vec<u64>, String>>()?;
    let len = dtype.byte_len(&shape).map_err(|e| format!("has a shape {shape:?} tpack cannot hold: {e}"))?;
    let count = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).unwrap_or(u64::MAX);
    let fields: [(&str, bool); 7] = [
        ("raw_data", t.raw_data.is_some()),
        ("float_data", !t.float_data.is_empty()),
        ("int32_data", !t.int32_data.is_empty()),
        ("string_data", !t.string_data.is_empty()),
        ("int64_data", !t.int64_data.is_empty()),
        ("double_data", !t.double_data.is_empty()),
        ("uint64_data", !t.uint64_data.is_empty()),
    ];
    let used: Vec<&str> = fields.iter().filter(|f| f.1).map(|f| f.0).collect();
    if used.len() > 1 {
        return Err(format!("has its data in more than one field ({})", used.join(", ")));
    }
    if t.data_location == Some(DataLocation::External as i32) {
        if let Some(field) = used.first() {
            return Err(format!("is marked EXTERNAL and also has {field}"));
        }
        return Ok(Tensor { dtype, shape, data: files.data(&t.external_data, len)? });
    }
    if let Some(raw) = &t.raw_data {
        if raw.len() as u64 != len {
            return Err(format!("has {} bytes of raw_data where its shape {shape:?} needs {len}", raw.len()));
        }
        return Ok(Tensor { dtype, shape, data: raw.clone() });
    }
    let Some(how) = typed(dtype) else {
        // Float4 (packed two a byte in int32_data) is read from raw_data only.
        return match used.first() {
            Some(field) => Err(format!(
                "has its {} elements in {field}, which tpack reads only as raw_data",
                dtype.name().unwrap_or("?")
            )),
            None if count == 0 => Ok(Tensor { dtype, shape, data: Bytes::new() }),
            None => Err("holds no data".to_owned()),
        };
    };
    let data = typed_bytes(t, how, count)?;
    Ok(Tensor { dtype, shape, data: Bytes::from(data) })
}

/// The elements of `t` from the typed field `how` names, `count` of them, as little-endian bytes.
fn typed_bytes(t: &TensorProto, how: Typed, count: u64) -> Result<Vec<u8>, String> {
    let wrong = |field: &str, have: usize, want: u64| {
        format!("has {have} values in {field} where its shape needs {want}")
    };
    match how {
        Typed::Float { per_element } => {
            let want = count.saturating_mul(per_element);
            if t.float_data.len() as u64 != want {
                return Err(wrong("float_data", t.float_data.len(), want));
            }
            Ok(t.float_data.iter().flat_map(|v| v.to_le_bytes()).collect())
        }
        Typed::Int32 { min, max, width } => {
            if t.int32_data.len() as u64 != count {
                return Err(wrong("int32_data", t.int32_data.len(), count));
            }
            let mut out = Vec::with_capacity(t.int32_data.len().saturating_mul(width));
            for (i, &v) in t.int32_data.iter().enumerate() {
                let v = i64::from(v);
                if v < min || v > max {
                    return Err(format!(
                        "has int32_data value {i} = {v}, outside {min}..={max} for its type"
                    ));
                }
                out.extend(v.to_le_bytes().get(..width).unwrap_or_default());
            }
            Ok(out)
        }
        Typed::Int64 => {
            if t.int64_data.len() as u64 != count {
                return Err(wrong("int64_data", t.int64_data.len(), count));
            }
            Ok(t.int64_data.iter().flat_map(|v| v.to_le_bytes()).collect())
        }
        Typed::Double => {
            if t.double_data.len() as u64 != count {
                return Err(wrong("double_data", t.double_data.len(), count));
            }
            Ok(t.double_data.iter().flat_map(|v| v.to_le_bytes()).collect())
        }
        Typed::Uint64 { max, width } => {
            if t.uint64_data.len() as u64 != count {
                return Err(wrong("uint64_data", t.uint64_data.len(), count));
            }
            let mut out = Vec::with_capacity(t.uint64_data.len().saturating_mul(width));
            for (i, &v) in t.uint64_data.iter().enumerate() {
                if v > max {
                    return Err(format!("has uint64_data value {i} = {v}, above {max} for its type"));
                }
                out.extend(v.to_le_bytes().get(..width).unwrap_or_default());
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(data_type: DataType, dims: &[i64]) -> TensorProto {
        TensorProto { data_type: Some(data_type as i32), dims: dims.to_vec(), ..TensorProto::default() }
    }

    #[test]
    fn typed_fields_become_little_endian_bytes_of_their_type() {
        let mut files = ExternalFiles::new(std::path::Path::new("."));
        let mut t = tensor(DataType::Float16, &[2]);
        t.int32_data = vec![0x3c00, 0xc000];
        assert_eq!(convert(&t, &mut files).unwrap().data.as_ref(), [0x00, 0x3c, 0x00, 0xc0]);
        let mut t = tensor(DataType::Int8, &[2]);
        t.int32_data = vec![-1, 127];
        assert_eq!(convert(&t, &mut files).unwrap().data.as_ref(), [0xff, 0x7f]);
        let mut t = tensor(DataType::Uint32, &[1]);
        t.uint64_data = vec![0xdead_beef];
        assert_eq!(convert(&t, &mut files).unwrap().data.as_ref(), 0xdead_beefu32.to_le_bytes());
        let mut t = tensor(DataType::Complex64, &[1]);
        t.float_data = vec![1.0, -2.0];
        assert_eq!(convert(&t, &mut files).unwrap().data.len(), 8);
    }

    #[test]
    fn what_does_not_fit_is_refused_by_name() {
        let mut files = ExternalFiles::new(std::path::Path::new("."));
        let mut t = tensor(DataType::Uint8, &[1]);
        t.int32_data = vec![256];
        assert!(convert(&t, &mut files).unwrap_err().contains("outside 0..=255"));
        let mut t = tensor(DataType::Bool, &[1]);
        t.int32_data = vec![2];
        assert!(convert(&t, &mut files).unwrap_err().contains("outside 0..=1"));
        let mut t = tensor(DataType::Float, &[3]);
        t.float_data = vec![1.0];
        assert!(convert(&t, &mut files)
            .unwrap_err()
            .contains("1 values in float_data where its shape needs 3"));
        let mut t = tensor(DataType::Float, &[1]);
        t.float_data = vec![1.0];
        t.int64_data = vec![1];
        assert!(convert(&t, &mut files).unwrap_err().contains("more than one field"));
        let t = tensor(DataType::Float, &[-1]);
        assert!(convert(&t, &mut files).unwrap_err().contains("negative dimension -1"));
        let mut t = tensor(DataType::Float, &[2]);
        t.raw_data = Some(Bytes::from_static(&[0; 7]));
        assert!(convert(&t, &mut files)
            .unwrap_err()
            .contains("7 bytes of raw_data where its shape [2] needs 8"));
        for (d, word) in
            [(DataType::String, "STRING"), (DataType::Complex128, "COMPLEX128"), (DataType::Int4, "INT4")]
        {
            assert!(convert(&tensor(d, &[1]), &mut files).unwrap_err().contains(word), "{word}");
        }
        assert!(convert(&tensor(DataType::Float, &[1]), &mut files)
            .unwrap_err()
            .contains("has 0 values in float_data"));
        assert!(convert(&tensor(DataType::Float4e2m1, &[2]), &mut files)
            .unwrap_err()
            .contains("holds no data"));
        assert_eq!(convert(&tensor(DataType::Float, &[0, 3]), &mut files).unwrap().data.len(), 0);
    }
}
