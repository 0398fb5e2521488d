#!/usr/bin/env python3
"""Frozen tpack 1.0 reader: kept unchanged as the reader of minor version 0.

This is a frozen copy of tpack_reader.py as it was before the 1.1 revision of
spec/FORMAT.md (a reader written from the 1.0 text alone; its highest known
minor is 0).  Do not change it: it exists for the compatibility test of
section 10 ("a 1.0 reader reads every 1.1 file"), which selftest.py runs on
every valid 1.1 container it builds.  The maintained reader is tpack_reader.py.

Run it as `python3 tpack_reader_1_0.py FILE`.  The 1.0 docstring follows.

Independent tpack 1.x reader, written from spec/FORMAT.md alone.

Usage: python3 tpack_reader.py FILE

  valid container   -> canonical JSON decoding (spec section 13) on stdout, exit 0
  invalid container -> "Rnn explanation" on stdout (rule id first), exit 1
  usage / I/O error -> message on stderr, exit 2
  internal error    -> traceback on stderr, exit 3 (a bug: no input should get there)

Standard library only. Every check is linear in the input size; nothing is
allocated from a declared size before that size has been checked against the
bytes actually present.  Follows the revised spec (commits 9f04cc3, 6929620:
R37 is checked with R50 when payloads are verified, section 12; and fcb04b4:
a nested R37 is reported as R37, like a nested R50, not as R39); points
where the text leaves a choice are listed in SPEC_NOTES.md (referenced below
by note id, e.g. "note A3").
"""

import json
import os
import stat
import struct
import sys
import zlib

# ---------------------------------------------------------------- limits (section 2)
MAGIC = b"\x89TPK\r\n\x1a\n"
HEADER_LEN_V1 = 160
MAX_HEADER_LEN = 4096
DESCRIPTOR_LEN = 104
META_RECORD_LEN = 24
MAX_RANK = 8
MAX_ALIGNMENT = 65536
MAX_NAME_LEN = 1024
MAX_KEY_LEN = 1024
MAX_NESTING_DEPTH = 8

READER_MAJOR = 1
READER_MINOR = 0          # the minor version this reader implements (section 10)
SUPPORTED_INCOMPAT = 0    # no incompat flag bits are defined in 1.0

U64_LIMIT = 1 << 64       # 2^64
U64_MAX = U64_LIMIT - 1

# ---------------------------------------------------------------- dtypes (section 4.1)
# code -> (name, element_bytes, (block_elements, block_bytes) or None)
DTYPES = {
    1: ("F64", 8, None),
    2: ("F32", 4, None),
    3: ("F16", 2, None),
    4: ("BF16", 2, None),
    5: ("F8E4M3", 1, None),
    6: ("F8E5M2", 1, None),
    7: ("I64", 8, None),
    8: ("I32", 4, None),
    9: ("I16", 2, None),
    10: ("I8", 1, None),
    11: ("U64", 8, None),
    12: ("U32", 4, None),
    13: ("U16", 2, None),
    14: ("U8", 1, None),
    15: ("BOOL", 1, None),
    16: ("Q8_0", None, (32, 34)),
    17: ("Q4_0", None, (32, 18)),
    18: ("RAW", 1, None),
    19: ("CONTAINER", 1, None),
}
DT_RAW = 18
DT_CONTAINER = 19

# ---------------------------------------------------------------- metadata types (section 7.1)
META_TYPES = {
    1: "u64", 2: "i64", 3: "f64", 4: "bool",
    5: "string", 6: "bytes",
    7: "u64[]", 8: "i64[]", 9: "f64[]", 10: "string[]",
}
MT_U64, MT_I64, MT_F64, MT_BOOL = 1, 2, 3, 4
MT_STRING, MT_BYTES = 5, 6
MT_U64A, MT_I64A, MT_F64A, MT_STRA = 7, 8, 9, 10
META_SCALAR = (MT_U64, MT_I64, MT_F64, MT_BOOL)
META_NUMERIC_ARRAY = (MT_U64A, MT_I64A, MT_F64A)

SECTION_NAMES = ("table", "index", "names", "metadata", "payloads", "trailer")

HEADER_FMT = struct.Struct("<8sHHIQQQIIII")      # bytes 0..56
SECTION_FMT = struct.Struct("<QQ")               # 16 bytes
DESCRIPTOR_FMT = struct.Struct("<IIHBBIQQQ8Q")   # 104 bytes
META_FMT = struct.Struct("<IHBBIIQ")             # 24 bytes
U32_FMT = struct.Struct("<I")
assert HEADER_FMT.size == 56
assert DESCRIPTOR_FMT.size == DESCRIPTOR_LEN
assert META_FMT.size == META_RECORD_LEN


class Invalid(Exception):
    """The container breaks a rule.  rule is 'R1'..'R50'."""

    def __init__(self, rule, message):
        Exception.__init__(self, "%s %s" % (rule, message))
        self.rule = rule
        self.message = message


def fail(rule, message):
    raise Invalid(rule, message)


def utf8(raw):
    """Well-formed UTF-8 as in section 5 (RFC 3629 section 3 / Unicode Table 3-7):
    overlongs, encoded surrogates and code points above U+10FFFF are invalid;
    U+0000, noncharacters and a BOM are valid.  Python's strict codec is exactly
    this.  Returns the text, or None."""
    try:
        return bytes(raw).decode("utf-8", "strict")
    except UnicodeDecodeError:
        return None


def align_up(x, a):
    return (x + a - 1) // a * a


def checked_product(factors):
    """Left-to-right product with u64 overflow detection (section 4.1): None when
    any partial product exceeds 2^64 - 1, even if a later factor is 0 (R25)."""
    acc = 1
    for f in factors:
        acc *= f
        if acc > U64_MAX:
            return None
    return acc


class Entry(object):
    __slots__ = ("index", "name_offset", "name_len", "dtype", "rank", "flags",
                 "alignment", "offset", "length", "target", "dims", "name",
                 "known", "checksum", "nested", "pad_start")


class Meta(object):
    __slots__ = ("key", "type", "known", "value_len", "value_offset", "value",
                 "raw", "decoded")


class Container(object):
    pass


# ==================================================================== structural validation
def open_container(buf, depth):
    """Open a container: the structural rules (all of R1-R49 except R37) on buf
    (a memoryview holding exactly the input), recursively for nested containers.
    Reads no payload or padding byte of this container except the payloads of
    CONTAINER entries, which it opens (section 12); R37 and R50, nested ones
    included, are left to verify_payloads.  Returns a Container."""
    c = Container()
    c.depth = depth
    size = len(buf)

    # ---------------------------------------------------------------- header (R1-R9)
    if size < HEADER_LEN_V1:
        fail("R1", "input is %d bytes, shorter than %d" % (size, HEADER_LEN_V1))
    (magic, major, minor, header_len, incompat, compat, total_len,
     n, descriptor_len, m, header_crc) = HEADER_FMT.unpack_from(buf, 0)
    if magic != MAGIC:
        fail("R2", "bad magic %s" % magic.hex())
    if major != READER_MAJOR:
        fail("R3", "version_major %d is not 1" % major)
    if (header_len % 8 != 0 or header_len < HEADER_LEN_V1 or header_len > MAX_HEADER_LEN
            or (minor == 0 and header_len != HEADER_LEN_V1)):
        fail("R4", "header_len %d invalid for minor %d" % (header_len, minor))
    if incompat & ~SUPPORTED_INCOMPAT:
        fail("R5", "incompat_flags 0x%x" % incompat)
    if descriptor_len != DESCRIPTOR_LEN:
        fail("R6", "descriptor_len %d is not 104" % descriptor_len)
    if any(buf[152:160]):
        fail("R7", "header reserved bytes 152-159 not zero")
    if size < total_len or size < header_len:
        fail("R8", "input is %d bytes, total_len %d, header_len %d" % (size, total_len, header_len))
    if size > total_len:
        fail("R9", "input is %d bytes, longer than total_len %d" % (size, total_len))
    c.minor = minor
    c.compat = compat
    c.n = n
    c.m = m
    newer = minor > READER_MINOR   # file minor above the reader's: unknown codes are skippable

    # ---------------------------------------------------------------- sections (R10-R12)
    sections = [SECTION_FMT.unpack_from(buf, 56 + 16 * k) for k in range(6)]
    for name, (off, length) in zip(SECTION_NAMES, sections):
        end = off + length
        if end > U64_MAX:
            fail("R10", "%s offset+length overflows u64" % name)
        if end > total_len:
            fail("R10", "%s ends at %d beyond total_len %d" % (name, end, total_len))
    expected = header_len
    for name, (off, length) in zip(SECTION_NAMES, sections):
        if off != expected:
            fail("R11", "%s starts at %d, expected %d" % (name, off, expected))
        expected = off + length
    if expected != total_len:
        fail("R11", "trailer ends at %d, not total_len %d" % (expected, total_len))
    (t_off, t_len), (i_off, i_len), (n_off, n_len), (m_off, m_len), \
        (p_off, p_len), (r_off, r_len) = sections
    if t_len != n * DESCRIPTOR_LEN:
        fail("R12", "table.length %d != %d x 104" % (t_len, n))
    if i_len != n * 4:
        fail("R12", "index.length %d != %d x 4" % (i_len, n))
    if r_len != n * 4 + 4:
        fail("R12", "trailer.length %d != %d x 4 + 4" % (r_len, n))

    # ---------------------------------------------------------------- checksums (R13-R14)
    meta_end = m_off + m_len
    crc = zlib.crc32(buf[0:52])
    crc = zlib.crc32(buf[56:meta_end], crc)
    if crc != header_crc:
        fail("R13", "header_crc 0x%08x, computed 0x%08x" % (header_crc, crc))
    trailer = struct.unpack_from("<%dI" % (n + 1), buf, r_off)
    tcrc = zlib.crc32(buf[r_off:r_off + 4 * n])
    if trailer[n] != tcrc:
        fail("R14", "trailer checksum 0x%08x, computed 0x%08x" % (trailer[n], tcrc))

    # ---------------------------------------------------------------- descriptors
    entries = []
    for i in range(n):
        fields = DESCRIPTOR_FMT.unpack_from(buf, t_off + i * DESCRIPTOR_LEN)
        (name_offset, name_len, dtype, rank, flags, alignment, offset, length,
         target) = fields[:9]
        e = Entry()
        e.index = i
        e.name_offset = name_offset
        e.name_len = name_len
        e.dtype = dtype
        e.rank = rank
        e.flags = flags
        e.alignment = alignment
        e.offset = offset
        e.length = length
        e.target = target
        e.dims = fields[9:]
        e.checksum = trailer[i]
        e.nested = None
        entries.append(e)
    c.entries = entries

    # ---------------------------------------------------------------- names and index (R15-R21)
    for e in entries:
        if e.name_offset + e.name_len > n_len:
            fail("R15", "entry %d name [%d,+%d) beyond name pool of %d bytes"
                 % (e.index, e.name_offset, e.name_len, n_len))
    cursor = 0
    for e in entries:
        if e.name_offset != cursor:
            fail("R16", "entry %d name at pool offset %d, expected %d" % (e.index, e.name_offset, cursor))
        cursor += e.name_len
    if cursor < n_len:   # (cursor > n_len is impossible once R15 holds for every entry)
        fail("R16", "name pool has %d bytes after the last name" % (n_len - cursor))
    for e in entries:
        if e.name_len == 0 or e.name_len > MAX_NAME_LEN:
            fail("R17", "entry %d name length %d" % (e.index, e.name_len))
    raw_names = []
    for e in entries:
        raw = bytes(buf[n_off + e.name_offset:n_off + e.name_offset + e.name_len])
        text = utf8(raw)
        if text is None:
            fail("R18", "entry %d name is not valid UTF-8" % e.index)
        e.name = text
        raw_names.append(raw)
    index = struct.unpack_from("<%dI" % n, buf, i_off)
    for k in range(n):
        if index[k] >= n:
            fail("R19", "index[%d] = %d >= n = %d" % (k, index[k], n))
        if k > 0 and index[k] == index[k - 1]:
            fail("R19", "index[%d] and index[%d] are both %d" % (k - 1, k, index[k]))
    # Each comparison touches two names; bytes comparison stops at the first
    # difference, so the total work is bounded by the name bytes read (note A6).
    # No separate permutation check (section 5): R19 + R20 + R21 imply it.
    for k in range(1, n):
        if raw_names[index[k - 1]] > raw_names[index[k]]:
            fail("R20", "names at index positions %d and %d are not ascending" % (k - 1, k))
    for k in range(1, n):
        if raw_names[index[k - 1]] == raw_names[index[k]]:
            fail("R21", "entries %d and %d have the same name" % (index[k - 1], index[k]))

    # ---------------------------------------------------------------- entries (R22-R32)
    for e in entries:
        i = e.index
        info = DTYPES.get(e.dtype)
        e.known = info is not None
        if info is None and not newer:
            fail("R22", "entry %d unknown dtype %d (file minor %d)" % (i, e.dtype, minor))
        if e.rank > MAX_RANK:
            fail("R23", "entry %d rank %d > 8" % (i, e.rank))
        if any(e.dims[e.rank:]):
            fail("R24", "entry %d has non-zero dims beyond rank %d" % (i, e.rank))
        # The element-count bound of R25 holds for every entry, an unknown
        # (skippable) dtype included (sections 4.1 "Byte length", 10, 12 R25);
        # only the byte-length part of R25 and R26-R28 need a known dtype.
        count = checked_product(e.dims[:e.rank])
        if count is None:
            fail("R25", "entry %d element count overflows u64" % i)
        if info is not None:
            _, elem_bytes, block = info
            if block is None:
                nbytes = count * elem_bytes
            else:
                nbytes = (count // block[0]) * block[1]   # divide first (section 4.1)
            if nbytes > U64_MAX:
                fail("R25", "entry %d byte length overflows u64" % i)
            if block is not None:
                if e.rank == 0:
                    fail("R26", "entry %d block dtype with rank 0" % i)
                if e.dims[e.rank - 1] % block[0] != 0:
                    fail("R26", "entry %d innermost dim %d not a multiple of %d"
                         % (i, e.dims[e.rank - 1], block[0]))
            if e.dtype in (DT_RAW, DT_CONTAINER) and e.rank != 1:
                fail("R27", "entry %d %s has rank %d" % (i, info[0], e.rank))
            if e.length != nbytes:
                fail("R28", "entry %d length %d, dtype and shape give %d" % (i, e.length, nbytes))
        a = e.alignment
        if a == 0 or (a & (a - 1)) != 0 or a > MAX_ALIGNMENT:
            fail("R29", "entry %d alignment %d" % (i, a))
        if e.offset % a != 0:
            fail("R30", "entry %d offset %d not a multiple of %d" % (i, e.offset, a))
        if e.flags & 0xFE:
            fail("R31", "entry %d flags 0x%02x" % (i, e.flags))
        has_target = bool(e.flags & 1)
        if not has_target and e.target != 0:
            fail("R31", "entry %d target %d without HAS_TARGET" % (i, e.target))
        if has_target and e.target + e.length > U64_LIMIT:
            fail("R32", "entry %d target+length exceeds 2^64" % i)

    # ---------------------------------------------------------------- payloads (R33-R36)
    # R37 (padding bytes) is not checked here: since 6929620 it belongs to the
    # payload-integrity group (verify_payloads); only where the padding lies is kept.
    p_end = p_off + p_len
    cursor = p_off
    prev = None
    for e in entries:
        i = e.index
        end = e.offset + e.length
        if end > U64_MAX:
            fail("R33", "entry %d offset+length overflows u64" % i)
        if e.offset < p_off or end > p_end:
            fail("R33", "entry %d payload [%d,%d) outside payload section [%d,%d)"
                 % (i, e.offset, end, p_off, p_end))
        if prev is not None and e.offset < prev.offset:
            fail("R34", "entry %d payload starts before entry %d's" % (i, prev.index))
        if prev is not None and e.offset < prev.offset + prev.length:
            fail("R35", "entry %d payload overlaps entry %d's" % (i, prev.index))
        want = align_up(cursor, e.alignment)
        if e.offset != want:
            fail("R36", "entry %d payload at %d, smallest aligned offset is %d" % (i, e.offset, want))
        e.pad_start = cursor   # padding before this entry: [pad_start, offset)
        cursor = end
        prev = e
    if cursor != p_end:   # (cursor > p_end is impossible once R33 holds)
        fail("R36", "payload section ends at %d, last payload ends at %d" % (p_end, cursor))

    # ---------------------------------------------------------------- nesting (R38-R39)
    for e in entries:
        if e.known and e.dtype == DT_CONTAINER:
            if depth >= MAX_NESTING_DEPTH:
                fail("R38", "entry %d is a CONTAINER inside a container at depth %d" % (e.index, depth))
            try:   # structural rules only (R39 = nested R1-R36, R39-R49): the nested
                   # R37/R50 wait for verification and are reported as themselves
                e.nested = open_container(buf[e.offset:e.offset + e.length], depth + 1)
            except Invalid as inner:
                if inner.rule == "R38":
                    # R38 is reported as R38 by the outermost container too (section 12)
                    fail("R38", "in entry %d (%r): %s" % (e.index, e.name, inner.message))
                fail("R39", "entry %d (%r): %s" % (e.index, e.name, inner))

    # ---------------------------------------------------------------- metadata (R40-R49)
    if m * META_RECORD_LEN > m_len:
        fail("R40", "%d records x 24 exceed metadata.length %d" % (m, m_len))
    pool_off = m_off + m * META_RECORD_LEN
    pool_len = m_len - m * META_RECORD_LEN
    pool = buf[pool_off:pool_off + pool_len]
    metas = []
    cursor = 0
    prev_key = None
    for j in range(m):
        key_offset, key_len, vtype, reserved, value_len, value_offset, value = \
            META_FMT.unpack_from(buf, m_off + j * META_RECORD_LEN)
        if key_offset + key_len > pool_len:
            fail("R40", "record %d key [%d,+%d) beyond pool of %d bytes" % (j, key_offset, key_len, pool_len))
        if key_offset != cursor:
            fail("R41", "record %d key at pool offset %d, expected %d" % (j, key_offset, cursor))
        cursor = key_offset + key_len
        if key_len == 0 or key_len > MAX_KEY_LEN:
            fail("R42", "record %d key length %d" % (j, key_len))
        raw_key = bytes(pool[key_offset:key_offset + key_len])
        key = utf8(raw_key)
        if key is None:
            fail("R43", "record %d key is not valid UTF-8" % j)
        if prev_key is not None:
            if prev_key > raw_key:
                fail("R44", "record %d key sorts before record %d's" % (j, j - 1))
            if prev_key == raw_key:
                fail("R45", "records %d and %d have the same key" % (j - 1, j))
        prev_key = raw_key
        known = vtype in META_TYPES
        if not known and not newer:
            fail("R46", "record %d unknown value type %d (file minor %d)" % (j, vtype, minor))
        r = Meta()
        r.key = key
        r.type = vtype
        r.known = known
        r.value_len = value_len
        r.value_offset = value_offset
        r.value = value
        r.raw = None
        # R47, type-independent part: the reserved byte is zero whatever the type,
        # unknown types of a newer minor included (sections 10, 12).  It reads no
        # field another rule validates, so it is checked right after R46 (the
        # order inside the metadata group is the reader's choice: note A3).
        if reserved != 0:
            fail("R47", "record %d reserved byte is %d" % (j, reserved))
        if vtype in META_SCALAR:
            if value_len != 0 or value_offset != 0:
                fail("R47", "record %d scalar with value_len %d value_offset %d" % (j, value_len, value_offset))
            if vtype == MT_BOOL and value not in (0, 1):
                fail("R48", "record %d bool value %d" % (j, value))
            if vtype == MT_U64:
                r.decoded = value
            elif vtype == MT_I64:
                r.decoded = value - U64_LIMIT if value >= 1 << 63 else value
            elif vtype == MT_F64:
                r.decoded = "%016x" % value
            else:
                r.decoded = value == 1
        else:
            # known variable type, or unknown type of a newer minor (section 10: always
            # a pool value; validated as a variable-length value: R40, R41 and the
            # zero inline `value` of R47; the type-specific parts of R47, and R48-R49,
            # do not apply to it)
            if value_offset + value_len > pool_len:
                fail("R40", "record %d value [%d,+%d) beyond pool of %d bytes"
                     % (j, value_offset, value_len, pool_len))
            if value_offset != cursor:
                fail("R41", "record %d value at pool offset %d, expected %d" % (j, value_offset, cursor))
            cursor = value_offset + value_len
            if value != 0:
                fail("R47", "record %d %s value with non-zero inline value %d"
                     % (j, "variable" if known else "unknown-type (pool)", value))
            if vtype in META_NUMERIC_ARRAY and value_len % 8 != 0:
                fail("R47", "record %d numeric array value_len %d not a multiple of 8" % (j, value_len))
            raw = bytes(pool[value_offset:value_offset + value_len])
            r.raw = raw
            if vtype == MT_STRING:
                text = utf8(raw)
                if text is None:
                    fail("R49", "record %d string is not valid UTF-8" % j)
                r.decoded = text
            elif vtype == MT_STRA:
                items = []
                pos = 0
                while pos < value_len:
                    if pos + 4 > value_len:
                        fail("R47", "record %d string[] item length cut short" % j)
                    k = U32_FMT.unpack_from(raw, pos)[0]
                    if pos + 4 + k > value_len:
                        fail("R47", "record %d string[] item overruns value_len" % j)
                    items.append(raw[pos + 4:pos + 4 + k])
                    pos += 4 + k
                decoded = []
                for t, item in enumerate(items):
                    text = utf8(item)
                    if text is None:
                        fail("R49", "record %d string[] item %d is not valid UTF-8" % (j, t))
                    decoded.append(text)
                r.decoded = decoded
            elif vtype == MT_U64A:
                r.decoded = list(struct.unpack("<%dQ" % (value_len // 8), raw))
            elif vtype == MT_I64A:
                r.decoded = list(struct.unpack("<%dq" % (value_len // 8), raw))
            elif vtype == MT_F64A:
                r.decoded = ["%016x" % v for v in struct.unpack("<%dQ" % (value_len // 8), raw)]
            else:  # bytes, or an unknown type: lowercase hex
                r.decoded = raw.hex()
        metas.append(r)
    if cursor < pool_len:   # (cursor > pool_len is impossible once R40 holds)
        fail("R41", "metadata pool has %d bytes after the last item" % (pool_len - cursor))
    c.metas = metas
    c.buf = buf
    return c


# ==================================================================== payload integrity (R37, R50)
def verify_payloads(c, path=""):
    """The payload-integrity group (section 12), on a container open_container
    accepted: entry by entry in table order, R37 for the padding before the
    entry, then R50 for its payload, then for a CONTAINER entry the full
    verification of the nested container.  What the nested verification finds
    is reported under the integrity rule itself (section 9, revision fcb04b4):
    a non-zero nested padding byte is R37, a nested payload mismatch R50, never
    R39 (R39 covers only the structural rules R1-R36 and R39-R49; note N4).
    Only R37 and R50 can be raised here, at any depth; the message names the
    path of nested entries."""
    buf = c.buf
    for e in c.entries:
        pad = bytes(buf[e.pad_start:e.offset])
        if pad.count(0) != len(pad):
            k = next(k for k, b in enumerate(pad) if b)
            fail("R37", "%snon-zero padding byte 0x%02x at offset %d before entry %d (%r)"
                 % (path, pad[k], e.pad_start + k, e.index, e.name))
        crc = zlib.crc32(buf[e.offset:e.offset + e.length])
        if crc != e.checksum:
            fail("R50", "%sentry %d (%r) crc 0x%08x, trailer says 0x%08x"
                 % (path, e.index, e.name, crc, e.checksum))
        if e.nested is not None:
            # nested R37 and R50 propagate unchanged (section 9): no R39 wrapping
            verify_payloads(e.nested, "%sin nested entry %d (%r): " % (path, e.index, e.name))


# ==================================================================== decoding (section 13)
def decode(c):
    entries = []
    for e in c.entries:
        d = {
            "name": e.name,
            "dtype": DTYPES[e.dtype][0] if e.known else e.dtype,
            "shape": list(e.dims[:e.rank]),
            "offset": e.offset,
            "length": e.length,
            "alignment": e.alignment,
            "target": e.target if e.flags & 1 else None,
            "checksum": e.checksum,
        }
        if e.nested is not None:
            d["container"] = decode(e.nested)
        entries.append(d)
    metadata = []
    for r in c.metas:
        metadata.append({
            "key": r.key,
            "type": META_TYPES[r.type] if r.known else r.type,
            "value": r.decoded,
        })
    return {
        "version": [1, c.minor],
        "compat_flags": c.compat,
        "entries": entries,
        "metadata": metadata,
    }


def read_container(data):
    """Full validation (R1-R50) of bytes: open (structural rules), then verify
    (R37 and R50, section 12).  Returns the decoding or raises Invalid."""
    c = open_container(memoryview(data), 0)
    verify_payloads(c)
    return decode(c)


MAX_INPUT_LEN = 1 << 30   # the whole file is read into memory; the vectors are a few KiB


def read_input(path):
    """The bytes of the regular file at path. Its size is taken before it is opened, so that a FIFO is
    refused rather than waited on, and /dev/zero rather than read forever; at most size + 1 bytes are read,
    so that a file growing while it is read is refused too."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError("not a regular file: only regular files are read")
    if st.st_size > MAX_INPUT_LEN:
        raise ValueError("%d bytes, above the %d-byte limit" % (st.st_size, MAX_INPUT_LEN))
    with open(path, "rb") as f:
        data = f.read(st.st_size + 1)
    if len(data) != st.st_size:
        raise ValueError("changed while it was read: %d bytes by its metadata, %d read"
                         % (st.st_size, len(data)))
    return data


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: tpack_reader.py FILE\n")
        return 2
    try:
        data = read_input(argv[1])
    except (OSError, ValueError) as exc:
        sys.stderr.write("cannot read %s: %s\n" % (argv[1], exc))
        return 2
    try:
        result = read_container(data)
    except Invalid as exc:
        sys.stdout.write("%s %s\n" % (exc.rule, exc.message))
        return 1
    except Exception:  # a bug in this reader: never let it pass for exit 1 ("invalid")
        import traceback
        traceback.print_exc()
        return 3
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
