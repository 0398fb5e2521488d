//! The records of a tensor bundle's index: the messages of TensorFlow's `tensor_bundle.proto`,
//! `tensor_shape.proto`, `tensor_slice.proto` and `versions.proto` that a bundle uses, declared for prost with
//! the official field numbers and types; the `DataType` codes of `types.proto` tpack stores; and the key
//! under which a slice of a partitioned tensor is stored (`EncodeTensorNameSlice`, in TensorFlow's
//! `OrderedCode`).

use tpack::Dtype;

/// `BundleHeaderProto`: the record under the empty key.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BundleHeader {
    #[prost(int32, tag = "1")]
    pub(crate) num_shards: i32,
    /// `Endianness`: 0 little, 1 big.
    #[prost(int32, tag = "2")]
    pub(crate) endianness: i32,
    #[prost(message, optional, tag = "3")]
    pub(crate) version: Option<VersionDef>,
}

/// `VersionDef`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct VersionDef {
    #[prost(int32, tag = "1")]
    pub(crate) producer: i32,
    #[prost(int32, tag = "2")]
    pub(crate) min_consumer: i32,
    #[prost(int32, repeated, tag = "3")]
    pub(crate) bad_consumers: Vec<i32>,
}

/// `BundleEntryProto`: a tensor (or a slice of one), by its key.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BundleEntry {
    /// A `DataType` code.
    #[prost(int32, tag = "1")]
    pub(crate) dtype: i32,
    #[prost(message, optional, tag = "2")]
    pub(crate) shape: Option<TensorShape>,
    #[prost(int32, tag = "3")]
    pub(crate) shard_id: i32,
    #[prost(int64, tag = "4")]
    pub(crate) offset: i64,
    #[prost(int64, tag = "5")]
    pub(crate) size: i64,
    /// The masked CRC-32C of the tensor's bytes.
    #[prost(fixed32, tag = "6")]
    pub(crate) crc32c: u32,
    /// For a partitioned tensor, the slices it is stored in (each under its own key); the entry then has no
    /// bytes of its own.
    #[prost(message, repeated, tag = "7")]
    pub(crate) slices: Vec<TensorSlice>,
}

/// `TensorShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TensorShape {
    #[prost(message, repeated, tag = "2")]
    pub(crate) dim: Vec<Dim>,
    #[prost(bool, tag = "3")]
    pub(crate) unknown_rank: bool,
}

/// `TensorShapeProto.Dim`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Dim {
    #[prost(int64, tag = "1")]
    pub(crate) size: i64,
    #[prost(string, tag = "2")]
    pub(crate) name: String,
}

/// `TensorSliceProto`: one extent per dimension.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TensorSlice {
    #[prost(message, repeated, tag = "1")]
    pub(crate) extent: Vec<Extent>,
}

/// `TensorSliceProto.Extent`: `start`, and `length` unless the extent is the whole dimension.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Extent {
    #[prost(int64, tag = "1")]
    pub(crate) start: i64,
    #[prost(int64, optional, tag = "2")]
    pub(crate) length: Option<i64>,
}

/// What the bundle's `DataType` `code` is to tpack.
pub(crate) enum Kind {
    /// Stored as an entry of this dtype, little-endian as the bundle stores it.
    Stored(Dtype),
    /// Not numbers (strings, variants: a checkpoint's object graph, a dataset iterator): left out, with a note.
    Skipped(&'static str),
    /// Numbers tpack has no type for.
    Refused(&'static str),
}

/// The kind of the `DataType` `code` (`types.proto`).
pub(crate) fn kind(code: i32) -> Kind {
    match code {
        1 => Kind::Stored(Dtype::F32),
        2 => Kind::Stored(Dtype::F64),
        3 => Kind::Stored(Dtype::I32),
        4 => Kind::Stored(Dtype::U8),
        5 => Kind::Stored(Dtype::I16),
        6 => Kind::Stored(Dtype::I8),
        7 => Kind::Skipped("DT_STRING"),
        8 => Kind::Stored(Dtype::C64),
        9 => Kind::Stored(Dtype::I64),
        10 => Kind::Stored(Dtype::BOOL),
        11 => Kind::Refused("DT_QINT8"),
        12 => Kind::Refused("DT_QUINT8"),
        13 => Kind::Refused("DT_QINT32"),
        14 => Kind::Stored(Dtype::BF16),
        15 => Kind::Refused("DT_QINT16"),
        16 => Kind::Refused("DT_QUINT16"),
        17 => Kind::Stored(Dtype::U16),
        18 => Kind::Refused("DT_COMPLEX128"),
        19 => Kind::Stored(Dtype::F16),
        20 => Kind::Skipped("DT_RESOURCE"),
        21 => Kind::Skipped("DT_VARIANT"),
        22 => Kind::Stored(Dtype::U32),
        23 => Kind::Stored(Dtype::U64),
        24 => Kind::Stored(Dtype::F8E5M2),
        25 => Kind::Stored(Dtype::F8E4M3),
        26 => Kind::Stored(Dtype::F8E4M3FNUZ),
        27 => Kind::Refused("DT_FLOAT8_E4M3B11FNUZ"),
        28 => Kind::Stored(Dtype::F8E5M2FNUZ),
        // TensorFlow keeps these one element per byte; tpack's 4-bit types pack two.
        29 => Kind::Refused("DT_INT4"),
        30 => Kind::Refused("DT_UINT4"),
        31 => Kind::Refused("DT_INT2"),
        32 => Kind::Refused("DT_UINT2"),
        33 => Kind::Refused("DT_FLOAT4_E2M1FN"),
        _ => Kind::Refused("an unknown DataType"),
    }
}

/// The key a slice of the tensor `name` is stored under: `EncodeTensorNameSlice(name, slice)`, which is
/// `OrderedCode` of 0, the name, the rank, then each dimension's start and length (-1 for a whole dimension).
pub(crate) fn slice_key(name: &[u8], extents: &[(i64, i64)]) -> Vec<u8> {
    let mut key = Vec::with_capacity(name.len() + 8 + extents.len() * 4);
    num_increasing(&mut key, 0);
    for &b in name {
        match b {
            0x00 => key.extend_from_slice(&[0x00, 0xff]),
            0xff => key.extend_from_slice(&[0xff, 0x00]),
            b => key.push(b),
        }
    }
    key.extend_from_slice(&[0x00, 0x01]);
    num_increasing(&mut key, extents.len() as u64);
    for &(start, length) in extents {
        signed_num_increasing(&mut key, start);
        signed_num_increasing(&mut key, length);
    }
    key
}

/// `OrderedCode::WriteNumIncreasing`: a byte of length, then the big-endian bytes without leading zeros.
fn num_increasing(out: &mut Vec<u8>, v: u64) {
    let bytes = v.to_be_bytes();
    let skip = (v.leading_zeros() / 8) as usize;
    out.push((8 - skip) as u8);
    out.extend_from_slice(&bytes[skip..]);
}

/// `OrderedCode::WriteSignedNumIncreasing`: the two's-complement value in as few bytes as hold it with 7 bits
/// of length header per byte, its first bits giving the length in unary.
fn signed_num_increasing(out: &mut Vec<u8>, v: i64) {
    const HEADER: [[u8; 2]; 11] = [
        [0, 0],
        [0x80, 0],
        [0xc0, 0],
        [0xe0, 0],
        [0xf0, 0],
        [0xf8, 0],
        [0xfc, 0],
        [0xfe, 0],
        [0xff, 0],
        [0xff, 0x80],
        [0xff, 0xc0],
    ];
    let x = if v < 0 { !(v as u64) } else { v as u64 };
    let bits = 64 - x.leading_zeros() as usize;
    // Length n holds 7n - 1 bits of magnitude (one is the sign).
    let len = (bits + 7) / 7;
    let sign = if v < 0 { 0xff } else { 0x00 };
    let mut buf = [sign; 10];
    buf[2..].copy_from_slice(&v.to_be_bytes());
    let begin = 10 - len;
    buf[begin] ^= HEADER[len][0];
    if len > 1 {
        buf[begin + 1] ^= HEADER[len][1];
    }
    out.extend_from_slice(&buf[begin..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        signed_num_increasing(&mut out, v);
        out
    }

    #[test]
    fn signed_numbers_encode_as_ordered_code_does() {
        // Worked by hand from ordered_code.cc: 1 byte holds -64..63, 2 bytes -8192..8191, 10 bytes all.
        assert_eq!(signed(0), [0x80]);
        assert_eq!(signed(-1), [0x7f]);
        assert_eq!(signed(63), [0xbf]);
        assert_eq!(signed(-64), [0x40]);
        assert_eq!(signed(64), [0xc0, 0x40]);
        assert_eq!(signed(-65), [0x3f, 0xbf]);
        assert_eq!(signed(8191), [0xdf, 0xff]);
        assert_eq!(signed(8192), [0xe0, 0x20, 0x00]);
        assert_eq!(signed(i64::MAX), [0xff, 0xc0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(signed(i64::MIN), [0x00, 0x3f, 0x80, 0, 0, 0, 0, 0, 0, 0]);
        // Increasing: byte order follows number order.
        let mut last = signed(-100_000);
        for v in -99_999..100_000 {
            let next = signed(v);
            assert!(last < next, "{v}");
            last = next;
        }
    }

    #[test]
    fn a_slice_key_is_the_name_escaped_then_its_extents() {
        assert_eq!(
            slice_key(b"a\x00b\xff", &[(0, 10), (2, -1)]),
            [&[0x00][..], b"a\x00\xffb\xff\x00", &[0x00, 0x01, 0x01, 0x02, 0x80, 0x8a, 0x82, 0x7f]].concat()
        );
    }
}
