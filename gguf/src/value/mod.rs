//! Metadata values as [`crate::parse`] returns them: scalars, strings, and arrays that are validated views of
//! the file read element by element ([`GgufArray`]), with the cursor that decodes them (`cursor`).

use core::fmt;

use crate::format::value_type_name;
#[cfg(doc)]
use crate::format::MAX_ARRAY_DEPTH;

pub(crate) mod cursor;

pub(crate) use cursor::Reader;

/// One metadata value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GgufValue<'a> {
    /// A `uint8`.
    U8(u8),
    /// A `int8`.
    I8(i8),
    /// A `uint16`.
    U16(u16),
    /// A `int16`.
    I16(i16),
    /// A `uint32`.
    U32(u32),
    /// A `int32`.
    I32(i32),
    /// A `float32`.
    F32(f32),
    /// A `bool`, stored as one byte that is 0 or 1.
    Bool(bool),
    /// A `string`: UTF-8, borrowed from the input.
    String(&'a str),
    /// A `uint64`.
    U64(u64),
    /// A `int64`.
    I64(i64),
    /// A `float64`.
    F64(f64),
    /// An `array`.
    Array(GgufArray<'a>),
}

impl GgufValue<'_> {
    /// The GGUF name of this value's type, as in gguf.md (`"uint32"`, `"string"`, `"array"`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            GgufValue::U8(_) => "uint8",
            GgufValue::I8(_) => "int8",
            GgufValue::U16(_) => "uint16",
            GgufValue::I16(_) => "int16",
            GgufValue::U32(_) => "uint32",
            GgufValue::I32(_) => "int32",
            GgufValue::F32(_) => "float32",
            GgufValue::Bool(_) => "bool",
            GgufValue::String(_) => "string",
            GgufValue::U64(_) => "uint64",
            GgufValue::I64(_) => "int64",
            GgufValue::F64(_) => "float64",
            GgufValue::Array(_) => "array",
        }
    }
}

/// One metadata array, borrowed from the input and read element by element: all its elements have one
/// type, and the elements of an array of arrays each carry their own element type and length.
///
/// The parser checked every element (booleans 0 or 1, strings UTF-8, nesting at most [`MAX_ARRAY_DEPTH`]
/// levels) but copied none: a file of a million arrays costs no memory per array until they are iterated,
/// and iterating costs O(1) memory per level.
#[derive(Clone, Copy)]
pub struct GgufArray<'a> {
    /// The element type code, one of the known value types.
    element_type: u32,
    /// The number of elements.
    len: usize,
    /// The elements as stored, exactly their bytes.
    bytes: &'a [u8],
    /// Whether numbers are stored big-endian.
    big_endian: bool,
    /// The array's nesting level: 1 for a metadata value, 2 for an element of one, ...
    depth: usize,
}

impl<'a> GgufArray<'a> {
    /// An array of `len` elements of type `element_type`, stored in `bytes`, which the parser validated.
    pub(crate) fn from_validated(
        element_type: u32,
        len: usize,
        bytes: &'a [u8],
        big_endian: bool,
        depth: usize,
    ) -> Self {
        Self { element_type, len, bytes, big_endian, depth }
    }

    /// The number of elements.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The GGUF name of the element type (`"uint32"`, `"string"`, `"array"`, ...).
    #[must_use]
    pub fn element_type_name(&self) -> &'static str {
        value_type_name(self.element_type).unwrap_or("array")
    }

    /// The elements in order, each decoded as it is reached: numbers in the host's terms (a big-endian
    /// file's already swapped), strings borrowed, arrays as views like this one.
    #[must_use]
    pub fn iter(&self) -> GgufElements<'a> {
        GgufElements {
            element_type: self.element_type,
            remaining: self.len,
            depth: self.depth,
            reader: Reader::of_validated(self.bytes, self.big_endian),
        }
    }
}

impl<'a> IntoIterator for &GgufArray<'a> {
    type Item = GgufValue<'a>;
    type IntoIter = GgufElements<'a>;

    fn into_iter(self) -> GgufElements<'a> {
        self.iter()
    }
}

impl PartialEq for GgufArray<'_> {
    /// The same element type and the same elements, whichever byte order each was stored in.
    fn eq(&self, other: &Self) -> bool {
        self.element_type == other.element_type && self.len == other.len && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for GgufArray<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.element_type_name())?;
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The elements of a [`GgufArray`], from [`GgufArray::iter`].
#[derive(Clone)]
pub struct GgufElements<'a> {
    element_type: u32,
    remaining: usize,
    depth: usize,
    reader: Reader<'a>,
}

impl<'a> Iterator for GgufElements<'a> {
    type Item = GgufValue<'a>;

    fn next(&mut self) -> Option<GgufValue<'a>> {
        self.remaining = self.remaining.checked_sub(1)?;
        // The parser validated these bytes, so decoding cannot fail; if it did, the iterator ends.
        match self.reader.element(self.element_type, self.depth) {
            Ok(value) => Some(value),
            Err(_) => {
                self.remaining = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for GgufElements<'_> {}

impl core::iter::FusedIterator for GgufElements<'_> {}
