//! Static, NUL-terminated names for C: dtype and metadata type names, rule ids and names. The dtype and type
//! tables are built at compile time from the core's own names (so they cannot drift from them), each name in a
//! row just wide enough for the longest plus its NUL; rule ids and names are the core's NUL-terminated texts
//! (`tpack::Rule::id_c`), the ones its messages are printed from.

use core::ffi::c_char;

use tpack::{Dtype, MetaType};

use crate::boundary::guard_value;
use crate::error::rule;

/// The longest of `names`, in bytes.
const fn longest(names: &[&str]) -> usize {
    let mut max = 0;
    let mut rest = names;
    while let [first, tail @ ..] = rest {
        if first.len() > max {
            max = first.len();
        }
        rest = tail;
    }
    max
}

/// `names` as NUL-terminated rows of `W` bytes; a name too long for its row is a compile error.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // const evaluation: an error fails the build
const fn rows<const N: usize, const W: usize>(names: [&str; N]) -> [[u8; W]; N] {
    let mut out = [[0u8; W]; N];
    let mut i = 0;
    while i < N {
        let name = names[i].as_bytes();
        assert!(name.len() < W, "a name does not fit its row");
        let mut j = 0;
        while j < name.len() {
            out[i][j] = name[j];
            j += 1;
        }
        i += 1;
    }
    out
}

/// Builds `[&str; N]` from a `const fn(index) -> &str`.
macro_rules! names {
    ($n:expr, |$i:ident| $name:expr) => {{
        let mut out = [""; $n];
        let mut $i = 0;
        #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // const evaluation
        while $i < $n {
            out[$i] = $name;
            $i += 1;
        }
        out
    }};
}

const DTYPES: usize = Dtype::ALL.len();
#[allow(clippy::indexing_slicing)] // const evaluation
const DTYPE_NAMES: [&str; DTYPES] = names!(DTYPES, |i| match Dtype::ALL[i].name() {
    Some(n) => n,
    None => "",
});
static DTYPE_ROWS: [[u8; longest(&DTYPE_NAMES) + 1]; DTYPES] = rows(DTYPE_NAMES);

const META_TYPES: usize = MetaType::ALL.len();
#[allow(clippy::indexing_slicing)] // const evaluation
const META_TYPE_NAMES: [&str; META_TYPES] = names!(META_TYPES, |i| match MetaType::ALL[i].name() {
    Some(n) => n,
    None => "",
});
static META_TYPE_ROWS: [[u8; longest(&META_TYPE_NAMES) + 1]; META_TYPES] = rows(META_TYPE_NAMES);

/// The row at `position` of a table, as a C string; NULL past the end.
fn row<const W: usize>(table: &'static [[u8; W]], position: Option<usize>) -> *const c_char {
    position.and_then(|i| table.get(i)).map_or(core::ptr::null(), |r| r.as_ptr().cast())
}

/// The spec's name of dtype `code` ("F32", "Q8_0", …), static and NUL-terminated; NULL for a code this library
/// does not know (a file of a newer minor version may use one).
#[no_mangle]
pub extern "C" fn tpack_dtype_name(code: u16) -> *const c_char {
    guard_value(core::ptr::null(), || row(&DTYPE_ROWS, Dtype::ALL.iter().position(|d| d.code() == code)))
}

/// The spec's name of metadata type `code` ("u64", "string[]", …), static and NUL-terminated; NULL for a code
/// this library does not know.
#[no_mangle]
pub extern "C" fn tpack_meta_type_name(code: u8) -> *const c_char {
    guard_value(core::ptr::null(), || {
        row(&META_TYPE_ROWS, MetaType::ALL.iter().position(|t| t.code() == code))
    })
}

/// The id of rule `number` as the spec writes it ("R13"), static and NUL-terminated; NULL for a number that
/// is no rule (0 included).
#[no_mangle]
pub extern "C" fn tpack_rule_id(number: u32) -> *const c_char {
    // The core's own NUL-terminated text, which its messages are printed from: no second table here.
    guard_value(core::ptr::null(), || rule(number).map_or(core::ptr::null(), |r| r.id_c().as_ptr()))
}

/// The short name of rule `number` ("HeaderChecksum"), static and NUL-terminated; NULL for a number that is
/// no rule (0 included).
#[no_mangle]
pub extern "C" fn tpack_rule_name(number: u32) -> *const c_char {
    guard_value(core::ptr::null(), || rule(number).map_or(core::ptr::null(), |r| r.name_c().as_ptr()))
}
