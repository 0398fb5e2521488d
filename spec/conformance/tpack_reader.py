#!/usr/bin/env python3
"""Independent tpack 1.x reader, written from spec/FORMAT.md alone (version 1.2).

Usage: python3 tpack_reader.py FILE
       python3 tpack_reader.py --verify-signature KEYS.json POLICY.json FILE

  valid container   -> canonical JSON decoding (spec section 13) on stdout, exit 0
  invalid container -> "Rnn explanation" on stdout (rule id first), exit 1
  usage / I/O error -> message on stderr, exit 2
  internal error    -> traceback on stderr, exit 3 (a bug: no input should get there)

With --verify-signature (the kit protocol of spec/conformance/README.md), the
authenticated verification of section 14: "ok" on stdout and exit 0, or the first
broken rule (structural R1-R57, then R58-R63, then the payload-integrity group with
R64) and exit 1.  KEYS.json is a list of trusted keys
[{"algorithm": 1, "public_key": "<hex>" or null, "key_id": "<hex>", "subject": null}],
POLICY.json {"require_signature": true, "min_counter": 7, "subject": null}.

Standard library only, except that --verify-signature imports the `cryptography`
package (pyca) for Ed25519 and ECDSA P-256.  Every check is linear in the input size; nothing is
allocated from a declared size before that size has been checked against the
bytes actually present.  Implements minor version 2 (spec 1.2: signed containers,
dtype 55 SIGNATURE, compat bit 0 SIGNED, the signature group R54-R57 and the
verification rules R58-R64 of section 14), and minor 1 before it (spec 1.1, commit 94d5792:
the GGUF/safetensors dtypes 20-43 and 48-54, the header extension of section
3.4 with its block geometry records and rules R51-R53, and the metadata types
11-26); files of minor 3 and above get the leniency of section 10.  The 1.0
reader is kept frozen as tpack_reader_1_0.py.  Follows the revised spec (commits 9f04cc3, 6929620:
R37 is checked with R50 when payloads are verified, section 12; and fcb04b4:
a nested R37 is reported as R37, like a nested R50, not as R39); points
where the text left a choice are listed in SPEC_NOTES.md (referenced below
by note id, e.g. "note A3"); since issue 22 the text pins the order inside
every group of section 12.  Implements the header diagnosis of
section 12 (a damaged version or flags field is R13, not R3/R5).
"""

import hashlib
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
MAX_ARRAY_DEPTH = 8       # most levels of array[] in one metadata value (section 7.1, minor >= 1)

READER_MAJOR = 1
READER_MINOR = 2          # the minor version this reader implements (section 10)
SUPPORTED_INCOMPAT = 0    # no incompat flag bits are defined in 1.0, 1.1 or 1.2

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
    # version 1.1 (section 4.1): GGUF block types, geometry of ggml's ggml-common.h
    20: ("Q4_1", None, (32, 20)),
    21: ("Q5_0", None, (32, 22)),
    22: ("Q5_1", None, (32, 24)),
    23: ("Q8_1", None, (32, 36)),
    24: ("Q2_K", None, (256, 84)),
    25: ("Q3_K", None, (256, 110)),
    26: ("Q4_K", None, (256, 144)),
    27: ("Q5_K", None, (256, 176)),
    28: ("Q6_K", None, (256, 210)),
    29: ("Q8_K", None, (256, 292)),
    30: ("IQ2_XXS", None, (256, 66)),
    31: ("IQ2_XS", None, (256, 74)),
    32: ("IQ3_XXS", None, (256, 98)),
    33: ("IQ1_S", None, (256, 50)),
    34: ("IQ4_NL", None, (32, 18)),
    35: ("IQ3_S", None, (256, 110)),
    36: ("IQ2_S", None, (256, 82)),
    37: ("IQ4_XS", None, (256, 136)),
    38: ("IQ1_M", None, (256, 56)),
    39: ("TQ1_0", None, (256, 54)),
    40: ("TQ2_0", None, (256, 66)),
    41: ("MXFP4", None, (32, 17)),
    42: ("NVFP4", None, (64, 36)),
    43: ("Q1_0", None, (128, 18)),
    # version 1.1: safetensors / ml_dtypes types; the sub-byte ones are block dtypes for every rule
    48: ("C64", 8, None),
    49: ("F8E8M0", 1, None),
    50: ("F8E4M3FNUZ", 1, None),
    51: ("F8E5M2FNUZ", 1, None),
    52: ("F4E2M1", None, (2, 1)),
    53: ("F6E2M3", None, (4, 3)),
    54: ("F6E3M2", None, (4, 3)),
    # version 1.2: the signature entry of a signed container (section 14), a byte dtype like RAW
    55: ("SIGNATURE", 1, None),
}
DT_RAW = 18
DT_CONTAINER = 19
DT_SIGNATURE = 55
BYTE_DTYPES = (DT_RAW, DT_CONTAINER, DT_SIGNATURE)   # rank 1, dims[0] = byte length (R27)


FIRST_1_1_DTYPE = 20         # codes 20-43 and 48-54 are defined only in files of minor >= 1
FIRST_1_2_DTYPE = 55         # code 55 only in files of minor >= 2
FIRST_1_1_META_TYPE = 11     # types 11-26 likewise


def dtype_info(code, minor):
    """The section-4.1 row of a dtype code as defined for a file of minor version `minor`
    (R22: codes 1-19 for minor 0, and 20-43 and 48-54 too for minor >= 1, and 55 too for
    minor >= 2), or None."""
    if code >= FIRST_1_1_DTYPE and minor < 1:
        return None
    if code >= FIRST_1_2_DTYPE and minor < 2:
        return None
    return DTYPES.get(code)


def meta_type_known(vtype, minor):
    """Whether a metadata value type is defined for a file of minor `minor` (R46: 1-10 for
    minor 0, and 11-26 too for minor >= 1)."""
    if vtype >= FIRST_1_1_META_TYPE and minor < 1:
        return False
    return vtype in META_TYPES


def own_geometry(code, minor):
    """(block_elements, block_bytes) of a dtype this reader knows for a file of minor
    `minor`, as a block geometry record states it (section 3.4: an element dtype's
    record is (1, element bytes)); None for a code it does not know (or that the
    file's minor does not define: note S3)."""
    info = dtype_info(code, minor)
    if info is None:
        return None
    return info[2] if info[2] is not None else (1, info[1])


# ---------------------------------------------------------------- header extension (section 3.4)
EXT_ITEM_HEADER_LEN = 8
EXT_TAG_GEOMETRY = 1
GEOMETRY_RECORD_LEN = 16
EXT_ITEM_FMT = struct.Struct("<II")              # tag, length
GEOMETRY_FMT = struct.Struct("<HHIII")           # dtype, reserved, block_elements, block_bytes, reserved2
assert GEOMETRY_FMT.size == GEOMETRY_RECORD_LEN

# ---------------------------------------------------------------- signed containers (section 14)
COMPAT_SIGNED = 1                      # compat_flags bit 0, meaningful in files of minor >= 2
SIG_ENTRY_NAME = "tpack.signature"
SIG_ALIGNMENT = 8
SIG_KEY_PREFIX = b"tpack.sig."         # reserved metadata key prefix in files of minor >= 2
SIG_ALG, SIG_KEY, SIG_COUNTER = b"tpack.sig.alg", b"tpack.sig.key", b"tpack.sig.counter"
SIG_SUBJECT, SIG_PUBKEY = b"tpack.sig.subject", b"tpack.sig.pubkey"
SIG_KNOWN_KEYS = frozenset([SIG_ALG, SIG_KEY, SIG_COUNTER, SIG_SUBJECT, SIG_PUBKEY])
DIGEST_LEN = 32                        # SHA-256
KEY_ID_LEN = 32
MAX_SUBJECT_LEN = 255
MESSAGE_PREFIX = b"tpack signed v1\0"  # 16 bytes: the first part of the signed message M
ALG_ED25519, ALG_P256 = 1, 2
# algorithm code -> (name, signature length, raw public key length, DER SubjectPublicKeyInfo prefix)
ALGORITHMS = {
    ALG_ED25519: ("Ed25519", 64, 32, bytes.fromhex("302a300506032b6570032100")),
    ALG_P256: ("ECDSA P-256", 64, 65,
               bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200")),
}
assert len(MESSAGE_PREFIX) == 16


def key_id(algorithm, raw_public_key):
    """The key id of section 14: SHA-256 of the key's DER SubjectPublicKeyInfo."""
    return hashlib.sha256(ALGORITHMS[algorithm][3] + raw_public_key).digest()


# ---------------------------------------------------------------- metadata types (section 7.1)
META_TYPES = {
    1: "u64", 2: "i64", 3: "f64", 4: "bool",
    5: "string", 6: "bytes",
    7: "u64[]", 8: "i64[]", 9: "f64[]", 10: "string[]",
    # version 1.1: all stored in the pool
    11: "u8", 12: "i8", 13: "u16", 14: "i16", 15: "u32", 16: "i32", 17: "f32",
    18: "u8[]", 19: "i8[]", 20: "u16[]", 21: "i16[]", 22: "u32[]", 23: "i32[]", 24: "f32[]",
    25: "bool[]", 26: "array[]",
}
MT_U64, MT_I64, MT_F64, MT_BOOL = 1, 2, 3, 4
MT_STRING, MT_BYTES = 5, 6
MT_U64A, MT_I64A, MT_F64A, MT_STRA = 7, 8, 9, 10
MT_F32, MT_F32A, MT_BOOLA, MT_ARRA = 17, 24, 25, 26
META_SCALAR = (MT_U64, MT_I64, MT_F64, MT_BOOL)          # the inline types (1.0 only)
# pool scalars of 1.1: code -> (width = the exact value_len, struct code)
META_POOL_SCALAR = {11: (1, "B"), 12: (1, "b"), 13: (2, "H"), 14: (2, "h"),
                    15: (4, "I"), 16: (4, "i"), 17: (4, "I")}
# fixed-width arrays: code -> (element width, struct code); value_len is a multiple of the width
META_FIXED_ARRAY = {MT_U64A: (8, "Q"), MT_I64A: (8, "q"), MT_F64A: (8, "Q"),
                    18: (1, "B"), 19: (1, "b"), 20: (2, "H"), 21: (2, "h"),
                    22: (4, "I"), 23: (4, "i"), MT_F32A: (4, "I"), MT_BOOLA: (1, "B")}
# the array types an array[] item may have (section 7.1: 7-10 or 18-26)
META_ARRAY_TYPES = frozenset([7, 8, 9, 10] + list(range(18, 27)))
ARRAY_ITEM_HEADER_LEN = 8

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
    """The container breaks a rule.  rule is 'R1'..'R64'."""

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


def dtype_label(code):
    info = DTYPES.get(code)
    return info[0] if info is not None else "code %d" % code


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
    __slots__ = ("key", "raw_key", "type", "known", "value_len", "value_offset", "value",
                 "raw", "decoded")


class Container(object):
    pass


# ==================================================================== header extension (section 3.4)
def read_extension(buf, header_len, minor):
    """The extension group (section 12, after the checksums; files of minor >= 1):
    R51 over the whole of [160, header_len), then R52 on the block geometry body,
    both as revised in the working tree after 94d5792 (tags strictly ascending),
    "in number order".  Items of tags this reader does not know are skipped (their
    layout is still checked by R51).  Returns {dtype code: (block_elements,
    block_bytes)} from the block geometry records (empty when there are none)."""
    # ---- R51 ExtensionLayout: items exactly fill [160, header_len), tag != 0,
    # zero padding to the next multiple of 8 (from the container's start), tags strictly
    # ascending (so none appears twice)
    items = {}
    prev_tag = None
    pos = HEADER_LEN_V1
    while pos < header_len:
        if pos + EXT_ITEM_HEADER_LEN > header_len:
            fail("R51", "extension item header at %d runs past header_len %d" % (pos, header_len))
        tag, length = EXT_ITEM_FMT.unpack_from(buf, pos)
        if tag == 0:
            fail("R51", "extension item at %d has tag 0" % pos)
        body = pos + EXT_ITEM_HEADER_LEN
        end = body + length
        if end > header_len:
            fail("R51", "extension item at %d (tag %d): body of %d bytes runs past header_len %d"
                 % (pos, tag, length, header_len))
        nxt = align_up(end, 8)   # <= header_len: header_len is a multiple of 8 (R4)
        if any(buf[end:nxt]):
            fail("R51", "extension item at %d (tag %d): non-zero padding after its body" % (pos, tag))
        if prev_tag is not None and tag <= prev_tag:
            fail("R51", "extension item at %d: tag %d not above the previous item's tag %d" % (pos, tag, prev_tag))
        prev_tag = tag
        items[tag] = (pos, body, length)
        pos = nxt
    # ---- R52 BlockGeometry
    geometry = {}
    if EXT_TAG_GEOMETRY in items:
        _, body, length = items[EXT_TAG_GEOMETRY]
        if length % GEOMETRY_RECORD_LEN != 0:
            fail("R52", "block geometry body of %d bytes is not a multiple of 16" % length)
        prev = None
        for k in range(length // GEOMETRY_RECORD_LEN):
            code, reserved, be, bb, reserved2 = GEOMETRY_FMT.unpack_from(buf, body + GEOMETRY_RECORD_LEN * k)
            if prev is not None and code <= prev:
                fail("R52", "geometry record %d: dtype %d not above the previous record's %d" % (k, code, prev))
            info = dtype_info(code, minor)
            if info is not None and code in BYTE_DTYPES:   # SIGNATURE only where defined (note S3)
                fail("R52", "geometry record %d: dtype %d (%s) has no geometry" % (k, code, info[0]))
            if reserved != 0 or reserved2 != 0:
                fail("R52", "geometry record %d (dtype %d): reserved field not zero" % (k, code))
            if be == 0 or (be & (be - 1)) != 0 or be > 65536:
                fail("R52", "geometry record %d (dtype %d): block_elements %d is not a power of two "
                     "from 1 to 65536" % (k, code, be))
            if bb == 0:
                fail("R52", "geometry record %d (dtype %d): block_bytes 0" % (k, code))
            own = own_geometry(code, minor)
            if own is not None and own != (be, bb):
                fail("R52", "geometry record %d: %s is (%d, %d) here, (%d, %d) in the record"
                     % (k, DTYPES[code][0], own[0], own[1], be, bb))
            geometry[code] = (be, bb)
            prev = code
    return geometry


# ==================================================================== header helpers (sections 3.2, 3.3, 12)
def check_sections(sections, header_len, total_len, n):
    """R10, R11, R12 in that order (section 12: R10 for every section in layout
    order, then R11, then R12).  Returns (rule, message) of the first broken one,
    or None.  Reads only header fields."""
    for name, (off, length) in zip(SECTION_NAMES, sections):
        end = off + length
        if end > U64_MAX:
            return "R10", "%s offset+length overflows u64" % name
        if end > total_len:
            return "R10", "%s ends at %d beyond total_len %d" % (name, end, total_len)
    expected = header_len
    for name, (off, length) in zip(SECTION_NAMES, sections):
        if off != expected:
            return "R11", "%s starts at %d, expected %d" % (name, off, expected)
        expected = off + length
    if expected != total_len:
        return "R11", "trailer ends at %d, not total_len %d" % (expected, total_len)
    (_, t_len), (_, i_len), _, _, _, (_, r_len) = sections
    if t_len != n * DESCRIPTOR_LEN:
        return "R12", "table.length %d != %d x 104" % (t_len, n)
    if i_len != n * 4:
        return "R12", "index.length %d != %d x 4" % (i_len, n)
    if r_len != n * 4 + 4:
        return "R12", "trailer.length %d != %d x 4 + 4" % (r_len, n)
    return None


def region_crc(buf, meta_end):
    """The header checksum of section 3.3 over [0, meta_end), header_crc left out."""
    crc = zlib.crc32(buf[0:52])
    return zlib.crc32(buf[56:meta_end], crc)


def newer_reader(rule, message, buf, stored_crc, sound, sections):
    """Report R3 or R5 ("needs a newer reader") with the header diagnosis of
    section 12: when the header is otherwise sound read as 1.x (`sound`: R4, R6,
    R7 and R10-R12 hold) and the input holds its checksummed region, a checksum
    that does not match means the header is damaged: R13 instead."""
    m_off, m_len = sections[3]
    meta_end = m_off + m_len
    if sound and meta_end <= len(buf):
        crc = region_crc(buf, meta_end)
        if crc != stored_crc:
            fail("R13", "header_crc 0x%08x, computed 0x%08x: the header is damaged (it would read as %s %s)"
                 % (stored_crc, crc, rule, message))
    fail(rule, message)


# ==================================================================== structural validation
def open_container(buf, depth):
    """Open a container: the structural rules (R1-R53 except R37 and R50) on buf
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
    sections = [SECTION_FMT.unpack_from(buf, 56 + 16 * k) for k in range(6)]
    header_len_ok = not (header_len % 8 != 0 or header_len < HEADER_LEN_V1 or header_len > MAX_HEADER_LEN
                         or (minor == 0 and header_len != HEADER_LEN_V1))
    # the header diagnosis (section 12): R3 and R5 only for a header that is otherwise
    # sound as 1.x (R4, R6, R7, R10-R12); newer_reader checks its checksum
    sound = (header_len_ok and descriptor_len == DESCRIPTOR_LEN and not any(buf[152:160])
             and check_sections(sections, header_len, total_len, n) is None)
    if major != READER_MAJOR:
        newer_reader("R3", "version_major %d is not 1" % major, buf, header_crc, sound, sections)
    if not header_len_ok:
        fail("R4", "header_len %d invalid for minor %d" % (header_len, minor))
    if incompat & ~SUPPORTED_INCOMPAT:
        newer_reader("R5", "incompat_flags 0x%x" % incompat, buf, header_crc, sound, sections)
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
    section_error = check_sections(sections, header_len, total_len, n)
    if section_error is not None:
        fail(*section_error)
    (t_off, t_len), (i_off, i_len), (n_off, n_len), (m_off, m_len), \
        (p_off, p_len), (r_off, r_len) = sections

    # ---------------------------------------------------------------- checksums (R13-R14)
    meta_end = m_off + m_len
    crc = region_crc(buf, meta_end)
    if crc != header_crc:
        fail("R13", "header_crc 0x%08x, computed 0x%08x" % (header_crc, crc))
    trailer = struct.unpack_from("<%dI" % (n + 1), buf, r_off)
    tcrc = zlib.crc32(buf[r_off:r_off + 4 * n])
    if trailer[n] != tcrc:
        fail("R14", "trailer checksum 0x%08x, computed 0x%08x" % (trailer[n], tcrc))

    # ---------------------------------------------------------------- extension (R51-R52)
    # Only files of minor >= 1 have one (a minor-0 header_len is 160, R4); a minor-1 file
    # may have header_len 160 too, i.e. no items.
    geometry = read_extension(buf, header_len, minor) if minor >= 1 else {}
    c.geometry = geometry

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
    # Section 12 pins the order: entry by entry R15, R16, R17, R18; then the tail part
    # of R16; then the index position by position: R19, then R20 or R21 against the
    # previous position.
    cursor = 0
    raw_names = []
    for e in entries:
        if e.name_offset + e.name_len > n_len:
            fail("R15", "entry %d name [%d,+%d) beyond name pool of %d bytes"
                 % (e.index, e.name_offset, e.name_len, n_len))
        if e.name_offset != cursor:
            fail("R16", "entry %d name at pool offset %d, expected %d" % (e.index, e.name_offset, cursor))
        cursor += e.name_len
        if e.name_len == 0 or e.name_len > MAX_NAME_LEN:
            fail("R17", "entry %d name length %d" % (e.index, e.name_len))
        raw = bytes(buf[n_off + e.name_offset:n_off + e.name_offset + e.name_len])
        text = utf8(raw)
        if text is None:
            fail("R18", "entry %d name is not valid UTF-8" % e.index)
        e.name = text
        raw_names.append(raw)
    if cursor < n_len:   # (cursor > n_len is impossible once R15 holds for every entry)
        fail("R16", "name pool has %d bytes after the last name" % (n_len - cursor))
    index = struct.unpack_from("<%dI" % n, buf, i_off)
    # Each comparison touches two names; bytes comparison stops at the first
    # difference, so the total work is bounded by the name bytes read (note A6).
    # No separate permutation check (section 5): R19 + R20 + R21 imply it.
    for k in range(n):
        if index[k] >= n:
            fail("R19", "index[%d] = %d >= n = %d" % (k, index[k], n))
        if k == 0:
            continue
        if index[k] == index[k - 1]:
            fail("R19", "index[%d] and index[%d] are both %d" % (k - 1, k, index[k]))
        if raw_names[index[k - 1]] > raw_names[index[k]]:
            fail("R20", "names at index positions %d and %d are not ascending" % (k - 1, k))
        if raw_names[index[k - 1]] == raw_names[index[k]]:
            fail("R21", "entries %d and %d have the same name" % (index[k - 1], index[k]))

    # ---------------------------------------------------------------- entries (R22-R32, R53)
    for e in entries:
        i = e.index
        info = dtype_info(e.dtype, minor)   # the 1.1 codes are undefined in a minor-0 file
        e.known = info is not None
        if info is None and not newer:
            fail("R22", "entry %d dtype %d not defined for minor %d" % (i, e.dtype, minor))
        if e.rank > MAX_RANK:
            fail("R23", "entry %d rank %d > 8" % (i, e.rank))
        if any(e.dims[e.rank:]):
            fail("R24", "entry %d has non-zero dims beyond rank %d" % (i, e.rank))
        # The element-count bound of R25 holds for every entry, an unknown
        # (skippable) dtype included (sections 4.1 "Byte length", 10, 12 R25);
        # only the byte-length part of R25 and R26-R28 need the element size.
        count = checked_product(e.dims[:e.rank])
        if count is None:
            fail("R25", "entry %d element count overflows u64" % i)
        # The geometry: the reader's own for a known code (R52 made any record for it
        # agree); for an unknown code of a newer minor, its header-extension record if
        # there is one (sections 3.4, 4.1, 10), else none and R26-R28 are not applied.
        # The per-entry order is pinned by section 12: R22, R23, R24, the element count
        # of R25, R26, R27, the byte length of R25, R28, R29-R32, R53.  The byte length
        # of a block dtype is defined only for whole blocks, so it waits for R26.
        geom = own_geometry(e.dtype, minor) if info is not None else geometry.get(e.dtype)
        if geom is not None:
            be, bb = geom
            block = be != 1      # block_elements 1: an element dtype of bb bytes (section 4.1)
            if block:
                if e.rank == 0:
                    fail("R26", "entry %d block dtype %s with rank 0" % (i, dtype_label(e.dtype)))
                if e.dims[e.rank - 1] % be != 0:
                    fail("R26", "entry %d innermost dim %d not a multiple of %d (block of %s)"
                         % (i, e.dims[e.rank - 1], be, dtype_label(e.dtype)))
            if info is not None and e.dtype in BYTE_DTYPES and e.rank != 1:
                fail("R27", "entry %d %s has rank %d" % (i, info[0], e.rank))
            if block:
                nbytes = (count // be) * bb   # divide first (section 4.1); exact after R26
            else:
                nbytes = count * bb
            if nbytes > U64_MAX:
                fail("R25", "entry %d byte length overflows u64" % i)
            if e.length != nbytes:
                fail("R28", "entry %d length %d, dtype %s and shape give %d"
                     % (i, e.length, dtype_label(e.dtype), nbytes))
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
        # R53 after R22-R32 for the same entry (section 12): a known block dtype in a
        # file of minor >= 1 needs its geometry record
        if minor >= 1 and info is not None and info[2] is not None and e.dtype not in geometry:
            fail("R53", "entry %d: block dtype %s has no geometry record in the header extension"
                 % (i, info[0]))

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
            try:   # structural rules only (R39 = nested R1-R36, R39-R49, R51-R53): the nested
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
        known = meta_type_known(vtype, minor)   # the 1.1 types are undefined in a minor-0 file
        if not known and not newer:
            fail("R46", "record %d value type %d not defined for minor %d" % (j, vtype, minor))
        r = Meta()
        r.key = key
        r.type = vtype
        r.known = known
        r.value_len = value_len
        r.value_offset = value_offset
        r.value = value
        r.raw = None
        # R47, type-independent part: the reserved byte is zero whatever the type,
        # unknown types of a newer minor included (sections 10, 12).  Section 12
        # pins the order inside a record: key R40, R41, R42, R43, R44/R45; R46; this
        # reserved byte; then the value (R40, R41, the rest of R47, R48, R49).
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
            # known pool type (1.0 variable types and every 1.1 type), or unknown type of
            # a newer minor (section 10: always a pool value; validated as a variable-length
            # value: R40, R41 and the zero inline `value` of R47; the type-specific parts of
            # R47, and R48-R49, do not apply to it)
            if value_offset + value_len > pool_len:
                fail("R40", "record %d value [%d,+%d) beyond pool of %d bytes"
                     % (j, value_offset, value_len, pool_len))
            if value_offset != cursor:
                fail("R41", "record %d value at pool offset %d, expected %d" % (j, value_offset, cursor))
            cursor = value_offset + value_len
            if value != 0:
                fail("R47", "record %d %s value with non-zero inline value %d"
                     % (j, "pool" if known else "unknown-type (pool)", value))
            raw = bytes(pool[value_offset:value_offset + value_len])
            r.raw = raw
            if known:
                where = "record %d" % j
                # R47 framing of the whole value first (section 12: R49 for string[], and
                # R48-R49 for array[], need it), then R48/R49 while decoding
                tree = frame_value(vtype, raw, 1, where)
                r.decoded = decode_value(vtype, tree, where)
            else:  # an unknown type of a newer minor: its pool bytes, lowercase hex
                r.decoded = raw.hex()
        r.raw_key = raw_key
        metas.append(r)
    if cursor < pool_len:   # (cursor > pool_len is impossible once R40 holds)
        fail("R41", "metadata pool has %d bytes after the last item" % (pool_len - cursor))
    c.metas = metas
    c.buf = buf

    # ---------------------------------------------------------------- signature (R54-R57)
    # Files of minor >= 2 only: in a minor-0 or minor-1 file dtype 55 is undefined (R22),
    # compat bit 0 means nothing and tpack.sig. keys are ordinary metadata (section 10).
    c.signature = check_signature(c, p_off, newer) if minor >= 2 else None
    return c


# ==================================================================== signature group (sections 12, 14)
class Signature(object):
    """The signed attributes of a container that passed R54-R57 (section 14)."""
    __slots__ = ("algorithm", "key_id", "counter", "subject", "public_key", "digests",
                 "signature", "message", "entry")


def check_signature(c, p_off, newer):
    """The signature group of section 12, rules in number order: R54, R55, R56, R57.
    Returns a Signature for a signed container, None for an unsigned one.  Reads the
    prefix and, for the signed message M, the digest table (the signature entry's
    payload, which structural validation may read: note S5)."""
    entries, metas, n = c.entries, c.metas, c.n
    sig_entries = [e for e in entries if e.known and e.dtype == DT_SIGNATURE]
    sig_records = [r for r in metas if r.raw_key.startswith(SIG_KEY_PREFIX)]
    signed_bit = bool(c.compat & COMPAT_SIGNED)
    # ---- R54 SignedFlag
    if signed_bit and not sig_entries:
        fail("R54", "compat bit 0 (SIGNED) is set but there is no SIGNATURE entry")
    if sig_entries and not signed_bit:
        fail("R54", "entry %d is a SIGNATURE entry but compat bit 0 (SIGNED) is clear" % sig_entries[0].index)
    if sig_records and not signed_bit:
        fail("R54", "metadata key %r is reserved for signed files but compat bit 0 (SIGNED) is clear"
             % sig_records[0].key)
    # ---- R55 SignatureEntry
    if len(sig_entries) > 1:
        fail("R55", "entries %d and %d are both SIGNATURE entries" % (sig_entries[0].index, sig_entries[1].index))
    for e in entries:
        if e.name == SIG_ENTRY_NAME and not (e.known and e.dtype == DT_SIGNATURE):
            fail("R55", "entry %d is named %r but its dtype is %s, not SIGNATURE"
                 % (e.index, SIG_ENTRY_NAME, dtype_label(e.dtype) if e.known else "code %d" % e.dtype))
    if not sig_entries:
        return None
    s = sig_entries[0]
    if s.index != n - 1:
        fail("R55", "the SIGNATURE entry is entry %d, not the last entry (%d)" % (s.index, n - 1))
    if s.name != SIG_ENTRY_NAME:
        fail("R55", "the SIGNATURE entry is named %r, not %r" % (s.name, SIG_ENTRY_NAME))
    if s.flags & 1:
        fail("R55", "the SIGNATURE entry has HAS_TARGET set")
    if s.alignment != SIG_ALIGNMENT:
        fail("R55", "the SIGNATURE entry has alignment %d, not %d" % (s.alignment, SIG_ALIGNMENT))
    # ---- R56 SignatureMeta: alg, key, counter, subject, pubkey, then other keys in record order
    by_key = dict((r.raw_key, r) for r in sig_records)

    def typed(raw_key, vtype, what):
        r = by_key.get(raw_key)
        if r is None:
            fail("R56", "signed file without %s" % raw_key.decode())
        if not (r.known and r.type == vtype):
            fail("R56", "%s has type %s, not %s" % (raw_key.decode(), META_TYPES[r.type] if r.known
                                                   else "code %d" % r.type, what))
        return r

    alg = typed(SIG_ALG, MT_U64, "u64").decoded
    if alg not in ALGORITHMS and not newer:
        fail("R56", "tpack.sig.alg %d is not an algorithm of this minor (1 Ed25519, 2 ECDSA P-256)" % alg)
    key = typed(SIG_KEY, MT_BYTES, "bytes").raw
    if len(key) != KEY_ID_LEN:
        fail("R56", "tpack.sig.key is %d bytes, not %d" % (len(key), KEY_ID_LEN))
    counter = typed(SIG_COUNTER, MT_U64, "u64").decoded
    subject = None
    if SIG_SUBJECT in by_key:
        r = typed(SIG_SUBJECT, MT_STRING, "string")
        if not 1 <= len(r.raw) <= MAX_SUBJECT_LEN:
            fail("R56", "tpack.sig.subject is %d bytes, not 1 to %d" % (len(r.raw), MAX_SUBJECT_LEN))
        subject = r.decoded
    public_key = None
    if SIG_PUBKEY in by_key:
        public_key = typed(SIG_PUBKEY, MT_BYTES, "bytes").raw
        if alg in ALGORITHMS and len(public_key) != ALGORITHMS[alg][2]:
            fail("R56", "tpack.sig.pubkey is %d bytes, an %s key is %d"
                 % (len(public_key), ALGORITHMS[alg][0], ALGORITHMS[alg][2]))
    if not newer:
        for r in sig_records:
            if r.raw_key not in SIG_KNOWN_KEYS:
                fail("R56", "metadata key %r is reserved (tpack.sig.) and not defined in minor %d"
                     % (r.key, READER_MINOR))
    # ---- R57 SignatureLength
    table_len = DIGEST_LEN * (n - 1)
    if alg in ALGORITHMS:
        want = table_len + ALGORITHMS[alg][1]
        if s.length != want:
            fail("R57", "the signature entry is %d bytes; %d entries and %s give %d"
                 % (s.length, n, ALGORITHMS[alg][0], want))
    elif s.length <= table_len:
        fail("R57", "the signature entry is %d bytes, not above the %d of the digest table (algorithm %d)"
             % (s.length, table_len, alg))
    sig = Signature()
    sig.algorithm = alg
    sig.key_id = key
    sig.counter = counter
    sig.subject = subject
    sig.public_key = public_key
    sig.entry = s
    buf = c.buf
    sig.digests = bytes(buf[s.offset:s.offset + table_len])
    sig.signature = bytes(buf[s.offset + table_len:s.offset + s.length])
    sig.message = signed_message(buf, p_off, sig.digests)
    return sig


def signed_message(buf, p_off, digests):
    """M of section 14: the 16-byte prefix, SHA-256 of the prefix P = bytes[0, payloads.offset),
    SHA-256 of the digest table G."""
    return MESSAGE_PREFIX + hashlib.sha256(buf[0:p_off]).digest() + hashlib.sha256(digests).digest()


# ==================================================================== metadata pool values (section 7.1)
def frame_value(vtype, raw, level, where):
    """R47 for a pool value of a known type: its length fits the type, and a string[]
    or array[] is exactly filled by its items; array[] items recursively, with at most
    MAX_ARRAY_DEPTH levels of array[] (level counts them, the outermost is 1).
    Returns what decode_value needs: the raw bytes, or for string[] the list of item
    bytes, or for array[] the list of (item type, framed item)."""
    n = len(raw)
    name = META_TYPES[vtype]
    if vtype in META_POOL_SCALAR:
        width = META_POOL_SCALAR[vtype][0]
        if n != width:
            fail("R47", "%s: %s value of %d bytes, not %d" % (where, name, n, width))
        return raw
    if vtype in META_FIXED_ARRAY:
        width = META_FIXED_ARRAY[vtype][0]
        if n % width != 0:
            fail("R47", "%s: %s value_len %d not a multiple of %d" % (where, name, n, width))
        return raw
    if vtype == MT_STRA:
        items = []
        pos = 0
        while pos < n:
            if pos + 4 > n:
                fail("R47", "%s: string[] item length cut short" % where)
            k = U32_FMT.unpack_from(raw, pos)[0]
            if pos + 4 + k > n:
                fail("R47", "%s: string[] item overruns its value" % where)
            items.append(raw[pos + 4:pos + 4 + k])
            pos += 4 + k
        return items
    if vtype == MT_ARRA:
        if level > MAX_ARRAY_DEPTH:
            fail("R47", "%s: array[] nested %d levels deep, more than %d" % (where, level, MAX_ARRAY_DEPTH))
        items = []
        pos = 0
        t = 0
        while pos < n:
            if pos + ARRAY_ITEM_HEADER_LEN > n:
                fail("R47", "%s: array[] item %d header cut short" % (where, t))
            itype = raw[pos]
            if any(raw[pos + 1:pos + 4]):
                fail("R47", "%s: array[] item %d header reserved bytes not zero" % (where, t))
            k = U32_FMT.unpack_from(raw, pos + 4)[0]
            body = pos + ARRAY_ITEM_HEADER_LEN
            if body + k > n:
                fail("R47", "%s: array[] item %d of %d bytes overruns its value" % (where, t, k))
            if itype not in META_ARRAY_TYPES:
                fail("R47", "%s: array[] item %d has type %d, not an array type" % (where, t, itype))
            sub = "%s array[] item %d" % (where, t)
            items.append((itype, frame_value(itype, raw[body:body + k],
                                             level + 1 if itype == MT_ARRA else level, sub)))
            pos = body + k
            t += 1
        return items
    return raw   # string, bytes: any length


def decode_value(vtype, framed, where):
    """R48 and R49 on a framed pool value of a known type, and its section-13 decoding."""
    if vtype in META_POOL_SCALAR:
        v = struct.unpack("<" + META_POOL_SCALAR[vtype][1], framed)[0]
        return "%08x" % v if vtype == MT_F32 else v
    if vtype in META_FIXED_ARRAY:
        width, code = META_FIXED_ARRAY[vtype]
        values = struct.unpack("<%d%s" % (len(framed) // width, code), framed)
        if vtype == MT_BOOLA:
            for k, v in enumerate(values):
                if v not in (0, 1):
                    fail("R48", "%s: bool[] element %d is %d" % (where, k, v))
            return [v == 1 for v in values]
        if vtype == MT_F64A:
            return ["%016x" % v for v in values]
        if vtype == MT_F32A:
            return ["%08x" % v for v in values]
        return list(values)
    if vtype == MT_STRING:
        text = utf8(framed)
        if text is None:
            fail("R49", "%s: string is not valid UTF-8" % where)
        return text
    if vtype == MT_STRA:
        decoded = []
        for t, item in enumerate(framed):
            text = utf8(item)
            if text is None:
                fail("R49", "%s: string[] item %d is not valid UTF-8" % (where, t))
            decoded.append(text)
        return decoded
    if vtype == MT_ARRA:
        return [{"type": META_TYPES[itype], "value": decode_value(itype, sub, "%s array[] item %d" % (where, t))}
                for t, (itype, sub) in enumerate(framed)]
    return framed.hex()   # bytes


# ==================================================================== payload integrity (R37, R50)
def verify_payloads(c, path="", digests=None):
    """The payload-integrity group (section 12), on a container open_container
    accepted: entry by entry in table order, R37 for the padding before the
    entry, then R50 for its payload, then for a CONTAINER entry the full
    verification of the nested container.  What the nested verification finds
    is reported under the integrity rule itself (section 9, revision fcb04b4):
    a non-zero nested padding byte is R37, a nested payload mismatch R50, never
    R39 (R39 covers only the structural rules R1-R36, R39-R49 and R51-R53;
    note N4).
    Only R37 and R50 can be raised here, at any depth; the message names the
    path of nested entries.  With digests (the digest table of a signed container
    whose signature passed R58-R63, section 14), R64 is checked between R37 and
    R50 for every entry but the signature entry (the last); nested containers get
    the plain payload-integrity group (their own signature is not checked)."""
    buf = c.buf
    for e in c.entries:
        pad = bytes(buf[e.pad_start:e.offset])
        if pad.count(0) != len(pad):
            k = next(k for k, b in enumerate(pad) if b)
            fail("R37", "%snon-zero padding byte 0x%02x at offset %d before entry %d (%r)"
                 % (path, pad[k], e.pad_start + k, e.index, e.name))
        if digests is not None and e.index < c.n - 1:
            digest = hashlib.sha256(buf[e.offset:e.offset + e.length]).digest()
            want = digests[DIGEST_LEN * e.index:DIGEST_LEN * (e.index + 1)]
            if digest != want:
                fail("R64", "%sentry %d (%r): SHA-256 %s, the signed digest table says %s"
                     % (path, e.index, e.name, digest.hex(), want.hex()))
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
    out = {
        "version": [1, c.minor],
        "compat_flags": c.compat,
        "entries": entries,
        "metadata": metadata,
    }
    sig = c.signature
    if sig is not None:
        out["signature"] = {
            "algorithm": sig.algorithm,
            "key": sig.key_id.hex(),
            "counter": sig.counter,
            "subject": sig.subject,
            "public_key": sig.public_key.hex() if sig.public_key is not None else None,
            "message": sig.message.hex(),
        }
    return out


def read_container(data):
    """Full validation (R1-R57, section 12) of bytes: open (structural rules), then verify
    (R37 and R50, section 12).  Returns the decoding or raises Invalid."""
    c = open_container(memoryview(data), 0)
    verify_payloads(c)
    return decode(c)


# ==================================================================== authenticated verification (section 14)
class BadInput(ValueError):
    """KEYS.json or POLICY.json does not follow the kit protocol (exit 2, not a verdict)."""


# the order n of the P-256 group, and L, the order of the Ed25519 base point
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
ED25519_L = 2 ** 252 + 27742317777372353535851937790883648493


def load_json(path):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput("%s: %s" % (path, exc))


def hex_bytes(value, what):
    if not isinstance(value, str):
        raise BadInput("%s: expected a hex string" % what)
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise BadInput("%s: not hex" % what)


def optional_string(obj, field, what):
    value = obj.get(field)
    if value is not None and not isinstance(value, str):
        raise BadInput("%s.%s: expected a string or null" % (what, field))
    return value


def load_keys(path):
    """The key set: a list of trusted keys, each {"algorithm", "public_key" (hex of the raw key,
    or null for a key known by its id only), "key_id" (hex; may be left out when public_key is
    given and fits its algorithm), "subject" (or null)}.  A key is taken as declared: its id is not
    checked against its public key, nor the key's length against its algorithm (the kit's vectors
    declare an Ed25519 key as a P-256 one to reach R60; a key that does not fit its algorithm
    verifies nothing, R63)."""
    doc = load_json(path)
    if not isinstance(doc, list):
        raise BadInput("%s: expected a list of keys" % path)
    keys = []
    for k, obj in enumerate(doc):
        what = "%s[%d]" % (path, k)
        if not isinstance(obj, dict):
            raise BadInput("%s: expected an object" % what)
        alg = obj.get("algorithm")
        if alg not in ALGORITHMS or isinstance(alg, bool):
            raise BadInput("%s.algorithm: expected 1 (Ed25519) or 2 (ECDSA P-256)" % what)
        public_key = obj.get("public_key")
        if public_key is not None:
            public_key = hex_bytes(public_key, what + ".public_key")
        kid = obj.get("key_id")
        if kid is None:
            if public_key is None or len(public_key) != ALGORITHMS[alg][2]:
                raise BadInput("%s: no key_id, and no public_key of its algorithm to compute it from" % what)
            kid = key_id(alg, public_key)
        else:
            kid = hex_bytes(kid, what + ".key_id")
            if len(kid) != KEY_ID_LEN:
                raise BadInput("%s.key_id: %d bytes, not %d" % (what, len(kid), KEY_ID_LEN))
        keys.append({"algorithm": alg, "public_key": public_key, "key_id": kid,
                     "subject": optional_string(obj, "subject", what)})
    return keys


def load_policy(path):
    """The policy: {"require_signature": bool, "min_counter": u64, "subject": string or null}."""
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise BadInput("%s: expected an object" % path)
    require = doc.get("require_signature", False)
    floor = doc.get("min_counter", 0)
    if not isinstance(require, bool):
        raise BadInput("%s.require_signature: expected true or false" % path)
    if isinstance(floor, bool) or not isinstance(floor, int) or not 0 <= floor <= U64_MAX:
        raise BadInput("%s.min_counter: expected an integer from 0 to 2^64 - 1" % path)
    return {"require_signature": require, "min_counter": floor,
            "subject": optional_string(doc, "subject", path)}


def signature_verifies(algorithm, public_key, message, signature):
    """Whether `signature` is algorithm's signature of `message` by `public_key` (section 14):
    Ed25519 pure (RFC 8032) with S < L; ECDSA P-256 with SHA-256, r || s big-endian, r and s in
    [1, n - 1], a high s accepted.  A public key that is not a valid key verifies nothing."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    if len(signature) != 64:
        return False
    try:
        if algorithm == ALG_ED25519:
            if int.from_bytes(signature[32:], "little") >= ED25519_L:
                return False          # the malleable twin (S + L) of a valid signature
            ed25519.Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
            return True
        r = int.from_bytes(signature[:32], "big")
        s = int.from_bytes(signature[32:], "big")
        if not (1 <= r < P256_N and 1 <= s < P256_N):
            return False
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public_key)
        key.verify(encode_dss_signature(r, s), message, ec.ECDSA(hashes.SHA256()))
        return True
    except (InvalidSignature, ValueError):
        return False


def authenticate(c, keys, policy):
    """R58-R63 in order (section 14) on a container that passed the structural rules."""
    sig = c.signature
    if sig is None:
        if policy["require_signature"]:
            fail("R58", "the policy requires a signature and the container is unsigned")
        return
    # ---- R59 UnknownKey: the first trusted key of the file's id
    trusted = next((k for k in keys if k["key_id"] == sig.key_id), None)
    if trusted is None:
        fail("R59", "tpack.sig.key %s is no trusted key" % sig.key_id.hex())
    if sig.public_key is not None and key_id(trusted["algorithm"], sig.public_key) != sig.key_id:
        fail("R59", "tpack.sig.pubkey does not hash to tpack.sig.key %s" % sig.key_id.hex())
    if trusted["public_key"] is None and sig.public_key is None:
        fail("R59", "the trusted key %s is known by its id only and the file carries no public key"
             % sig.key_id.hex())
    # ---- R60 AlgorithmMismatch
    if sig.algorithm != trusted["algorithm"]:
        fail("R60", "tpack.sig.alg %d, the trusted key is %s (%d)"
             % (sig.algorithm, ALGORITHMS[trusted["algorithm"]][0], trusted["algorithm"]))
    # ---- R61 SubjectMismatch
    for who, want in (("the policy", policy["subject"]), ("the trusted key", trusted["subject"])):
        if want is not None and (sig.subject is None or sig.subject.encode() != want.encode()):
            fail("R61", "%s names subject %r, the file %s" % (who, want, "has none" if sig.subject is None
                                                             else "says %r" % sig.subject))
    # ---- R62 Rollback
    if sig.counter < policy["min_counter"]:
        fail("R62", "tpack.sig.counter %d is below the policy's minimum %d" % (sig.counter, policy["min_counter"]))
    # ---- R63 BadSignature
    public_key = trusted["public_key"] if trusted["public_key"] is not None else sig.public_key
    if not signature_verifies(sig.algorithm, public_key, sig.message, sig.signature):
        fail("R63", "the %s signature does not verify over M = %s"
             % (ALGORITHMS[sig.algorithm][0], sig.message.hex()))


def verify_signed(data, keys, policy):
    """The authenticated verification of section 14: structural rules (R1-R57), R58-R63, then
    the payload-integrity group with R64 for a signed container.  Raises Invalid."""
    c = open_container(memoryview(data), 0)
    authenticate(c, keys, policy)
    verify_payloads(c, digests=c.signature.digests if c.signature is not None else None)


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


USAGE = "usage: tpack_reader.py FILE\n       tpack_reader.py --verify-signature KEYS.json POLICY.json FILE\n"


def main(argv):
    verify = len(argv) == 5 and argv[1] == "--verify-signature"
    if len(argv) != 2 and not verify:
        sys.stderr.write(USAGE)
        return 2
    keys = policy = None
    if verify:
        try:
            import cryptography  # noqa: F401  (only this mode needs it)
            keys = load_keys(argv[2])
            policy = load_policy(argv[3])
        except ImportError:
            sys.stderr.write("--verify-signature needs the Python package cryptography (pip install cryptography)\n")
            return 2
        except BadInput as exc:
            sys.stderr.write("%s\n" % exc)
            return 2
    try:
        data = read_input(argv[-1])
    except (OSError, ValueError) as exc:
        sys.stderr.write("cannot read %s: %s\n" % (argv[-1], exc))
        return 2
    try:
        if verify:
            verify_signed(data, keys, policy)
            result = None
        else:
            result = read_container(data)
    except Invalid as exc:
        sys.stdout.write("%s %s\n" % (exc.rule, exc.message))
        return 1
    except Exception:  # a bug in this reader: never let it pass for exit 1 ("invalid")
        import traceback
        traceback.print_exc()
        return 3
    sys.stdout.write("ok\n" if verify else json.dumps(result, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
