//! The pickle opcodes this machine knows, by the names CPython's `pickletools` gives them.

pub(crate) const MARK: u8 = b'(';
pub(crate) const STOP: u8 = b'.';
pub(crate) const POP: u8 = b'0';
pub(crate) const POP_MARK: u8 = b'1';
pub(crate) const DUP: u8 = b'2';
pub(crate) const INT: u8 = b'I';
pub(crate) const BININT: u8 = b'J';
pub(crate) const BININT1: u8 = b'K';
pub(crate) const BININT2: u8 = b'M';
pub(crate) const LONG1: u8 = 0x8a;
pub(crate) const LONG4: u8 = 0x8b;
pub(crate) const NONE: u8 = b'N';
pub(crate) const NEWTRUE: u8 = 0x88;
pub(crate) const NEWFALSE: u8 = 0x89;
pub(crate) const BINFLOAT: u8 = b'G';
pub(crate) const BINUNICODE: u8 = b'X';
pub(crate) const SHORT_BINUNICODE: u8 = 0x8c;
pub(crate) const BINUNICODE8: u8 = 0x8d;
pub(crate) const BINSTRING: u8 = b'T';
pub(crate) const SHORT_BINSTRING: u8 = b'U';
pub(crate) const BINBYTES: u8 = b'B';
pub(crate) const SHORT_BINBYTES: u8 = b'C';
pub(crate) const BINBYTES8: u8 = 0x8e;
pub(crate) const EMPTY_TUPLE: u8 = b')';
pub(crate) const TUPLE: u8 = b't';
pub(crate) const TUPLE1: u8 = 0x85;
pub(crate) const TUPLE2: u8 = 0x86;
pub(crate) const TUPLE3: u8 = 0x87;
pub(crate) const EMPTY_LIST: u8 = b']';
pub(crate) const LIST: u8 = b'l';
pub(crate) const APPEND: u8 = b'a';
pub(crate) const APPENDS: u8 = b'e';
pub(crate) const EMPTY_DICT: u8 = b'}';
pub(crate) const DICT: u8 = b'd';
pub(crate) const SETITEM: u8 = b's';
pub(crate) const SETITEMS: u8 = b'u';
pub(crate) const GLOBAL: u8 = b'c';
pub(crate) const STACK_GLOBAL: u8 = 0x93;
pub(crate) const REDUCE: u8 = b'R';
pub(crate) const BUILD: u8 = b'b';
pub(crate) const INST: u8 = b'i';
pub(crate) const OBJ: u8 = b'o';
pub(crate) const NEWOBJ: u8 = 0x81;
pub(crate) const PUT: u8 = b'p';
pub(crate) const BINPUT: u8 = b'q';
pub(crate) const LONG_BINPUT: u8 = b'r';
pub(crate) const MEMOIZE: u8 = 0x94;
pub(crate) const GET: u8 = b'g';
pub(crate) const BINGET: u8 = b'h';
pub(crate) const LONG_BINGET: u8 = b'j';
pub(crate) const PROTO: u8 = 0x80;
pub(crate) const FRAME: u8 = 0x95;
pub(crate) const PERSID: u8 = b'P';
pub(crate) const BINPERSID: u8 = b'Q';

/// The name of an opcode this machine refuses, for its message (`None`: not an opcode at all).
pub(crate) fn refused_name(op: u8) -> Option<&'static str> {
    Some(match op {
        b'L' => "LONG (protocol 0)",
        b'S' => "STRING (protocol 0)",
        b'V' => "UNICODE (protocol 0)",
        b'F' => "FLOAT (protocol 0)",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x8f => "EMPTY_SET",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        0x92 => "NEWOBJ_EX",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => return None,
    })
}
