//! Shared by the fuzz targets: calling every accessor of a container, and the models the round-trip and
//! writer targets draw from the fuzzer's bytes.

use arbitrary::Arbitrary;
use tpack::zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
use tpack::{Container, Dtype, MetaType, MetaValue, OwnedMetaValue};

/// Calls every accessor, recursing into nested containers: none may panic, whatever the container.
pub fn touch_everything(c: &Container<'_>) {
    let _ = c.verify();
    let _ = (c.version(), c.compat_flags(), c.depth(), c.header(), c.as_bytes().len());
    for e in c.entries() {
        let _ = (e.name(), e.dtype(), e.shape().elements(), e.shape().rank(), e.alignment(), e.target());
        let _ = (e.range(), e.offset(), e.byte_len(), e.payload().len(), e.checksum(), e.verify());
        let _ = (e.le::<F64>(), e.le::<F32>(), e.le::<I64>(), e.le::<I32>(), e.le::<I16>());
        let _ = (e.le::<U64>(), e.le::<U32>(), e.le::<U16>());
        let _ = (e.native::<f32>(), e.native::<u8>(), e.native::<i64>(), e.native::<u16>());
        assert_eq!(
            c.get(e.name()).map(|f| f.position()),
            Some(e.position()),
            "lookup by name finds the entry"
        );
        if let Some(n) = e.nested() {
            touch_everything(&n);
        }
    }
    assert!(c.entry(c.len()).is_none());
    assert!(c.get("\u{0}no such name").is_none());
    for (key, value) in c.metadata() {
        if let MetaValue::StringArray(items) = value {
            items.for_each(drop);
        }
        // Compared by type: an f64 NaN is not equal to itself.
        let found = c.metadata().get(key).map(|v| v.value_type());
        assert_eq!(found, Some(value.value_type()), "lookup by key finds the record");
    }
}

/// Dtypes the generators pick from (not CONTAINER: a nested container must itself be valid).
pub const DTYPES: [Dtype; 18] = [
    Dtype::F64,
    Dtype::F32,
    Dtype::F16,
    Dtype::BF16,
    Dtype::F8E4M3,
    Dtype::F8E5M2,
    Dtype::I64,
    Dtype::I32,
    Dtype::I16,
    Dtype::I8,
    Dtype::U64,
    Dtype::U32,
    Dtype::U16,
    Dtype::U8,
    Dtype::BOOL,
    Dtype::Q8_0,
    Dtype::Q4_0,
    Dtype::RAW,
];

/// An entry as the fuzzer describes it; `shape_and_len` turns it into a consistent shape and length.
#[derive(Arbitrary, Debug, Clone)]
pub struct EntryModel {
    pub name: String,
    pub dtype: u8,
    pub dims: Vec<u8>,
    pub align_log2: u8,
    pub target: Option<u64>,
    pub fill: u8,
}

impl EntryModel {
    pub fn dtype(&self) -> Dtype {
        DTYPES[usize::from(self.dtype) % DTYPES.len()]
    }

    pub fn alignment(&self) -> u32 {
        1 << (self.align_log2 % 17)
    }

    /// A shape that fits the dtype (dims kept small so payloads stay small) and its byte length.
    pub fn shape_and_len(&self) -> (Vec<u64>, usize) {
        let dtype = self.dtype();
        let mut shape: Vec<u64> = self.dims.iter().take(8).map(|&d| u64::from(d % 6)).collect();
        match dtype.packing().unwrap() {
            tpack::format::Packing::Element(size) => {
                let n: u64 = shape.iter().product();
                (shape, (n * size) as usize)
            }
            tpack::format::Packing::Block { block_elems, block_bytes } => {
                if shape.is_empty() {
                    shape.push(1);
                }
                *shape.last_mut().unwrap() *= block_elems;
                let n: u64 = shape.iter().product();
                (shape, (n / block_elems * block_bytes) as usize)
            }
            tpack::format::Packing::Bytes => {
                let len = shape.first().copied().unwrap_or(3) * 7;
                (vec![len], len as usize)
            }
        }
    }

    pub fn payload(&self, len: usize) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31) ^ self.fill).collect()
    }
}

/// A metadata value as the fuzzer describes it: a type code, and the value as a record's inline bits (`u64`,
/// `i64`, `f64`, `bool`) or as a pool encoding (every other type, format 1.1's included).
#[derive(Arbitrary, Debug, Clone)]
pub struct MetaModel {
    pub code: u8,
    pub bits: u64,
    pub encoded: Vec<u8>,
}

impl MetaModel {
    /// The value described; `None` for an unknown type, or bits or bytes that are no valid value of the type.
    pub fn value(&self) -> Option<OwnedMetaValue> {
        let value_type = MetaType::from_code(self.code);
        if value_type.is_inline() {
            OwnedMetaValue::try_from(MetaValue::from_inline(value_type, self.bits)?).ok()
        } else {
            OwnedMetaValue::from_encoded(value_type, self.encoded.clone()).ok()
        }
    }
}
