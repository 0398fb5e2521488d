//! Element types, named as PyTorch names their storage classes (`torch.FloatStorage`) and dtypes
//! (`torch.float32`).

/// The type of one element of a storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Element {
    /// `torch.float64`.
    F64,
    /// `torch.float32`.
    F32,
    /// `torch.float16`.
    F16,
    /// `torch.bfloat16`.
    BF16,
    /// `torch.float8_e4m3fn`.
    F8E4M3,
    /// `torch.float8_e5m2`.
    F8E5M2,
    /// `torch.int64`.
    I64,
    /// `torch.int32`.
    I32,
    /// `torch.int16`.
    I16,
    /// `torch.int8`.
    I8,
    /// `torch.uint64`.
    U64,
    /// `torch.uint32`.
    U32,
    /// `torch.uint16`.
    U16,
    /// `torch.uint8`, also the element of `torch.UntypedStorage`.
    U8,
    /// `torch.bool`, one byte each.
    Bool,
    /// `torch.complex64`.
    C64,
    /// `torch.complex128`.
    C128,
}

/// Each element type with its storage class name (`torch.<name>`), dtype name (`torch.<name>`) and size.
const TABLE: [(Element, &str, &str, u8); 17] = [
    (Element::F64, "DoubleStorage", "float64", 8),
    (Element::F32, "FloatStorage", "float32", 4),
    (Element::F16, "HalfStorage", "float16", 2),
    (Element::BF16, "BFloat16Storage", "bfloat16", 2),
    (Element::F8E4M3, "Float8_e4m3fnStorage", "float8_e4m3fn", 1),
    (Element::F8E5M2, "Float8_e5m2Storage", "float8_e5m2", 1),
    (Element::I64, "LongStorage", "int64", 8),
    (Element::I32, "IntStorage", "int32", 4),
    (Element::I16, "ShortStorage", "int16", 2),
    (Element::I8, "CharStorage", "int8", 1),
    (Element::U64, "UInt64Storage", "uint64", 8),
    (Element::U32, "UInt32Storage", "uint32", 4),
    (Element::U16, "UInt16Storage", "uint16", 2),
    (Element::U8, "ByteStorage", "uint8", 1),
    (Element::Bool, "BoolStorage", "bool", 1),
    (Element::C64, "ComplexFloatStorage", "complex64", 8),
    (Element::C128, "ComplexDoubleStorage", "complex128", 16),
];

impl Element {
    /// The element type of the storage class `torch.<name>` (`torch.UntypedStorage` holds bytes).
    #[must_use]
    pub fn of_storage_class(name: &str) -> Option<Element> {
        if name == "UntypedStorage" {
            return Some(Element::U8);
        }
        TABLE.iter().find(|row| row.1 == name).map(|row| row.0)
    }

    /// The element type of the dtype `torch.<name>`.
    #[must_use]
    pub fn of_dtype(name: &str) -> Option<Element> {
        TABLE.iter().find(|row| row.2 == name).map(|row| row.0)
    }

    /// PyTorch's name of the dtype (`float32`).
    #[must_use]
    pub fn dtype_name(self) -> &'static str {
        TABLE.iter().find(|row| row.0 == self).map_or("?", |row| row.2)
    }

    /// Bytes per element.
    #[must_use]
    pub fn size(self) -> u64 {
        TABLE.iter().find(|row| row.0 == self).map_or(1, |row| u64::from(row.3))
    }
}
