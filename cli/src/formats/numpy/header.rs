//! The `.npy` header (numpy's `format.py`, NEP 1): the magic `\x93NUMPY`, a major and minor version, the
//! header's length (a little-endian `u16` in version 1, `u32` in 2 and 3), and the header itself, a Python
//! dict literal padded with spaces and ended by `\n`:
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
//!
//! The dict is read by a strict parser of its own for exactly that shape (the three keys, once each, in any
//! order; string, boolean and tuple-of-integers values), never evaluated. A `descr` that is not a string
//! (a structured dtype's list of fields) is refused by name.

use std::fmt;

/// The first bytes of every `.npy` file.
pub(crate) const MAGIC: &[u8] = b"\x93NUMPY";

/// The most dimensions a header may list: numpy's own `NPY_MAXDIMS` (64 since numpy 2.0).
pub(crate) const MAX_DIMS: usize = 64;

/// What a `.npy` header says, checked against itself (not yet against the data that follows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    /// `(major, minor)`: 1.0, 2.0 or 3.0.
    pub(crate) version: (u8, u8),
    /// The `descr` string, as written (`'<f4'`, `'|b1'`, `'>i8'`, `'|O'`).
    pub(crate) descr: String,
    /// Whether the elements are in column-major (Fortran) order.
    pub(crate) fortran_order: bool,
    /// The shape, outermost first (numpy's order); `[]` for a 0-d array.
    pub(crate) shape: Vec<u64>,
    /// Where the elements start: the length of magic, version, length field and header.
    pub(crate) data_offset: usize,
}

/// Why a `.npy` header is refused: one reason each, with the byte offset where it applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeaderError {
    /// The file does not start with [`MAGIC`].
    Magic,
    /// The file ends inside the fixed prelude or the header.
    Truncated { need: u64, have: usize },
    /// A version numpy never wrote.
    Version { major: u8, minor: u8 },
    /// The header is not Latin-1 (versions 1 and 2 are always decodable) or UTF-8 text (version 3).
    Encoding,
    /// The header does not end with a newline.
    NoNewline,
    /// The dict literal does not parse: what was expected, at which character of the header.
    Syntax { at: usize, expected: &'static str },
    /// A key numpy does not write.
    UnknownKey(String),
    /// A key given twice.
    DuplicateKey(&'static str),
    /// A key missing.
    MissingKey(&'static str),
    /// `descr` is a list of fields: a structured array.
    Structured,
    /// More than [`MAX_DIMS`] dimensions.
    TooManyDims(usize),
    /// A dimension above `u64::MAX`, or not a non-negative integer.
    BadDimension { at: usize },
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Magic => write!(f, "it does not start with the .npy magic \\x93NUMPY"),
            HeaderError::Truncated { need, have } => {
                write!(f, "its header needs {need} bytes and the file has {have}")
            }
            HeaderError::Version { major, minor } => {
                write!(f, "its format version is {major}.{minor}, and numpy writes 1.0, 2.0 and 3.0")
            }
            HeaderError::Encoding => write!(f, "its header is not valid text for its version"),
            HeaderError::NoNewline => write!(f, "its header does not end with a newline"),
            HeaderError::Syntax { at, expected } => {
                write!(f, "its header is not the dict numpy writes: expected {expected} at character {at}")
            }
            HeaderError::UnknownKey(k) => write!(
                f,
                "its header has the key {k:?}, and numpy writes only 'descr', 'fortran_order' and 'shape'"
            ),
            HeaderError::DuplicateKey(k) => write!(f, "its header gives the key '{k}' twice"),
            HeaderError::MissingKey(k) => write!(f, "its header lacks the key '{k}'"),
            HeaderError::Structured => write!(
                f,
                "it holds a structured array (its 'descr' is a list of fields), which has no tensor dtype; save \
                 each field as an array of its own"
            ),
            HeaderError::TooManyDims(n) => {
                write!(f, "its shape has {n} dimensions, more than numpy's {MAX_DIMS}")
            }
            HeaderError::BadDimension { at } => {
                write!(f, "its shape has a dimension at character {at} that is not an integer from 0 to 2^64 - 1")
            }
        }
    }
}

/// Length of the magic and the two version bytes.
const PRELUDE: usize = 8;

/// Parses the header at the start of `bytes`.
///
/// # Errors
/// A [`HeaderError`] naming the first thing that is not as numpy writes it.
pub(crate) fn parse(bytes: &[u8]) -> Result<Header, HeaderError> {
    let truncated = |need: usize| HeaderError::Truncated { need: need as u64, have: bytes.len() };
    if !bytes.starts_with(MAGIC) {
        let n = bytes.len().min(MAGIC.len());
        return Err(if bytes.get(..n) == MAGIC.get(..n) { truncated(PRELUDE) } else { HeaderError::Magic });
    }
    let (major, minor) = match bytes.get(MAGIC.len()..PRELUDE) {
        Some(&[major, minor]) => (major, minor),
        _ => return Err(truncated(PRELUDE)),
    };
    let width = match (major, minor) {
        (1, 0) => 2,
        (2 | 3, 0) => 4,
        _ => return Err(HeaderError::Version { major, minor }),
    };
    let field = bytes.get(PRELUDE..PRELUDE + width).ok_or_else(|| truncated(PRELUDE + width))?;
    let len = field.iter().rev().fold(0u64, |n, &b| (n << 8) | u64::from(b));
    let start = PRELUDE + width;
    let end = u64::try_from(start).ok().and_then(|s| s.checked_add(len)).unwrap_or(u64::MAX);
    let header = usize::try_from(end)
        .ok()
        .and_then(|end| bytes.get(start..end))
        .ok_or(HeaderError::Truncated { need: end, have: bytes.len() })?;
    let text: String = if major == 3 {
        std::str::from_utf8(header).map_err(|_| HeaderError::Encoding)?.to_owned()
    } else {
        // Latin-1: every byte is the code point of its value.
        header.iter().map(|&b| char::from(b)).collect()
    };
    let body = text.strip_suffix('\n').ok_or(HeaderError::NoNewline)?;
    let dict = Parser { chars: body.char_indices().collect(), at: 0 }.dict()?;
    Ok(Header {
        version: (major, minor),
        descr: dict.descr,
        fortran_order: dict.fortran_order,
        shape: dict.shape,
        data_offset: start + header.len(),
    })
}

/// The three values of the dict.
struct Dict {
    descr: String,
    fortran_order: bool,
    shape: Vec<u64>,
}

/// A cursor over the header's characters (indices are character positions, for messages).
struct Parser {
    chars: Vec<(usize, char)>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).map(|&(_, c)| c)
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.at += 1;
        }
    }

    fn fail(&self, expected: &'static str) -> HeaderError {
        HeaderError::Syntax { at: self.at, expected }
    }

    /// Consumes `c` after optional spaces, or fails saying `expected`.
    fn expect(&mut self, c: char, expected: &'static str) -> Result<(), HeaderError> {
        self.skip_space();
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.fail(expected))
        }
    }

    /// Whether the next non-space character is `c` (consumed if so).
    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        let found = self.peek() == Some(c);
        if found {
            self.at += 1;
        }
        found
    }

    /// `{ key: value, ... }` with exactly the three keys, an optional trailing comma, then only spaces.
    fn dict(mut self) -> Result<Dict, HeaderError> {
        self.expect('{', "'{'")?;
        let (mut descr, mut fortran_order, mut shape) = (None, None, None);
        loop {
            if self.eat('}') {
                break;
            }
            let key = self.string()?;
            self.expect(':', "':'")?;
            match key.as_str() {
                "descr" => {
                    self.skip_space();
                    if self.peek() == Some('[') {
                        return Err(HeaderError::Structured);
                    }
                    let value = self.string()?;
                    if descr.replace(value).is_some() {
                        return Err(HeaderError::DuplicateKey("descr"));
                    }
                }
                "fortran_order" => {
                    let value = self.boolean()?;
                    if fortran_order.replace(value).is_some() {
                        return Err(HeaderError::DuplicateKey("fortran_order"));
                    }
                }
                "shape" => {
                    let value = self.tuple()?;
                    if shape.replace(value).is_some() {
                        return Err(HeaderError::DuplicateKey("shape"));
                    }
                }
                _ => return Err(HeaderError::UnknownKey(key)),
            }
            if !self.eat(',') {
                self.expect('}', "',' or '}'")?;
                break;
            }
        }
        self.skip_space();
        if self.peek().is_some() {
            return Err(self.fail("the end of the header after '}'"));
        }
        Ok(Dict {
            descr: descr.ok_or(HeaderError::MissingKey("descr"))?,
            fortran_order: fortran_order.ok_or(HeaderError::MissingKey("fortran_order"))?,
            shape: shape.ok_or(HeaderError::MissingKey("shape"))?,
        })
    }

    /// A string in single or double quotes with no escapes (numpy's keys and dtype strings have none).
    fn string(&mut self) -> Result<String, HeaderError> {
        self.skip_space();
        let quote = match self.peek() {
            Some(q @ ('\'' | '"')) => q,
            _ => return Err(self.fail("a quoted string")),
        };
        self.at += 1;
        let mut out = String::new();
        loop {
            match self.peek() {
                Some(c) if c == quote => {
                    self.at += 1;
                    return Ok(out);
                }
                Some('\\') | None => return Err(self.fail("a string without escapes, closed by its quote")),
                Some(c) => {
                    out.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// `True` or `False`.
    fn boolean(&mut self) -> Result<bool, HeaderError> {
        self.skip_space();
        for (word, value) in [("True", true), ("False", false)] {
            let matches =
                word.chars().enumerate().all(|(i, c)| self.chars.get(self.at + i).map(|p| p.1) == Some(c));
            if matches {
                self.at += word.len();
                return Ok(value);
            }
        }
        Err(self.fail("True or False"))
    }

    /// `()`, `(n,)`, `(n, m)`, `(n, m,)`: non-negative integers (an `L` suffix, as Python 2 wrote them in
    /// version 1 files, is taken).
    fn tuple(&mut self) -> Result<Vec<u64>, HeaderError> {
        self.expect('(', "'(' opening the shape")?;
        let mut dims = Vec::new();
        if self.eat(')') {
            return Ok(dims);
        }
        loop {
            dims.push(self.integer()?);
            if dims.len() > MAX_DIMS {
                return Err(HeaderError::TooManyDims(dims.len()));
            }
            let comma = self.eat(',');
            if self.eat(')') {
                // `(3)` is an integer in Python, not a tuple.
                if dims.len() == 1 && !comma {
                    return Err(self.fail("',' after the only dimension"));
                }
                return Ok(dims);
            }
            if !comma {
                return Err(self.fail("',' or ')' in the shape"));
            }
        }
    }

    fn integer(&mut self) -> Result<u64, HeaderError> {
        self.skip_space();
        let start = self.at;
        let mut value: u64 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d)))
                .ok_or(HeaderError::BadDimension { at: start })?;
            self.at += 1;
        }
        if self.at == start {
            return Err(HeaderError::BadDimension { at: start });
        }
        if self.peek() == Some('L') {
            self.at += 1;
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 1 file's first bytes around `dict`, padded as numpy pads (to a multiple of 64).
    fn v1(dict: &str) -> Vec<u8> {
        let mut text = dict.to_owned();
        while !(10 + text.len() + 1).is_multiple_of(64) {
            text.push(' ');
        }
        text.push('\n');
        let mut out = MAGIC.to_vec();
        out.extend([1, 0]);
        out.extend((text.len() as u16).to_le_bytes());
        out.extend(text.as_bytes());
        out
    }

    #[test]
    fn numpys_own_header_parses() {
        let bytes = v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
        let h = parse(&bytes).unwrap();
        assert_eq!(h.descr, "<f4");
        assert!(!h.fortran_order);
        assert_eq!(h.shape, [2, 3]);
        assert_eq!(h.data_offset, 128);
        let h = parse(&v1("{'shape': (), 'fortran_order': True, \"descr\": '|b1'}")).unwrap();
        assert_eq!((h.shape.len(), h.fortran_order, h.descr.as_str()), (0, true, "|b1"));
        assert_eq!(
            parse(&v1("{'descr': '<i8', 'fortran_order': False, 'shape': (3L, 4L), }")).unwrap().shape,
            [3, 4]
        );
        assert_eq!(parse(&v1("{'descr':'<i8','fortran_order':False,'shape':(7,)}")).unwrap().shape, [7]);
    }

    #[test]
    fn anything_else_in_the_dict_is_refused_by_name() {
        let cases: [(&str, HeaderError); 9] = [
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
                HeaderError::UnknownKey("x".into()),
            ),
            (
                "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                HeaderError::DuplicateKey("descr"),
            ),
            ("{'descr': '<f4', 'shape': (2,)}", HeaderError::MissingKey("fortran_order")),
            ("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", HeaderError::Structured),
            (
                "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",
                HeaderError::Syntax { at: 34, expected: "True or False" },
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
                HeaderError::Syntax { at: 53, expected: "',' after the only dimension" },
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
                HeaderError::BadDimension { at: 51 },
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,)}",
                HeaderError::BadDimension { at: 51 },
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x",
                HeaderError::Syntax { at: 56, expected: "the end of the header after '}'" },
            ),
        ];
        for (dict, error) in cases {
            assert_eq!(parse(&v1(dict)), Err(error), "{dict}");
        }
        let many = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", "1, ".repeat(65));
        assert_eq!(parse(&v1(&many)), Err(HeaderError::TooManyDims(65)));
        // __import__('os') never runs: it is not a value this parser knows.
        let code = "{'descr': __import__('os').system('x'), 'fortran_order': False, 'shape': (1,)}";
        assert!(matches!(parse(&v1(code)), Err(HeaderError::Syntax { .. })));
    }

    #[test]
    fn the_prelude_is_checked() {
        assert_eq!(parse(b"\x93NUMPZ\x01\x00"), Err(HeaderError::Magic));
        assert_eq!(parse(b"\x93NUM"), Err(HeaderError::Truncated { need: 8, have: 4 }));
        assert_eq!(parse(b"\x93NUMPY\x04\x00\x00\x00"), Err(HeaderError::Version { major: 4, minor: 0 }));
        assert_eq!(
            parse(b"\x93NUMPY\x01\x00\xff\xff{"),
            Err(HeaderError::Truncated { need: 10 + 0xffff, have: 11 })
        );
        let mut no_newline = v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}");
        *no_newline.last_mut().unwrap() = b' ';
        assert_eq!(parse(&no_newline), Err(HeaderError::NoNewline));
        let mut v3 = b"\x93NUMPY\x03\x00\x02\x00\x00\x00\xff\n".to_vec();
        assert_eq!(parse(&v3), Err(HeaderError::Encoding));
        v3[1] = b'X';
        assert_eq!(parse(&v3), Err(HeaderError::Magic));
    }
}
