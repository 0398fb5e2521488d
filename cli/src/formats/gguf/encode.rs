//! The bytes of a GGUF header: magic, version, counts, metadata and tensor infos, as gguf.md lays them out
//! and gguf-py and llama.cpp write them, little-endian or (as gguf-py's `endianess=BIG` writes) big-endian:
//! every number but the magic in that byte order. Values come as tpack's [`MetaValue`]s, each written as the
//! GGUF type of the same width and kind.

use tpack::MetaValue;
use tpack_gguf::{GgmlType, MAGIC, MAX_ARRAY_DEPTH};

// The metadata value type codes (gguf.md `gguf_metadata_value_type`).
const T_U8: u32 = 0;
const T_I8: u32 = 1;
const T_U16: u32 = 2;
const T_I16: u32 = 3;
const T_U32: u32 = 4;
const T_I32: u32 = 5;
const T_F32: u32 = 6;
const T_BOOL: u32 = 7;
const T_STRING: u32 = 8;
const T_ARRAY: u32 = 9;
const T_U64: u32 = 10;
const T_I64: u32 = 11;
const T_F64: u32 = 12;

/// One tensor info: what the header says of a tensor.
#[derive(Debug, Clone)]
pub(super) struct TensorInfo<'a> {
    pub(super) name: &'a str,
    /// Dimensions innermost first (GGUF's `ne[]`).
    pub(super) ne: Vec<u64>,
    pub(super) ggml_type: GgmlType,
    /// Offset within the data section.
    pub(super) offset: u64,
}

/// The bytes of the tensor info of a tensor named `name` with `dims` dimensions: the name (a u64 length and
/// its bytes), the dimension count (u32), the dimensions (u64 each), the type (u32) and the offset (u64).
#[must_use]
pub(super) fn info_len(name: &str, dims: usize) -> u64 {
    (8 + name.len() + 4 + 8 * dims + 4 + 8) as u64
}

/// A GGUF header being written.
#[derive(Debug, Default)]
pub(super) struct Header {
    bytes: Vec<u8>,
    /// Numbers are written big-endian.
    big_endian: bool,
}

impl Header {
    /// Starts a header: magic, `version`, and the tensor and metadata counts.
    pub(super) fn new(version: u32, tensors: u64, metadata: u64, big_endian: bool) -> Self {
        let mut h = Self { bytes: Vec::new(), big_endian };
        h.bytes.extend(MAGIC);
        h.u32(version);
        h.u64(tensors);
        h.u64(metadata);
        h
    }

    /// The bytes so far.
    pub(super) fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Bytes so far.
    pub(super) fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// A number given as its little-endian bytes, in the header's byte order.
    fn num<const N: usize>(&mut self, mut le: [u8; N]) {
        if self.big_endian {
            le.reverse();
        }
        self.bytes.extend(le);
    }

    fn u32(&mut self, v: u32) {
        self.num(v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.num(v.to_le_bytes());
    }

    fn string(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes.extend(s.as_bytes());
    }

    /// One metadata pair.
    ///
    /// # Errors
    /// Why GGUF cannot hold `value`, in words that follow "metadata KEY is": `bytes`, a type this tool does
    /// not know, an `array[]` item that is not an array, or arrays nested deeper than a reader takes.
    pub(super) fn pair(&mut self, key: &str, value: &MetaValue<'_>) -> Result<(), String> {
        self.string(key);
        let code = type_code(value)?;
        self.u32(code);
        self.value(value, 0)
    }

    /// A tensor info.
    pub(super) fn tensor(&mut self, t: &TensorInfo<'_>) {
        self.string(t.name);
        self.u32(t.ne.len() as u32);
        for &d in &t.ne {
            self.u64(d);
        }
        self.u32(t.ggml_type.code());
        self.u64(t.offset);
    }

    /// The body of `value` (no type code), an array `depth` levels inside arrays.
    fn value(&mut self, value: &MetaValue<'_>, depth: usize) -> Result<(), String> {
        match value {
            MetaValue::U8(v) => self.bytes.push(*v),
            MetaValue::I8(v) => self.num(v.to_le_bytes()),
            MetaValue::U16(v) => self.num(v.to_le_bytes()),
            MetaValue::I16(v) => self.num(v.to_le_bytes()),
            MetaValue::U32(v) => self.num(v.to_le_bytes()),
            MetaValue::I32(v) => self.num(v.to_le_bytes()),
            MetaValue::F32(v) => self.num(v.to_bits().to_le_bytes()),
            MetaValue::Bool(v) => self.bytes.push(u8::from(*v)),
            MetaValue::String(s) => self.string(s),
            MetaValue::U64(v) => self.num(v.to_le_bytes()),
            MetaValue::I64(v) => self.num(v.to_le_bytes()),
            MetaValue::F64(v) => self.num(v.to_bits().to_le_bytes()),
            array => self.array(array, depth.saturating_add(1))?,
        }
        Ok(())
    }

    /// An array (element type, count, elements) at nesting level `depth` (1 for a value that is an array).
    fn array(&mut self, value: &MetaValue<'_>, depth: usize) -> Result<(), String> {
        if depth > MAX_ARRAY_DEPTH {
            return Err(format!(
                "arrays nested more than {MAX_ARRAY_DEPTH} deep, more than a tpack value holds (8 levels of \
                 array[] around arrays of values)"
            ));
        }
        let element = element_code(value)?;
        self.u32(element);
        macro_rules! numbers {
            ($a:expr) => {{
                self.u64($a.len() as u64);
                for v in $a.iter() {
                    self.num(v.get().to_le_bytes());
                }
            }};
        }
        match value {
            MetaValue::U8Array(a) => {
                self.u64(a.len() as u64);
                self.bytes.extend_from_slice(a);
            }
            MetaValue::I8Array(a) => {
                self.u64(a.len() as u64);
                self.bytes.extend(a.iter().map(|v| v.to_le_bytes()[0]));
            }
            MetaValue::BoolArray(a) => {
                self.u64(a.len() as u64);
                self.bytes.extend(a.iter().map(|&v| u8::from(v)));
            }
            MetaValue::U16Array(a) => numbers!(a),
            MetaValue::I16Array(a) => numbers!(a),
            MetaValue::U32Array(a) => numbers!(a),
            MetaValue::I32Array(a) => numbers!(a),
            MetaValue::U64Array(a) => numbers!(a),
            MetaValue::I64Array(a) => numbers!(a),
            MetaValue::F32Array(a) => {
                self.u64(a.len() as u64);
                for v in a.iter() {
                    self.num(v.get().to_bits().to_le_bytes());
                }
            }
            MetaValue::F64Array(a) => {
                self.u64(a.len() as u64);
                for v in a.iter() {
                    self.num(v.get().to_bits().to_le_bytes());
                }
            }
            MetaValue::StringArray(items) => {
                self.u64(items.count() as u64);
                for s in *items {
                    self.string(s);
                }
            }
            MetaValue::ArrayArray(items) => {
                self.u64(items.count() as u64);
                for item in *items {
                    self.array(&item, depth.saturating_add(1))?;
                }
            }
            // `element_code` has refused everything else.
            _ => {}
        }
        Ok(())
    }
}

/// The GGUF type code of a metadata value, or why GGUF has none.
fn type_code(value: &MetaValue<'_>) -> Result<u32, String> {
    Ok(match value {
        MetaValue::U8(_) => T_U8,
        MetaValue::I8(_) => T_I8,
        MetaValue::U16(_) => T_U16,
        MetaValue::I16(_) => T_I16,
        MetaValue::U32(_) => T_U32,
        MetaValue::I32(_) => T_I32,
        MetaValue::F32(_) => T_F32,
        MetaValue::Bool(_) => T_BOOL,
        MetaValue::String(_) => T_STRING,
        MetaValue::U64(_) => T_U64,
        MetaValue::I64(_) => T_I64,
        MetaValue::F64(_) => T_F64,
        other => {
            element_code(other)?;
            T_ARRAY
        }
    })
}

/// The GGUF element type code of an array value, or why it is not an array GGUF can hold.
fn element_code(value: &MetaValue<'_>) -> Result<u32, String> {
    Ok(match value {
        MetaValue::U8Array(_) => T_U8,
        MetaValue::I8Array(_) => T_I8,
        MetaValue::U16Array(_) => T_U16,
        MetaValue::I16Array(_) => T_I16,
        MetaValue::U32Array(_) => T_U32,
        MetaValue::I32Array(_) => T_I32,
        MetaValue::F32Array(_) => T_F32,
        MetaValue::BoolArray(_) => T_BOOL,
        MetaValue::StringArray(_) => T_STRING,
        MetaValue::U64Array(_) => T_U64,
        MetaValue::I64Array(_) => T_I64,
        MetaValue::F64Array(_) => T_F64,
        MetaValue::ArrayArray(_) => T_ARRAY,
        MetaValue::Bytes(_) => {
            return Err(
                "of type bytes, which GGUF has no type for (a u8[] holds the same bytes: `tpack unpack`, \
                        change the record's type to u8[] and its value to a list of numbers, `tpack pack`)"
                    .to_owned(),
            )
        }
        other if !other.value_type().is_array() && other.value_type().name().is_some() => {
            return Err(format!(
                "an array[] holding a {} item, and the items of an array are arrays",
                other.value_type()
            ))
        }
        other => return Err(format!("of {}, which this tool does not know", other.value_type())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpack::zerocopy::little_endian::U16;
    use tpack::{ArrayArray, StringArray};

    /// Bytes worked out by hand from gguf.md, for a header tpack-gguf then parses back.
    #[test]
    fn a_header_is_laid_out_as_gguf_md_says() {
        let mut h = Header::new(3, 1, 2, false);
        h.pair("a", &MetaValue::U16(0x0102)).unwrap();
        let items = [MetaValue::U16Array(&[U16::new(7)]), MetaValue::StringArray(StringArray::new(&["x"]))];
        h.pair("n", &MetaValue::ArrayArray(ArrayArray::new(&items))).unwrap();
        h.tensor(&TensorInfo { name: "t", ne: vec![32, 2], ggml_type: GgmlType::Q8_0, offset: 0 });
        let mut want = b"GGUF".to_vec();
        want.extend(3u32.to_le_bytes());
        want.extend(1u64.to_le_bytes());
        want.extend(2u64.to_le_bytes());
        want.extend(1u64.to_le_bytes());
        want.push(b'a');
        want.extend(2u32.to_le_bytes());
        want.extend([2, 1]);
        want.extend(1u64.to_le_bytes());
        want.push(b'n');
        want.extend(9u32.to_le_bytes()); // array
        want.extend(9u32.to_le_bytes()); // of arrays
        want.extend(2u64.to_le_bytes());
        want.extend(2u32.to_le_bytes()); // u16[1]
        want.extend(1u64.to_le_bytes());
        want.extend(7u16.to_le_bytes());
        want.extend(8u32.to_le_bytes()); // string[1]
        want.extend(1u64.to_le_bytes());
        want.extend(1u64.to_le_bytes());
        want.push(b'x');
        want.extend(1u64.to_le_bytes());
        want.push(b't');
        want.extend(2u32.to_le_bytes());
        want.extend(32u64.to_le_bytes());
        want.extend(2u64.to_le_bytes());
        want.extend(8u32.to_le_bytes());
        want.extend(0u64.to_le_bytes());
        let bytes = h.into_bytes();
        assert_eq!(bytes, want);
        let mut file = bytes.clone();
        file.resize(file.len().next_multiple_of(32) + 68, 0);
        let parsed = tpack_gguf::parse(&file).unwrap();
        assert_eq!(parsed.metadata.len(), 2);
        assert_eq!(parsed.tensors[0].dims, [32, 2]);
    }

    /// Big-endian as gguf-py writes it: the magic as it is, every number reversed.
    #[test]
    fn a_big_endian_header_reverses_every_number_but_the_magic() {
        let mut h = Header::new(3, 0, 1, true);
        h.pair("k", &MetaValue::U16(0x0102)).unwrap();
        let mut want = b"GGUF".to_vec();
        want.extend(3u32.to_be_bytes());
        want.extend(0u64.to_be_bytes());
        want.extend(1u64.to_be_bytes());
        want.extend(1u64.to_be_bytes());
        want.push(b'k');
        want.extend(2u32.to_be_bytes());
        want.extend([1, 2]);
        let bytes = h.into_bytes();
        assert_eq!(bytes, want);
        let parsed = tpack_gguf::parse(&bytes).unwrap();
        assert!(parsed.big_endian);
        assert_eq!(parsed.metadata, [("k", tpack_gguf::GgufValue::U16(0x0102))]);
    }

    #[test]
    fn what_gguf_cannot_hold_is_refused_in_words() {
        let mut h = Header::new(3, 0, 1, false);
        assert!(h.pair("b", &MetaValue::Bytes(b"x")).unwrap_err().contains("bytes, which GGUF has no type"));
        let scalar = [MetaValue::U8(1)];
        let e = h.pair("s", &MetaValue::ArrayArray(ArrayArray::new(&scalar))).unwrap_err();
        assert!(e.contains("holding a u8 item"), "{e}");
        let unknown = MetaValue::Unknown { code: 99, bytes: b"" };
        assert!(h.pair("u", &unknown).unwrap_err().contains("does not know"));
        // Nine levels (8 of array[] around a u8[]: the most a tpack value holds) are read back by tpack-gguf;
        // ten are not.
        let a1 = [MetaValue::U8Array(&[1])];
        let a2 = [MetaValue::ArrayArray(ArrayArray::new(&a1))];
        let a3 = [MetaValue::ArrayArray(ArrayArray::new(&a2))];
        let a4 = [MetaValue::ArrayArray(ArrayArray::new(&a3))];
        let a5 = [MetaValue::ArrayArray(ArrayArray::new(&a4))];
        let a6 = [MetaValue::ArrayArray(ArrayArray::new(&a5))];
        let a7 = [MetaValue::ArrayArray(ArrayArray::new(&a6))];
        let a8 = [MetaValue::ArrayArray(ArrayArray::new(&a7))];
        assert!(h.pair("d9", &MetaValue::ArrayArray(ArrayArray::new(&a8))).is_ok());
        let a9 = [MetaValue::ArrayArray(ArrayArray::new(&a8))];
        let e = h.pair("d10", &MetaValue::ArrayArray(ArrayArray::new(&a9))).unwrap_err();
        assert!(e.contains("nested more than 9 deep"), "{e}");
    }
}
