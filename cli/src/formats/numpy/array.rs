//! One `.npy` array as a tpack entry: its `descr` as a tpack dtype, its length checked against the bytes
//! that follow the header, and its elements as tpack holds them (C order, little-endian).
//!
//! - Little-endian C-order arrays are borrowed as they are (no copy).
//! - Big-endian (`>`) arrays are byte-swapped element by element (each half of a complex number apart).
//! - Fortran-order arrays are transposed into C order (a copy); with at most one dimension above 1 both
//!   orders are the same bytes and nothing is copied.
//! - Object arrays (`|O`), strings, datetimes, void (`|V2`, which is how `ml_dtypes.bfloat16` arrays are
//!   saved: the file does not say they are bfloat16) and dtypes tpack lacks are refused by name; an object
//!   array's pickled data is never read.

use std::borrow::Cow;

use bytes::Bytes;
use tpack::format::DEFAULT_ALIGNMENT;
use tpack::Dtype;

use super::header::{self, Header};
use crate::formats::tpack::{OutEntry, Payload};

/// A `descr` tpack can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Descr {
    /// The tpack dtype.
    pub(crate) dtype: Dtype,
    /// Bytes per element.
    pub(crate) width: usize,
    /// Bytes per byte-swapped unit: the element, or half of it for a complex number.
    pub(crate) swap_unit: usize,
    /// Whether the elements are big-endian.
    pub(crate) big_endian: bool,
}

/// The `descr` numpy writes for each tpack dtype it has, little-endian: the inverse of [`descr`].
pub(crate) const DESCRS: [(Dtype, &str); 13] = [
    (Dtype::F16, "<f2"),
    (Dtype::F32, "<f4"),
    (Dtype::F64, "<f8"),
    (Dtype::I8, "|i1"),
    (Dtype::I16, "<i2"),
    (Dtype::I32, "<i4"),
    (Dtype::I64, "<i8"),
    (Dtype::U8, "|u1"),
    (Dtype::U16, "<u2"),
    (Dtype::U32, "<u4"),
    (Dtype::U64, "<u8"),
    (Dtype::BOOL, "|b1"),
    (Dtype::C64, "<c8"),
];

/// The tpack dtype of a `descr` string.
///
/// # Errors
/// Why tpack cannot hold it, in words.
pub(crate) fn descr(text: &str) -> Result<Descr, String> {
    let mut chars = text.chars();
    let order = chars.next();
    let code = chars.as_str();
    let big_endian = match order {
        Some('<' | '|') => false,
        Some('>') => true,
        _ => {
            return Err(format!(
                "its dtype {text:?} does not start with a byte order numpy writes ('<', '>' or '|')"
            ))
        }
    };
    if code.starts_with('O') {
        return Err(
            "it is an object array (dtype '|O'), whose elements are pickled Python objects; tpack never \
                    unpickles data, and tensors have no object dtype"
                .to_owned(),
        );
    }
    if code.starts_with('V') {
        return Err(format!(
            "its dtype {text:?} is raw void bytes, which has no tensor dtype (ml_dtypes saves bfloat16 and float8 \
             arrays this way, and the file does not record which they were); convert that array to float32 or \
             save it with safetensors"
        ));
    }
    let (dtype, width, swap_unit) = match code {
        "f2" => (Dtype::F16, 2, 2),
        "f4" => (Dtype::F32, 4, 4),
        "f8" => (Dtype::F64, 8, 8),
        "i1" => (Dtype::I8, 1, 1),
        "i2" => (Dtype::I16, 2, 2),
        "i4" => (Dtype::I32, 4, 4),
        "i8" => (Dtype::I64, 8, 8),
        "u1" => (Dtype::U8, 1, 1),
        "u2" => (Dtype::U16, 2, 2),
        "u4" => (Dtype::U32, 4, 4),
        "u8" => (Dtype::U64, 8, 8),
        "b1" => (Dtype::BOOL, 1, 1),
        "c8" => (Dtype::C64, 8, 4),
        _ => {
            return Err(format!(
            "its dtype {text:?} has no tpack dtype (tpack holds float16/32/64, int8-64, uint8-64, bool and \
                 complex64)"
        ))
        }
    };
    Ok(Descr { dtype, width, swap_unit, big_endian })
}

/// The bytes an array is read from: mapped from the input, or made by the reader (a decompressed `.npz`
/// member).
#[derive(Debug, Clone)]
pub(crate) enum Data<'a> {
    /// Borrowed from the input.
    Mapped(&'a [u8]),
    /// Held by the reader.
    Owned(Bytes),
}

impl Data<'_> {
    fn as_slice(&self) -> &[u8] {
        match self {
            Data::Mapped(b) => b,
            Data::Owned(b) => b,
        }
    }
}

/// What the conversion did to one array, for the notes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Changes {
    /// Its elements were big-endian and were byte-swapped.
    pub(crate) swapped: bool,
    /// It was in Fortran order and was transposed.
    pub(crate) transposed: bool,
}

/// The `.npy` array in `data` as the entry `name`.
///
/// # Errors
/// Why it is refused, in words (the caller adds the file and the array's name).
pub(crate) fn entry<'a>(name: Cow<'a, str>, data: Data<'a>) -> Result<(OutEntry<'a>, Changes), String> {
    let bytes = data.as_slice();
    let h = header::parse(bytes).map_err(|e| e.to_string())?;
    let d = descr(&h.descr)?;
    let len = byte_len(&h, d.width)?;
    let have = bytes.len().saturating_sub(h.data_offset);
    if have != len {
        return Err(format!(
            "its header gives {} elements of {} bytes ({len} bytes) and {have} bytes follow it",
            element_count(&h.shape).unwrap_or(0),
            d.width
        ));
    }
    let elements = bytes.get(h.data_offset..).unwrap_or_default();
    if d.dtype == Dtype::BOOL {
        if let Some(at) = elements.iter().position(|&b| b > 1) {
            return Err(format!(
                "its bool element {at} is the byte {}, where a bool is 0 or 1",
                elements[at]
            ));
        }
    }
    let transpose = h.fortran_order && h.shape.iter().filter(|&&n| n > 1).count() > 1;
    let swap = d.big_endian && d.swap_unit > 1;
    let changes = Changes { swapped: swap, transposed: transpose };
    let range = h.data_offset..bytes.len();
    let payload = match (&data, transpose, swap) {
        (Data::Mapped(b), false, false) => Payload::Bytes(b.get(range).unwrap_or_default()),
        (Data::Mapped(b), false, true) => {
            Payload::Swapped { bytes: b.get(range).unwrap_or_default(), width: d.swap_unit }
        }
        (Data::Owned(b), false, false) => Payload::Shared(b.slice(range)),
        _ => {
            let mut out = if transpose { to_c_order(elements, &h.shape, d.width) } else { elements.to_vec() };
            if swap {
                for unit in out.chunks_exact_mut(d.swap_unit) {
                    unit.reverse();
                }
            }
            Payload::Shared(Bytes::from(out))
        }
    };
    let entry = OutEntry {
        name,
        dtype: d.dtype,
        shape: h.shape,
        alignment: DEFAULT_ALIGNMENT,
        target: None,
        length: len as u64,
        payload,
    };
    Ok((entry, changes))
}

/// The number of elements of `shape`, if it fits in a `u64`.
fn element_count(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
}

/// The byte length of the array `h` describes, checked for overflow.
fn byte_len(h: &Header, width: usize) -> Result<usize, String> {
    element_count(&h.shape)
        .and_then(|n| n.checked_mul(width as u64))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("its shape {:?} has more bytes than this machine can address", h.shape))
}

/// `elements`, a Fortran-order array of `shape` with `width`-byte elements, in C order. `elements` has
/// exactly the array's length (checked by the caller).
fn to_c_order(elements: &[u8], shape: &[u64], width: usize) -> Vec<u8> {
    let dims: Vec<usize> = shape.iter().map(|&d| usize::try_from(d).unwrap_or(0)).collect();
    // In Fortran order the first index moves fastest: its stride is one element.
    let mut strides = Vec::with_capacity(dims.len());
    let mut stride = width;
    for &d in &dims {
        strides.push(stride);
        stride = stride.saturating_mul(d);
    }
    let mut out = Vec::with_capacity(elements.len());
    let mut index = vec![0usize; dims.len()];
    let mut from = 0usize;
    let count = elements.len() / width.max(1);
    for _ in 0..count {
        out.extend_from_slice(elements.get(from..from + width).unwrap_or_default());
        // The odometer of C order: the last index moves fastest.
        for k in (0..dims.len()).rev() {
            index[k] += 1;
            from += strides[k];
            if index[k] < dims[k] {
                break;
            }
            from -= strides[k] * dims[k];
            index[k] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_descr_numpy_writes_for_a_tpack_dtype_comes_back() {
        for (dtype, text) in DESCRS {
            let d = descr(text).unwrap();
            assert_eq!((d.dtype, d.big_endian), (dtype, false), "{text}");
            let big = descr(&text.replace('<', ">")).unwrap();
            assert_eq!(big.big_endian, text.starts_with('<'), "{text}");
        }
        assert_eq!(descr("<i1").unwrap().dtype, Dtype::I8);
        assert_eq!(descr(">c8").unwrap().swap_unit, 4);
    }

    #[test]
    fn object_void_and_foreign_dtypes_are_refused_by_name() {
        assert!(descr("|O").unwrap_err().contains("never unpickles"));
        assert!(descr("|V2").unwrap_err().contains("bfloat16"));
        for other in ["<U3", "|S4", "<M8[s]", "<c16", "<f16", "=f4", "f4", ""] {
            assert!(descr(other).is_err(), "{other}");
        }
    }

    #[test]
    fn fortran_order_is_transposed() {
        // numpy.asfortranarray(numpy.arange(6).reshape(2, 3)) stores 0 3 1 4 2 5.
        let f: Vec<u8> = [0u8, 3, 1, 4, 2, 5].to_vec();
        assert_eq!(to_c_order(&f, &[2, 3], 1), [0, 1, 2, 3, 4, 5]);
        // arange(24).reshape(2, 3, 4) in Fortran order: element (i, j, k) at i + 2j + 6k.
        let mut f3 = [0u16; 24];
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    f3[i + 2 * j + 6 * k] = (i * 12 + j * 4 + k) as u16;
                }
            }
        }
        let bytes: Vec<u8> = f3.iter().flat_map(|v| v.to_le_bytes()).collect();
        let c: Vec<u16> =
            to_c_order(&bytes, &[2, 3, 4], 2).chunks(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        assert_eq!(c, (0..24).collect::<Vec<u16>>());
        assert!(to_c_order(&[], &[0, 3], 4).is_empty());
    }
}
