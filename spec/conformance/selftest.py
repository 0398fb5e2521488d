#!/usr/bin/env python3
"""Self-test of a tpack reader, independent of the golden vectors (by default of tpack_reader.py).

Contains a tiny canonical writer written from spec/FORMAT.md section 11, that also signs
(section 14, with the Python package `cryptography`: Ed25519 from a fixed seed, P-256 from a
fixed key), builds valid containers, containers that break one rule and containers that break
several (where the first in the order of section 12 must be reported), runs the reader on each
(as a subprocess, through the command-line protocol of README.md) and checks the answer.
Signed containers are also given to the reader with `--verify-signature KEYS.json POLICY.json`
(the attacks of section 14 among them: each must be refused with its rule R58-R64), and
without (a forgery whose CRCs were recomputed is a valid container).
Then runs the reader on paths that are not regular files (/dev/zero, a FIFO, a
directory), which it must refuse promptly with a non-zero exit and bounded memory,
and a mutation fuzz to check it never crashes.

    python3 spec/conformance/selftest.py [-v] [--fuzz N] [--timeout SECONDS] [-- READER_CMD [ARGS...]]

READER_CMD is run as `READER_CMD ARGS... FILE`, as by run.py; the default is
`python3 tpack_reader.py`, whose fuzz then runs in-process (3000 mutations, catching
any exception but the reader's own Invalid); another reader's runs as subprocesses
(300 mutations by default; each must exit 0, or 1 with a rule id).

Exit 0 when everything passes; the last line is "N passed, M failed".
"""

import hashlib
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
READER = os.path.join(HERE, "tpack_reader.py")
READER_1_0 = os.path.join(HERE, "tpack_reader_1_0.py")   # frozen 1.0 reader (compatibility, section 10)
sys.path.insert(0, HERE)
import tpack_reader  # noqa: E402  (used in-process for the fuzz loop)

MAGIC = b"\x89TPK\r\n\x1a\n"
DT = {n: c for c, (n, _, _) in tpack_reader.DTYPES.items()}
MT = {n: c for c, n in tpack_reader.META_TYPES.items()}
SCALAR_MT = (1, 2, 3, 4)
BLOCK_DT = sorted(c for c, (_, _, blk) in tpack_reader.DTYPES.items() if blk)
NEW_DT = [c for c in sorted(tpack_reader.DTYPES) if 20 <= c < 55]    # the 1.1 dtypes
# pool scalars of 1.1: type -> (width, struct code); fixed-width arrays: type -> (element width, code)
POOL_SCALAR = {11: (1, "B"), 12: (1, "b"), 13: (2, "H"), 14: (2, "h"), 15: (4, "I"), 16: (4, "i"), 17: (4, "f")}
FIXED_ARRAY = {18: (1, "B"), 19: (1, "b"), 20: (2, "H"), 21: (2, "h"), 22: (4, "I"), 23: (4, "i"), 24: (4, "f")}


def elem_len(dtype, shape):
    info = tpack_reader.DTYPES[dtype]
    count = 1
    for d in shape:
        count *= d
    if info[2]:
        return count // info[2][0] * info[2][1]
    return count * info[1]


class E(object):
    """One entry to write.  payload defaults to a deterministic byte pattern."""

    def __init__(self, name, dtype="U8", shape=(4,), payload=None, alignment=64, target=None,
                 extra_pad=0, pad_byte=0):
        self.name = name.encode() if isinstance(name, str) else name
        self.dtype = DT[dtype] if isinstance(dtype, str) else dtype
        self.shape = list(shape)
        if payload is None:
            n = elem_len(self.dtype, self.shape) if self.dtype in tpack_reader.DTYPES else 8
            payload = bytes((i * 7 + 3) & 0xFF for i in range(n))
        self.payload = payload
        self.alignment = alignment
        self.target = target
        self.extra_pad = extra_pad      # extra alignment units of padding (breaks R36)
        self.pad_byte = pad_byte        # padding fill (non-zero breaks R37)


def encode_meta_value(mtype, value):
    """-> (inline u64, pool bytes or None).  Raw bytes are written as is for any pool type."""
    if isinstance(value, (bytes, bytearray)) and mtype not in (1, 2, 3, 4):
        return 0, bytes(value)
    if mtype == 1:
        return value, None
    if mtype == 2:
        return value & (2 ** 64 - 1), None
    if mtype == 3:
        return struct.unpack("<Q", struct.pack("<d", value))[0] if isinstance(value, float) else value, None
    if mtype == 4:
        return (1 if value else 0) if isinstance(value, bool) else value, None
    if mtype == 5:
        return 0, value.encode() if isinstance(value, str) else value
    if mtype == 6:
        return 0, value
    if mtype == 7:
        return 0, struct.pack("<%dQ" % len(value), *value)
    if mtype == 8:
        return 0, struct.pack("<%dq" % len(value), *value)
    if mtype == 9:
        return 0, struct.pack("<%dd" % len(value), *value)
    if mtype == 10:
        out = b""
        for s in value:
            b = s.encode() if isinstance(s, str) else s
            out += struct.pack("<I", len(b)) + b
        return 0, out
    if mtype in POOL_SCALAR:      # 1.1 pool scalars; an int for f32 is its bit pattern
        code = POOL_SCALAR[mtype][1]
        if mtype == 17 and not isinstance(value, float):
            code = "I"
        return 0, struct.pack("<" + code, value)
    if mtype in FIXED_ARRAY:
        code = FIXED_ARRAY[mtype][1]
        if mtype == 24 and value and not isinstance(value[0], float):
            code = "I"
        return 0, struct.pack("<%d%s" % (len(value), code), *value)
    if mtype == 25:
        return 0, bytes(1 if v is True else 0 if v is False else v for v in value)
    if mtype == 26:   # array[]: items (type, value), or raw item bytes (headers included)
        return 0, b"".join(v if isinstance(v, (bytes, bytearray)) else arr_item(*v) for v in value)
    return 0, value      # unknown type: raw pool bytes


def arr_item(itype, value, reserved=b"\0\0\0", length=None):
    """One array[] item (section 7.1): u8 type, three reserved bytes, u32 length, then the body."""
    itype = MT[itype] if isinstance(itype, str) else itype
    body = encode_meta_value(itype, value)[1] if itype not in SCALAR_MT else bytes(value)
    return struct.pack("<B3sI", itype, reserved, len(body) if length is None else length) + body


def nested_array(levels, leaf=("u8[]", [1])):
    """An array[] value (list of items) nested `levels` levels of array[] deep, the outermost included."""
    value = [leaf]
    for _ in range(levels - 1):
        value = [("array[]", value)]
    return value


def write(entries=(), meta=(), compat=0, minor=0, header_len=160, sort_meta=True, index=None,
          extra_header=None):
    """Canonical writer (spec section 11).  meta: list of (key, type, value)."""
    n = len(entries)
    names = b"".join(e.name for e in entries)
    if index is None:
        index = sorted(range(n), key=lambda i: entries[i].name)
    recs = []
    for key, mtype, value in meta:
        mtype = MT[mtype] if isinstance(mtype, str) else mtype
        kb = key.encode() if isinstance(key, str) else key
        inline, pool_val = encode_meta_value(mtype, value)
        recs.append((kb, mtype, inline, pool_val))
    if sort_meta:
        recs.sort(key=lambda r: r[0])
    m = len(recs)
    pool = b""
    rec_bytes = b""
    for kb, mtype, inline, pool_val in recs:
        koff = len(pool)
        pool += kb
        if pool_val is None:
            rec_bytes += struct.pack("<IHBBIIQ", koff, len(kb), mtype, 0, 0, 0, inline)
        else:
            voff = len(pool)
            pool += pool_val
            rec_bytes += struct.pack("<IHBBIIQ", koff, len(kb), mtype, 0, len(pool_val), voff, inline)
    metadata = rec_bytes + pool

    table_off = header_len
    index_off = table_off + 104 * n
    names_off = index_off + 4 * n
    meta_off = names_off + len(names)
    pay_off = meta_off + len(metadata)
    cursor = pay_off
    payload_area = b""
    offsets = []
    for e in entries:
        start = -(-cursor // e.alignment) * e.alignment + e.extra_pad * e.alignment
        payload_area += bytes([e.pad_byte]) * (start - cursor) + e.payload
        offsets.append(start)
        cursor = start + len(e.payload)
    trailer_off = cursor
    total = trailer_off + 4 * n + 4

    table = b""
    name_pos = 0
    for e, off in zip(entries, offsets):
        dims = e.shape + [0] * (8 - len(e.shape))
        flags = 1 if e.target is not None else 0
        table += struct.pack("<IIHBBIQQQ8Q", name_pos, len(e.name), e.dtype, len(e.shape), flags,
                             e.alignment, off, len(e.payload), e.target or 0, *dims)
        name_pos += len(e.name)
    idx = struct.pack("<%dI" % n, *index)
    crcs = [zlib.crc32(e.payload) for e in entries]
    tr = struct.pack("<%dI" % n, *crcs)
    trailer = tr + struct.pack("<I", zlib.crc32(tr))

    hdr = struct.pack("<8sHHIQQQIIII", MAGIC, 1, minor, header_len, 0, compat, total, n, 104, m, 0)
    for off, ln in ((table_off, len(table)), (index_off, len(idx)), (names_off, len(names)),
                    (meta_off, len(metadata)), (pay_off, len(payload_area)), (trailer_off, len(trailer))):
        hdr += struct.pack("<QQ", off, ln)
    hdr += bytes(8)
    hdr += (extra_header or bytes(header_len - 160))
    buf = bytearray(hdr + table + idx + names + metadata + payload_area + trailer)
    assert len(buf) == total
    fix_header_crc(buf)
    return bytes(buf)


def ext_item(tag, body, pad=None):
    """A header-extension item (section 3.4): u32 tag, u32 length, body, zero padding to 8 (items
    start at multiples of 8, so padding to 8 relative to the item is padding relative to the file)."""
    if pad is None:
        pad = bytes(-len(body) % 8)
    return struct.pack("<II", tag, len(body)) + body + pad


def geometry_body(records):
    """records: codes (the reader's own geometry) or tuples (code, block_elements, block_bytes
    [, reserved, reserved2])."""
    out = b""
    for r in records:
        if isinstance(r, int):
            blk = tpack_reader.DTYPES[r][2]
            r = (r,) + (blk if blk else (1, tpack_reader.DTYPES[r][1]))
        code, be, bb = r[:3]
        res, res2 = (tuple(r[3:5]) + (0, 0))[:2]
        out += struct.pack("<HHIII", code, res, be, bb, res2)
    return out


def geometry_item(records):
    return ext_item(1, geometry_body(records))


def write_ext(entries=(), meta=(), ext=b"", minor=1, **kw):
    """A file whose header extension is exactly `ext` (header_len = 160 + len(ext))."""
    return write(entries, meta, minor=minor, header_len=160 + len(ext), extra_header=ext, **kw)


def write11(entries=(), meta=(), **kw):
    """Canonical writer of section 11.1 for 1.1 content: minor 0 when every dtype and metadata type is
    of 1.0, else 1; a block geometry item with one record per block dtype the entries use, if any."""
    new = any(e.dtype > 19 for e in entries) or \
        any((MT[t] if isinstance(t, str) else t) > 10 for _, t, _ in meta)
    if not new:
        return write(entries, meta, **kw)
    used = sorted(set(e.dtype for e in entries if e.dtype in BLOCK_DT))
    return write_ext(entries, meta, geometry_item(used) if used else b"", minor=1, **kw)


# ------------------------------------------------------------------ patch helpers
def sec(buf, k):
    return struct.unpack_from("<QQ", buf, 56 + 16 * k)


def fix_header_crc(buf):
    moff, mlen = sec(buf, 3)
    crc = zlib.crc32(bytes(buf[0:52]))
    crc = zlib.crc32(bytes(buf[56:moff + mlen]), crc)
    struct.pack_into("<I", buf, 52, crc)


def fix_trailer(buf):
    n = struct.unpack_from("<I", buf, 40)[0]
    roff, _ = sec(buf, 5)
    struct.pack_into("<I", buf, roff + 4 * n, zlib.crc32(bytes(buf[roff:roff + 4 * n])))


DESC_FIELDS = {"name_offset": (0, "I"), "name_len": (4, "I"), "dtype": (8, "H"), "rank": (10, "B"),
               "flags": (11, "B"), "alignment": (12, "I"), "offset": (16, "Q"), "length": (24, "Q"),
               "target": (32, "Q")}
for _k in range(8):
    DESC_FIELDS["dim%d" % _k] = (40 + 8 * _k, "Q")
META_FIELDS = {"key_offset": (0, "I"), "key_len": (4, "H"), "type": (6, "B"), "reserved": (7, "B"),
               "value_len": (8, "I"), "value_offset": (12, "I"), "value": (16, "Q")}
HDR_FIELDS = {"major": (8, "H"), "minor": (10, "H"), "header_len": (12, "I"), "incompat": (16, "Q"),
              "compat": (24, "Q"), "total_len": (32, "Q"), "n": (40, "I"), "descriptor_len": (44, "I"),
              "m": (48, "I"), "header_crc": (52, "I"), "reserved": (152, "Q")}
for _k, _s in enumerate(("table", "index", "names", "metadata", "payloads", "trailer")):
    HDR_FIELDS[_s + ".offset"] = (56 + 16 * _k, "Q")
    HDR_FIELDS[_s + ".length"] = (64 + 16 * _k, "Q")


def patch(data, edits, crc=True):
    """edits: list of (where, field, value); where is 'h', ('d', i) or ('m', j)."""
    buf = bytearray(data)
    for where, field, value in edits:
        if where == "h":
            off, fmt = HDR_FIELDS[field]
        elif where[0] == "d":
            rel, fmt = DESC_FIELDS[field]
            off = sec(buf, 0)[0] + 104 * where[1] + rel
        else:
            rel, fmt = META_FIELDS[field]
            off = sec(buf, 3)[0] + 24 * where[1] + rel
        struct.pack_into("<" + fmt, buf, off, value)
    if crc:
        fix_header_crc(buf)
    return bytes(buf)


def poke(data, offset, raw, crc=False):
    buf = bytearray(data)
    buf[offset:offset + len(raw)] = raw
    if crc:
        fix_header_crc(buf)
    return bytes(buf)


def grow_section(data, k, extra, fix_crc=True):
    """Insert `extra` at the end of section k (0=table .. 5=trailer), shifting later sections."""
    off, ln = sec(data, k)
    buf = bytearray(data[:off + ln] + extra + data[off + ln:])
    struct.pack_into("<Q", buf, 64 + 16 * k, ln + len(extra))
    for later in range(k + 1, 6):
        struct.pack_into("<Q", buf, 56 + 16 * later, sec(data, later)[0] + len(extra))
    struct.pack_into("<Q", buf, 32, len(buf))
    if fix_crc:
        fix_header_crc(buf)
    return bytes(buf)


def payload_offset(data, i):
    t = sec(data, 0)[0]
    return struct.unpack_from("<Q", data, t + 104 * i + 16)[0]


# ------------------------------------------------------------------ test cases
def nest(depth, leaf=None):
    """A container nested `depth` levels deep (the innermost is `leaf`)."""
    inner = leaf if leaf is not None else write([E("leaf", "F32", (2,))], [("d", "u64", depth)])
    for _ in range(depth):
        inner = write([E("c", "CONTAINER", (len(inner),), inner)])
    return inner


def cases():
    """yield (label, bytes, expected) with expected 'valid', a dict decoding, or a rule id."""
    empty = write()
    yield "valid/empty", empty, {"version": [1, 0], "compat_flags": 0, "entries": [], "metadata": []}

    sc = write([E("x", "F64", (), struct.pack("<d", 1.5))], [("k", "u64", 7)])
    yield "valid/scalar", sc, {
        "version": [1, 0], "compat_flags": 0,
        "entries": [{"name": "x", "dtype": "F64", "shape": [], "offset": 320, "length": 8,
                     "alignment": 64, "target": None, "checksum": zlib.crc32(struct.pack("<d", 1.5))}],
        "metadata": [{"key": "k", "type": "u64", "value": 7}]}

    allmeta = [("u", "u64", 2 ** 64 - 1), ("i", "i64", -5), ("f", "f64", 3.141592653589793),
               ("nan", "f64", 0x7ff8000000000001), ("b0", "bool", False), ("b1", "bool", True),
               ("s", "string", "héllo"), ("es", "string", ""), ("by", "bytes", b"\x00\xffA"),
               ("ua", "u64[]", [1, 2 ** 64 - 1]), ("ia", "i64[]", [-1, 0, 2 ** 63 - 1]),
               ("fa", "f64[]", [-0.0, 1.0]), ("sa", "string[]", ["a", "", "ü"]), ("ea", "u64[]", [])]
    mixed = [E("w", "F32", (2, 3)), E("q8", "Q8_0", (2, 64)), E("q4", "Q4_0", (32,), alignment=1),
             E("raw", "RAW", (5,), alignment=4096), E("empty", "F16", (3, 0, 7)),
             E("t", "BOOL", (3,), target=2 ** 64 - 3), E("z", "U8", (0,), alignment=2),
             E("t0", "I16", (1,), target=0)]
    full = write(mixed, allmeta)
    expected = {"version": [1, 0], "compat_flags": 0, "entries": [], "metadata": [
        {"key": "b0", "type": "bool", "value": False}, {"key": "b1", "type": "bool", "value": True},
        {"key": "by", "type": "bytes", "value": "00ff41"},
        {"key": "ea", "type": "u64[]", "value": []},
        {"key": "es", "type": "string", "value": ""},
        {"key": "f", "type": "f64", "value": "400921fb54442d18"},
        {"key": "fa", "type": "f64[]", "value": ["8000000000000000", "3ff0000000000000"]},
        {"key": "i", "type": "i64", "value": -5},
        {"key": "ia", "type": "i64[]", "value": [-1, 0, 2 ** 63 - 1]},
        {"key": "nan", "type": "f64", "value": "7ff8000000000001"},
        {"key": "s", "type": "string", "value": "héllo"},
        {"key": "sa", "type": "string[]", "value": ["a", "", "ü"]},
        {"key": "u", "type": "u64", "value": 2 ** 64 - 1},
        {"key": "ua", "type": "u64[]", "value": [1, 2 ** 64 - 1]}]}
    for i, e in enumerate(mixed):
        expected["entries"].append({
            "name": e.name.decode(), "dtype": tpack_reader.DTYPES[e.dtype][0], "shape": e.shape,
            "offset": payload_offset(full, i), "length": len(e.payload), "alignment": e.alignment,
            "target": e.target, "checksum": zlib.crc32(e.payload)})
    yield "valid/mixed", full, expected

    yield "valid/compat-flags", write([E("a")], compat=0xDEADBEEF), "valid"
    inner = write([E("leaf", "F32", (2,))], [("d", "u64", 1)])
    nested = write([E("a"), E("c", "CONTAINER", (len(inner),), inner, alignment=64)])
    yield "valid/nested", nested, "valid"
    yield "valid/nested-depth-8", nest(8), "valid"
    # a file of minor 3, newer than this 1.2 reader (section 10): an unknown dtype without a geometry
    # record, an unknown metadata type, and a header-extension item of an unknown tag (tag 7), skipped
    newer = write([E("a", 99, (3,), b"xyz"), E("b", 0, (2, 2), b"1234")],
                  [("k", 77, b"\x01\x02"), ("s", "string", "v")], minor=3, header_len=176,
                  extra_header=ext_item(7, b"ABCDEFGH"))
    yield "valid/newer-minor", newer, {
        "version": [1, 3], "compat_flags": 0,
        "entries": [{"name": "a", "dtype": 99, "shape": [3], "offset": payload_offset(newer, 0),
                     "length": 3, "alignment": 64, "target": None, "checksum": zlib.crc32(b"xyz")},
                    {"name": "b", "dtype": 0, "shape": [2, 2], "offset": payload_offset(newer, 1),
                     "length": 4, "alignment": 64, "target": None, "checksum": zlib.crc32(b"1234")}],
        "metadata": [{"key": "k", "type": 77, "value": "0102"},
                     {"key": "s", "type": "string", "value": "v"}]}
    yield "valid/newer-minor-160", write([E("a")], minor=3), "valid"

    base = write([E("alpha", "U8", (8,)), E("beta", "U16", (4,)), E("gamma", "RAW", (3,))],
                 [("k1", "u64", 1), ("k2", "string", "hi"), ("k3", "bool", True)])
    nb = len(base)
    # header
    yield "R1", base[:159], "R1"
    yield "R1-empty", b"", "R1"
    yield "R2", b"\x89TPK\n\x1a\n\n" + base[8:], "R2"
    # section 11.2 (3d56a44): a back-patching writer writes the magic last, so a file interrupted
    # before that starts with zeros; to a reader it is simply R2 (or R1 when shorter than 160 bytes)
    yield "R2-magic-not-yet-written", bytes(8) + base[8:], "R2"
    yield "R1-interrupted-early", bytes(8) + base[8:100], "R1"
    yield "R3", patch(base, [("h", "major", 2)]), "R3"
    # the header diagnosis (section 12): R3 and R5 only when the header is intact; a damaged one that is
    # otherwise sound as 1.x (R4, R6, R7, R10-R12) and whose checksummed region is in the input is R13
    yield "order-R13-not-R3-major-bit-flip", patch(base, [("h", "major", 3)], crc=False), "R13"
    yield "order-R13-not-R3-major-0", patch(base, [("h", "major", 0)], crc=False), "R13"
    yield "order-R13-not-R5-flag-bit-flip", patch(base, [("h", "incompat", 1 << 63)], crc=False), "R13"
    yield "order-R13-not-R5-in-minor-1", patch(write11([E("c", "C64", (1,))]), [("h", "incompat", 4)],
                                                   crc=False), "R13"
    yield "order-R13-not-R3-trailing-bytes", patch(base, [("h", "major", 3)], crc=False) + b"\0", "R13"
    yield "order-R13-not-R3-cut-after-prefix", patch(base, [("h", "major", 3)], crc=False)[:-1], "R13"
    yield "order-R3-intact-header", patch(base, [("h", "major", 3)])[:-1], "R3"
    yield "order-R5-intact-header", patch(base, [("h", "incompat", 2)]) + b"\0", "R5"
    yield "order-R3-damaged-R4", patch(base, [("h", "major", 3), ("h", "header_len", 168)], crc=False), "R3"
    yield "order-R3-damaged-R6", patch(base, [("h", "major", 3), ("h", "descriptor_len", 112)], crc=False), "R3"
    yield "order-R5-damaged-R7", patch(base, [("h", "incompat", 1), ("h", "reserved", 1)], crc=False), "R5"
    yield "order-R3-damaged-R10", patch(base, [("h", "major", 3), ("h", "trailer.length", 10 ** 6)], crc=False), "R3"
    yield "order-R5-damaged-R11", patch(base, [("h", "incompat", 1), ("h", "table.offset", 168)], crc=False), "R5"
    yield "order-R5-damaged-R12", patch(grow_section(base, 5, bytes(4)), [("h", "incompat", 1)], crc=False), "R5"
    yield "order-R3-damaged-cut-in-prefix", patch(base, [("h", "major", 3)], crc=False)[:200], "R3"
    damaged_major = patch(base, [("h", "major", 5)], crc=False)
    yield "R39-nested-damaged-major", write([E("c", "CONTAINER", (len(damaged_major),), damaged_major)]), "R39"
    yield "R4-minor0-168", patch(base, [("h", "header_len", 168)]), "R4"
    yield "R4-not-mult-8", patch(base, [("h", "header_len", 164), ("h", "minor", 1)]), "R4"
    yield "R4-too-big", patch(base, [("h", "header_len", 4104), ("h", "minor", 1)]), "R4"
    yield "R5", patch(base, [("h", "incompat", 1 << 40)]), "R5"
    yield "R6", patch(base, [("h", "descriptor_len", 112)]), "R6"
    yield "R7-header", patch(base, [("h", "reserved", 1 << 56)]), "R7"
    yield "R47-meta-reserved", patch(base, [(("m", 1), "reserved", 1)]), "R47"
    yield "R8", base[:-1], "R8"
    yield "R8-header-len", patch(write(), [("h", "header_len", 4096), ("h", "minor", 1)])[:200], "R8"
    yield "R9", base + b"\0", "R9"
    # sections
    yield "R10-overflow", patch(base, [("h", "names.length", 2 ** 64 - 10)]), "R10"
    yield "R10-beyond", patch(base, [("h", "trailer.length", 10 ** 6)]), "R10"
    yield "R11", patch(base, [("h", "table.offset", 168)]), "R11"
    yield "R11-end", patch(base, [("h", "total_len", nb + 8)]) + bytes(8), "R11"
    yield "R12", grow_section(base, 5, bytes(4)), "R12"
    yield "R12-table", grow_section(base, 0, bytes(104)), "R12"
    # checksums
    yield "R13", patch(base, [("h", "header_crc", 12345)], crc=False), "R13"
    roff = sec(base, 5)[0]
    yield "R14", poke(base, roff + 12, b"\0\0\0\0"), "R14"
    # names & index
    yield "R15", patch(base, [(("d", 2), "name_len", 6)]), "R15"
    yield "R16-tail", grow_section(base, 2, b"x"), "R16"
    r16 = patch(write([E("ab"), E("cd")]), [(("d", 1), "name_offset", 1), (("d", 1), "name_len", 3)])
    yield "R16", r16, "R16"
    yield "R16-n0-names", grow_section(write(), 2, b"x"), "R16"
    yield "R17-empty", write([E(""), E("a")]), "R17"
    yield "R17-long", write([E("x" * 1025)]), "R17"
    yield "R17-1024", write([E("x" * 1024)]), "valid"
    yield "R18", write([E(b"a\xff")]), "R18"
    yield "R18-surrogate", write([E(b"\xed\xa0\x80")]), "R18"
    yield "R18-overlong", write([E(b"\xc0\xaf")]), "R18"
    yield "R18-above-10ffff", write([E(b"\xf4\x90\x80\x80")]), "R18"
    yield "R18-5-byte-form", write([E(b"\xf8\x88\x80\x80\x80")]), "R18"
    # section 5: U+0000, noncharacters, a BOM and U+10FFFF are valid
    yield "UTF8-valid-edges", write([E(b"\x00"), E(b"\xef\xbf\xbe"), E(b"\xef\xbb\xbfbom"),
                                     E(b"\xf4\x8f\xbf\xbf")],
                                    [(b"\x00", "string", b"\xef\xbf\xbf"),
                                     (b"\xef\xbb\xbf", "string[]", [b"\xf4\x8f\xbf\xbf", b"\x00"])]), "valid"
    yield "R19-range", write([E("a"), E("b")], index=[0, 2]), "R19"
    yield "R19-repeat", write([E("a"), E("b")], index=[1, 1]), "R19"
    yield "R20", write([E("a"), E("b")], index=[1, 0]), "R20"
    yield "R20-prefix", write([E("ab"), E("a")], index=[0, 1]), "R20"
    yield "R20-nonperm", write([E("a"), E("b"), E("c")], index=[0, 1, 0]), "R20"
    yield "R21", write([E("a"), E("a")]), "R21"
    # section 12 pins the order inside names and index: entry by entry R15, R16, R17, R18; the pool tail (R16);
    # the index position by position R19, then R20 or R21
    yield "order-R17-entry0-before-R15-entry1", patch(write([E(""), E("b")]), [(("d", 1), "name_len", 9)]), "R17"
    yield "order-R18-entry0-before-R16-entry1", patch(write([E(b"\xff"), E("bc")]),
                                                      [(("d", 1), "name_offset", 2), (("d", 1), "name_len", 1)]), "R18"
    yield "order-R18-before-R16-pool-tail", grow_section(write([E(b"a\xff")]), 2, b"x"), "R18"
    yield "order-R20-position-1-before-R19-position-2", write([E("a"), E("b"), E("c")], index=[1, 0, 7]), "R20"
    yield "order-R21-position-1-before-R19-position-2", write([E("a"), E("a"), E("c")], index=[0, 1, 1]), "R21"
    yield "order-R19-position-1-before-R20-position-2", write([E("a"), E("b"), E("c")], index=[0, 0, 1]), "R19"
    # entries
    yield "R22", write([E("a", 99, (4,), b"abcd")]), "R22"
    yield "R22-zero", write([E("a", 0, (4,), b"abcd")]), "R22"
    # section 10: an unknown dtype of a newer minor still gets R23, R24, R29-R32 and R33-R37
    yield "R23-unknown-dtype-newer", patch(write([E("a", 44, (3,), b"xyz")], minor=3),
                                           [(("d", 0), "rank", 9)]), "R23"
    yield "R24-unknown-dtype-newer", patch(write([E("a", 44, (3,), b"xyz")], minor=3),
                                           [(("d", 0), "dim3", 1)]), "R24"
    yield "R32-unknown-dtype-newer", write([E("a", 44, (3,), b"xyz", target=2 ** 64 - 2)], minor=3), "R32"
    yield "R36-unknown-dtype-newer", write([E("a", 44, (3,), b"xyz", extra_pad=1)], minor=3), "R36"
    yield "R27-not-for-unknown-dtype", write([E("a", 44, (), b"xyz")], minor=3), "valid"
    # sections 4.1, 10, 12 (R25): the element-count bound holds for an unknown dtype too;
    # only the byte-length part of R25 (and R26-R28) needs the element size
    yield "R25-unknown-dtype-newer", write([E("a", 44, (2 ** 63, 4), b"xyz")], minor=3), "R25"
    yield "R25-unknown-dtype-newer-partial", write([E("a", 44, (2 ** 40, 2 ** 40, 0), b"")], minor=3), "R25"
    yield "R25-unknown-dtype-newer-fits", write([E("a", 44, (2 ** 32, 2 ** 32 - 1), b"xyz")], minor=3), "valid"
    yield "R23", patch(base, [(("d", 0), "rank", 9)]), "R23"
    yield "R24", patch(base, [(("d", 0), "dim5", 1)]), "R24"
    yield "R25", write([E("a", "U8", (2 ** 32, 2 ** 32), b"")]), "R25"
    yield "R25-bytes", write([E("a", "U64", (2 ** 61,), b"")]), "R25"
    yield "R25-zero-dim", write([E("a", "U8", (2 ** 40, 2 ** 40, 0), b"")]), "R25"
    yield "R25-q8", write([E("a", "Q8_0", (2 ** 64 - 32,), b"")]), "R25"
    yield "R26-rank0", write([E("a", "Q8_0", (), b"\0" * 34)]), "R26"
    yield "R26-inner", write([E("a", "Q4_0", (33,), b"\0" * 18)]), "R26"
    # section 12: R26 before the byte-length part of R25 (the byte length of a block dtype is defined only for
    # whole blocks); (2^64 - 1) // 32 x 34 would overflow; vector invalid/R26-before-byte-length
    yield "order-R26-before-R25-bytes-Q8_0", write([E("a", "Q8_0", (2 ** 64 - 1,), b"")]), "R26"
    yield "order-R26-before-R25-bytes-rank-2", write([E("a", "Q8_0", (2 ** 58, 63), b"")]), "R26"
    yield "R27", write([E("a", "RAW", (2, 2), b"abcd")]), "R27"
    yield "R27-container", write([E("a", "CONTAINER", (), b"x")]), "R27"
    yield "R28", write([E("a", "F32", (2,), b"abcdef")]), "R28"
    yield "R29-zero", patch(write([E("a", alignment=1)]), [(("d", 0), "alignment", 0)]), "R29"
    yield "R29-npot", patch(write([E("a", alignment=1)]), [(("d", 0), "alignment", 3)]), "R29"
    yield "R29-big", write([E("a", alignment=131072)]), "R29"
    yield "R29-max", write([E("a", alignment=65536)]), "valid"
    yield "R30", patch(write([E("a", alignment=1)]), [(("d", 0), "alignment", 1024)]), "R30"
    yield "R31-flags", patch(base, [(("d", 0), "flags", 2)]), "R31"
    yield "R31-target", patch(base, [(("d", 0), "target", 5)]), "R31"
    yield "R32", write([E("a", target=2 ** 64 - 3)]), "R32"
    yield "R32-exact", write([E("a", target=2 ** 64 - 4)]), "valid"
    # payloads
    p0 = payload_offset(base, 0)
    yield "R33", patch(base, [(("d", 2), "offset", (nb + 64 * 100) // 64 * 64)]), "R33"
    yield "R33-overflow", patch(write([E("a", "RAW", (100,), alignment=1)]),
                                [(("d", 0), "offset", 2 ** 64 - 50)]), "R33"
    yield "R33-before", patch(base, [(("d", 0), "offset", p0 - 64)]), "R33"
    two = write([E("a", alignment=8), E("b", alignment=8), E("c", alignment=8)])
    yield "R34", patch(two, [(("d", 2), "offset", payload_offset(two, 0))]), "R34"
    yield "R35", patch(two, [(("d", 1), "offset", payload_offset(two, 0))]), "R35"
    yield "R36", write([E("a"), E("b", extra_pad=1)]), "R36"
    yield "R36-end", grow_section(base, 4, b"\0"), "R36"
    # section 6 / R36: with no entries the "last payload" ends where the section starts, so the section is empty
    yield "R36-empty-n0", grow_section(write(), 4, bytes(8)), "R36"
    yield "R37", write([E("a", pad_byte=7)]), "R37"
    # nesting
    yield "R38-depth9", nest(9), "R38"
    yield "R38-depth9-second", write([E("ok", "CONTAINER", (len(inner),), inner), E("deep", "CONTAINER", (len(nest(8)),), nest(8))]), "R38"
    bad_inner = write([E("")])
    yield "R39", write([E("c", "CONTAINER", (len(bad_inner),), bad_inner)]), "R39"
    # section 12: the nesting group goes entry by entry in table order
    yield "order-R39-entry0-before-R38-entry1", write([E("bad", "CONTAINER", (len(bad_inner),), bad_inner),
                                                       E("deep", "CONTAINER", (len(nest(8)),), nest(8))]), "R39"
    yield "R39-trailing", write([E("c", "CONTAINER", (len(empty) + 1,), empty + b"\0")]), "R39"
    yield "R39-short", write([E("c", "CONTAINER", (4,), b"\x89TPK")]), "R39"
    # metadata
    yield "R40-count", patch(base, [("h", "m", 100)]), "R40"
    yield "R40-key", patch(base, [(("m", 2), "key_len", 200)]), "R40"
    yield "R40-value", patch(base, [(("m", 1), "value_len", 200)]), "R40"
    yield "R41", patch(base, [(("m", 1), "key_offset", 0)]), "R41"
    yield "R41-tail-bytes", grow_section(write([], [("k", "u64", 1)]), 3, b"Z"), "R41"
    yield "R41-m0-pool", grow_section(write(), 3, b"Z"), "R41"
    yield "R42-empty", write([], [("", "u64", 1)]), "R42"
    yield "R42-long", write([], [("k" * 1025, "u64", 1)]), "R42"
    yield "R43", write([], [(b"\xff", "u64", 1)]), "R43"
    yield "R44", write([], [("b", "u64", 1), ("a", "u64", 1)], sort_meta=False), "R44"
    yield "R45", write([], [("a", "u64", 1), ("a", "u64", 2)]), "R45"
    yield "R46", write([], [("a", 99, b"")]), "R46"
    yield "R46-zero", write([], [("a", 0, b"")]), "R46"
    yield "R47-scalar", patch(write([], [("a", "u64", 1)]), [(("m", 0), "value_offset", 1)]), "R47"
    yield "R47-var", patch(write([], [("a", "string", "x")]), [(("m", 0), "value", 1)]), "R47"
    yield "R47-mult8", write([], [("a", "u64[]", [])]), "valid"
    yield "R47-mult8-bad", write([], [("a", 7, b"1234567")]), "R47"
    yield "R47-strarr", write([], [("a", "string[]", [])]), "valid"
    yield "R47-strarr-bad", write([], [("a", 10, struct.pack("<I", 5) + b"abc")]), "R47"
    yield "R47-strarr-cut", write([], [("a", 10, struct.pack("<I", 1) + b"a" + b"\0\0")]), "R47"
    yield "R48", write([], [("a", "bool", 2)]), "R48"
    yield "R49", write([], [("a", "string", b"\xc3")]), "R49"
    yield "R49-arr", write([], [("a", "string[]", [b"ok", b"\xff"])]), "R49"
    # section 12: "R49 for string[] needs the framing of R47" -- an item of bad UTF-8 and then two bytes
    # too few for an item length is R47, though the bad item comes first; vector
    # invalid/R47-string-array-framing-after-bad-utf8
    yield "order-R47-framing-before-R49-utf8", write([], [("a", 10, b"\x01\0\0\0\xff\0")]), "R47"
    yield "R46-newer-ok", write([], [("a", 99, b"zz")], minor=3), "valid"
    yield "R46-newer-type-0", write([], [("a", 0, b"zz"), ("b", 0, b"")], minor=3), {
        "version": [1, 3], "compat_flags": 0, "entries": [],
        "metadata": [{"key": "a", "type": 0, "value": "7a7a"}, {"key": "b", "type": 0, "value": ""}]}
    # sections 10, 12 (R47): an unknown type of a newer minor still needs a zero reserved
    # byte and a zero inline value, and its value at the running pool position
    yield "R47-newer-unknown-reserved", patch(write([], [("a", 99, b"zz")], minor=3),
                                              [(("m", 0), "reserved", 9)]), "R47"
    yield "R47-newer-unknown-value", patch(write([], [("a", 99, b"zz")], minor=3),
                                           [(("m", 0), "value", 5)]), "R47"
    yield "R47-newer-unknown-value-empty", patch(write([], [("a", 99, b"")], minor=3),
                                                 [(("m", 0), "value", 1)]), "R47"
    yield "R41-newer-unknown-at-0", patch(write([], [("a", 99, b"")], minor=3),
                                          [(("m", 0), "value_offset", 0)]), "R41"
    yield "R40-newer-unknown-past-pool", patch(write([], [("a", 99, b"zz")], minor=3),
                                               [(("m", 0), "value_len", 3)]), "R40"
    yield "R46-before-R47-reserved", patch(write([], [("a", 99, b"zz")]), [(("m", 0), "reserved", 9)]), "R46"
    yield "R47-newer-known-reserved", patch(write([], [("a", "string", "zz")], minor=3),
                                            [(("m", 0), "reserved", 9)]), "R47"
    # the order inside a metadata record is pinned by section 12: key R40, R41, R42, R43, R44/R45; R46; the
    # reserved byte (R47); the value's R40, R41; the rest of R47; R48, R49
    yield "order-R47-reserved-before-value-R40", patch(write([], [("a", "string", "x")]),
                                                       [(("m", 0), "value_len", 9), (("m", 0), "reserved", 1)]), "R47"
    yield "order-R40-before-R47-inline-value", patch(write([], [("a", "string", "x")]),
                                                     [(("m", 0), "value_len", 9), (("m", 0), "value", 1)]), "R40"
    yield "order-R40-before-R47-value-len-multiple", patch(write([], [("a", "u64[]", [1])]),
                                                           [(("m", 0), "value_len", 12)]), "R40"
    two_keys = write([], [("a", "u64", 1), ("bb", "string", "x")])
    yield "order-R40-key-before-R41", patch(two_keys, [(("m", 1), "key_offset", 900)]), "R40"
    yield "order-R40-key-before-R42", patch(two_keys, [(("m", 1), "key_len", 2000)]), "R40"
    yield "order-R41-key-before-R42", patch(two_keys, [(("m", 1), "key_offset", 0), (("m", 1), "key_len", 0)]), "R41"
    yield "order-R40-value-before-R41", patch(two_keys, [(("m", 1), "value_offset", 900)]), "R40"
    yield "order-R41-value-before-R47", patch(two_keys, [(("m", 1), "value_offset", 0), (("m", 1), "value", 1)]), "R41"
    yield "order-R46-before-value-R40", patch(write([], [("a", 99, b"zz")]), [(("m", 0), "value_len", 900)]), "R46"
    yield "order-R40-before-R47-newer-unknown-value", patch(write([], [("a", 99, b"zz")], minor=3),
                                                            [(("m", 0), "value_len", 900), (("m", 0), "value", 1)]), "R40"
    yield "R43-surrogate-key", write([], [(b"\xed\xb0\x80", "u64", 1)]), "R43"
    yield "R49-overlong-item", write([], [("a", "string[]", [b"ok", b"\xe0\x80\xaf"])]), "R49"
    # points of SPEC_NOTES.md settled by the revised spec (most also pinned by a golden vector)
    yield "E4-empty-value-offset-0", patch(write([], [("k", "string", "")]), [(("m", 0), "value_offset", 0)]), "R41"
    yield "B6-newer-nested-in-minor-0", write([E("n", "CONTAINER", (len(newer),), newer)]), "valid"
    yield "D1-trailing-empty-entry", write([E("a"), E("z", "U8", (0,), b"")]), "valid"
    yield "C8-bool-payload-7", write([E("b", "BOOL", (1,), b"\x07")]), "valid"
    yield "A8-depth8-garbage-container", nest(8, leaf=write([E("c", "CONTAINER", (4,), b"junk")])), "R38"
    # payload integrity
    yield "R50", poke(base, p0, b"\xee"), "R50"
    yield "R50-nested-outer", poke(nested, payload_offset(nested, 1) + payload_offset(inner, 0), b"\xee"), "R50"
    inner_bad = poke(inner, payload_offset(inner, 0), b"\xee")
    yield "R50-nested-inner", write([E("c", "CONTAINER", (len(inner_bad),), inner_bad)]), "R50"
    # section 9: full validation verifies nested payloads at any depth (here depth 3)
    yield "R50-nested-depth-3", nest(2, leaf=write([E("c", "CONTAINER", (len(inner_bad),), inner_bad)])), "R50"

    # ---- revision 6929620: R37 moved from the payloads group to the payload-integrity group,
    # checked entry by entry in table order: R37 (padding before the entry), R50 (its payload),
    # then the full verification of a nested CONTAINER.  Each "order-" case below is answered
    # differently under the old order (R37 right after R36, before nesting and metadata).
    def trailer_crc(data, i, value):
        buf = bytearray(data)
        roff, _ = sec(buf, 5)
        struct.pack_into("<I", buf, roff + 4 * i, value)
        fix_trailer(buf)
        return bytes(buf)

    def has_padding_before(data, i):
        prev_end = sec(data, 4)[0] if i == 0 else payload_offset(data, i - 1) + len_of(data, i - 1)
        return payload_offset(data, i) > prev_end

    def len_of(data, i):
        return struct.unpack_from("<Q", data, sec(data, 0)[0] + 104 * i + 24)[0]

    pad0 = write([E("a", pad_byte=7)], [(b"\xff", "u64", 1)])
    assert has_padding_before(pad0, 0)
    yield "order-R43-before-R37", pad0, "R43"                       # old order: R37
    yield "order-R48-before-R37", write([E("a", pad_byte=7)], [("b", "bool", 2)]), "R48"   # old: R37
    yield "order-R44-before-R37", write([E("a", pad_byte=7)], [("b", "u64", 1), ("a", "u64", 1)],
                                        sort_meta=False), "R44"                                # old: R37
    yield "order-R39-before-R37", write([E("a", pad_byte=7), E("c", "CONTAINER", (len(bad_inner),), bad_inner)]), "R39"
    yield "order-R38-before-R37", write([E("a", pad_byte=7), E("deep", "CONTAINER", (len(nest(8)),), nest(8))]), "R38"
    yield "order-R36-before-R37", write([E("a", pad_byte=7), E("b", extra_pad=1, pad_byte=7)]), "R36"
    two_pad = write([E("a", alignment=1), E("b", pad_byte=7)])
    assert has_padding_before(two_pad, 1) and not has_padding_before(two_pad, 0)
    yield "order-R50-entry0-before-R37-entry1", poke(two_pad, payload_offset(two_pad, 0), b"\xee"), "R50"   # old: R37
    yield "order-R37-entry1-alone", two_pad, "R37"
    pad_then_bad = write([E("a", pad_byte=7), E("b")])
    yield "order-R37-entry0-before-R50-entry1", poke(pad_then_bad, payload_offset(pad_then_bad, 1), b"\xee"), "R37"
    pad_only = write([E("a", pad_byte=7)])
    yield "order-R37-before-R50-same-entry", poke(pad_only, payload_offset(pad_only, 0), b"\xee"), "R37"
    # nested containers: the outer entry's R50, then the nested verification, then the next entry
    nested_bad_then_pad = write([E("c", "CONTAINER", (len(inner_bad),), inner_bad), E("z", pad_byte=7)])
    assert has_padding_before(nested_bad_then_pad, 1)
    yield "order-nested-R50-before-outer-R37-entry1", nested_bad_then_pad, "R50"   # old: R37
    inner_pad = write([E("x", pad_byte=7)])
    # revision fcb04b4 (note N4): a nested non-zero padding byte is reported as R37, like a nested
    # R50, never R39 (R39 covers only the structural rules R1-R36, R39-R49); vector invalid/R37-nested
    yield "nested-R37-is-R37", write([E("c", "CONTAINER", (len(inner_pad),), inner_pad)]), "R37"   # old: R39
    yield "nested-R37-depth-3-is-R37", nest(2, leaf=write([E("c", "CONTAINER", (len(inner_pad),), inner_pad)])), "R37"   # old: R39
    # a structural break of a later nested container (R39) still beats an earlier nested R37
    yield "order-R39-entry1-before-nested-R37-entry0", write([E("c", "CONTAINER", (len(inner_pad),), inner_pad),
                                                              E("d", "CONTAINER", (len(bad_inner),), bad_inner)]), "R39"
    yield "order-R43-before-nested-R37", write([E("c", "CONTAINER", (len(inner_pad),), inner_pad)],
                                               [(b"\xff", "u64", 1)]), "R43"                 # old: R39
    np = write([E("c", "CONTAINER", (len(inner_pad),), inner_pad)])
    yield "order-outer-R50-before-nested-R37", trailer_crc(np, 0, zlib.crc32(inner_pad) ^ 1), "R50"   # old: R39
    np_z = write([E("c", "CONTAINER", (len(inner_pad),), inner_pad), E("z")])
    yield "order-nested-R37-before-outer-R50-entry1", poke(np_z, payload_offset(np_z, 1), b"\xee"), "R37"   # fcb04b4; before: R39
    inner_bad_then_pad = write([E("x", alignment=1), E("y", pad_byte=7)])
    inner_bad_then_pad = poke(inner_bad_then_pad, payload_offset(inner_bad_then_pad, 0), b"\xee")
    yield "order-nested-R50-before-nested-R37", write([E("c", "CONTAINER", (len(inner_bad_then_pad),),
                                                        inner_bad_then_pad)]), "R50"             # old: R39
    yield "order-outer-R37-before-nested-R50", write([E("c", "CONTAINER", (len(inner_bad),), inner_bad,
                                                       pad_byte=7)]), "R37"
    # nested R37 before a nested R50 of a later nested entry, and before a later outer R37
    inner_pad_then_bad = write([E("x", pad_byte=7), E("y")])
    inner_pad_then_bad = poke(inner_pad_then_bad, payload_offset(inner_pad_then_bad, 1), b"\xee")
    yield "order-nested-R37-before-nested-R50", write([E("c", "CONTAINER", (len(inner_pad_then_bad),),
                                                        inner_pad_then_bad)]), "R37"
    np_zpad = write([E("c", "CONTAINER", (len(inner_pad),), inner_pad), E("z", pad_byte=7)])
    assert has_padding_before(np_zpad, 1)
    yield "order-nested-R37-before-outer-R37-entry1", np_zpad, "R37"   # message must name the nested entry
    # ---- issue 22 review: verdicts the text of section 12 settles that no case pinned before; each file
    # breaks two rules, and a reader that checks them in another order answers the other one
    # an inline type's value_len and value_offset are not a pool range (section 7): R47, never R40 or R41
    inline = write([], [("a", "u64", 1)])
    yield "order-R47-not-R40-inline-value-len-past-pool", patch(inline, [(("m", 0), "value_len", 8)]), "R47"
    yield "order-R47-not-R40-inline-value-offset-past-pool", patch(
        inline, [(("m", 0), "value_offset", 1000), (("m", 0), "value_len", 5)]), "R47"
    yield "order-R47-inline-before-R48", patch(write([], [("a", "bool", True)]),
                                               [(("m", 0), "value_len", 1), (("m", 0), "value", 2)]), "R47"
    # sections: R10 for every section in layout order, then R11, then R12
    yield "order-R10-trailer-before-R11-table", patch(base, [("h", "table.offset", 168),
                                                             ("h", "trailer.length", 10 ** 6)]), "R10"
    yield "order-R11-before-R12", patch(grow_section(base, 5, bytes(4)), [("h", "index.offset", 8)]), "R11"
    yield "order-R13-before-R14", patch(poke(base, sec(base, 5)[0] + 12, b"\0\0\0\0"),
                                        [("h", "header_crc", 1)], crc=False), "R13"
    # the header diagnosis of a header that breaks both R3 and R5 (R3 is found first)
    yield "order-R13-not-R3-with-R5", patch(base, [("h", "major", 3), ("h", "incompat", 1)], crc=False), "R13"
    # entries: R22, R23, R24, then the element count of R25
    yield "order-R22-before-R25-count", write([E("a", 99, (2 ** 63, 4), b"")]), "R22"
    yield "order-R24-before-R25-count", patch(write([E("a", "U8", (2 ** 32, 2 ** 32), b"")]),
                                              [(("d", 0), "dim4", 1)]), "R24"
    # an unknown dtype of a newer minor: R32 (entries group, declared length) before R33 (SPEC_NOTES N3)
    yield "order-R32-before-R33-unknown-dtype", patch(write([E("a", 44, (3,), b"xyz", target=2 ** 64 - 2)], minor=3),
                                                      [(("d", 0), "offset", 2 ** 20)]), "R32"
    # payloads: entry by entry, R33 to R36 for each
    gap1 = write([E("a", alignment=8), E("b", alignment=8, extra_pad=1), E("c", alignment=8)])
    yield "order-R36-entry1-before-R33-entry2", patch(gap1, [(("d", 2), "offset", 2 ** 40)]), "R36"
    # metadata: record by record; the pool tail (R41) last
    yield "order-R47-record0-before-R40-record1", patch(base, [(("m", 0), "reserved", 1),
                                                               (("m", 1), "key_len", 900)]), "R47"
    yield "order-R48-before-R41-pool-tail", grow_section(write([], [("b", "bool", 2)]), 3, b"Z"), "R48"
    # R38 is the nesting group's rule of the depth-8 container itself: an earlier group's rule of that
    # container comes first (R39 to its parent), a later group's rule after it
    leaf_r17 = write([E(""), E("c", "CONTAINER", (len(empty),), empty)])
    yield "order-R39-depth-8-R17-before-R38", nest(8, leaf=leaf_r17), "R39"
    leaf_r43 = write([E("c", "CONTAINER", (len(empty),), empty)], [(b"\xff", "u64", 1)])
    yield "order-R38-before-depth-8-R43", nest(8, leaf=leaf_r43), "R38"
    for case in cases_1_1():
        yield case
    for case in cases_1_2():
        yield case


def cases_1_1():
    """Version 1.1 (commit 94d5792): dtypes 20-43 and 48-54, the header extension (section 3.4) with
    block geometry records (R51, R52, R53), and metadata types 11-26 (R47-R49 extended), with their
    section-13 decodings.  Every valid file of minor >= 1 here is also given to the frozen 1.0 reader
    (compatibility, section 10), by main()."""
    # ---- a valid 1.1 file: several new dtypes, with geometry, and every new metadata type
    ents = [E("q41", "Q4_1", (2, 32)), E("q2k", "Q2_K", (256,)), E("iq4nl", "IQ4_NL", (32,), alignment=8),
            E("mx", "MXFP4", (2, 32)), E("fp4", "F4E2M1", (3, 4), alignment=1), E("fp6", "F6E2M3", (8,)),
            E("fp6b", "F6E3M2", (1, 4)), E("q8", "Q8_0", (32,)), E("c", "C64", (2,)),
            E("e8", "F8E8M0", (3,)), E("fnuz", "F8E4M3FNUZ", (2,)), E("fnuz2", "F8E5M2FNUZ", (1,)),
            E("w", "F32", (2,)), E("tq", "TQ2_0", (0, 256))]
    meta = [("u8", "u8", 255), ("i8", "i8", -128), ("u16", "u16", 65535), ("i16", "i16", -2),
            ("u32", "u32", 2 ** 32 - 1), ("i32", "i32", -2 ** 31), ("f32", "f32", 0x40490fdb),
            ("f32nan", "f32", 0x7fc00001),
            ("a.u8", "u8[]", [0, 255]), ("a.i8", "i8[]", [-1, 127]), ("a.u16", "u16[]", [1, 65535]),
            ("a.i16", "i16[]", [-32768, 5]), ("a.u32", "u32[]", [7]), ("a.i32", "i32[]", [-1, 0, 2 ** 31 - 1]),
            ("a.f32", "f32[]", [0x80000000, 0x3f800000]), ("a.bool", "bool[]", [True, False, True]),
            ("a.empty", "u16[]", []), ("a.emptybool", "bool[]", []),
            ("arr", "array[]", [("u8[]", [1, 2]), ("string[]", ["x", ""]), ("f64[]", [1.0]),
                                ("bool[]", [False]), ("array[]", [("i16[]", [-1]), ("array[]", [])]),
                                ("u64[]", []), ("f32[]", [0x00000001])]),
            ("arr.empty", "array[]", []), ("s", "string", "1.0 types still work")]
    gguf = write11(ents, meta)
    expected = {"version": [1, 1], "compat_flags": 0, "entries": [], "metadata": [
        {"key": "a.bool", "type": "bool[]", "value": [True, False, True]},
        {"key": "a.empty", "type": "u16[]", "value": []},
        {"key": "a.emptybool", "type": "bool[]", "value": []},
        {"key": "a.f32", "type": "f32[]", "value": ["80000000", "3f800000"]},
        {"key": "a.i16", "type": "i16[]", "value": [-32768, 5]},
        {"key": "a.i32", "type": "i32[]", "value": [-1, 0, 2 ** 31 - 1]},
        {"key": "a.i8", "type": "i8[]", "value": [-1, 127]},
        {"key": "a.u16", "type": "u16[]", "value": [1, 65535]},
        {"key": "a.u32", "type": "u32[]", "value": [7]},
        {"key": "a.u8", "type": "u8[]", "value": [0, 255]},
        {"key": "arr", "type": "array[]", "value": [
            {"type": "u8[]", "value": [1, 2]}, {"type": "string[]", "value": ["x", ""]},
            {"type": "f64[]", "value": ["3ff0000000000000"]}, {"type": "bool[]", "value": [False]},
            {"type": "array[]", "value": [{"type": "i16[]", "value": [-1]}, {"type": "array[]", "value": []}]},
            {"type": "u64[]", "value": []}, {"type": "f32[]", "value": ["00000001"]}]},
        {"key": "arr.empty", "type": "array[]", "value": []},
        {"key": "f32", "type": "f32", "value": "40490fdb"},
        {"key": "f32nan", "type": "f32", "value": "7fc00001"},
        {"key": "i16", "type": "i16", "value": -2},
        {"key": "i32", "type": "i32", "value": -2 ** 31},
        {"key": "i8", "type": "i8", "value": -128},
        {"key": "s", "type": "string", "value": "1.0 types still work"},
        {"key": "u16", "type": "u16", "value": 65535},
        {"key": "u32", "type": "u32", "value": 2 ** 32 - 1},
        {"key": "u8", "type": "u8", "value": 255}]}
    for i, e in enumerate(ents):
        expected["entries"].append({
            "name": e.name.decode(), "dtype": tpack_reader.DTYPES[e.dtype][0], "shape": e.shape,
            "offset": payload_offset(gguf, i), "length": len(e.payload), "alignment": e.alignment,
            "target": None, "checksum": zlib.crc32(e.payload)})
    # section 11.1: header_len = 160 + 8 + 16 k, k = the block dtypes used (Q4_1 Q2_K IQ4_NL MXFP4 F4E2M1
    # F6E2M3 F6E3M2 Q8_0 TQ2_0: 9)
    assert struct.unpack_from("<I", gguf, 12)[0] == 160 + 8 + 16 * 9
    yield "valid/1.1-gguf-dtypes-and-metadata", gguf, expected

    # one entry of every 1.1 dtype, smallest shape of a whole block; lengths from the section 4.1 table
    every = [E("d%02d" % c, c, (tpack_reader.DTYPES[c][2] or (1,))[0:1] if tpack_reader.DTYPES[c][2] else (3,))
             for c in NEW_DT]
    every_file = write11(every)
    yield "valid/1.1-every-new-dtype", every_file, {
        "version": [1, 1], "compat_flags": 0, "metadata": [],
        "entries": [{"name": "d%02d" % c, "dtype": tpack_reader.DTYPES[c][0], "shape": e.shape,
                     "offset": payload_offset(every_file, i), "length": len(e.payload), "alignment": 64,
                     "target": None, "checksum": zlib.crc32(e.payload)} for i, (c, e) in enumerate(zip(NEW_DT, every))]}
    lengths = {20: 20, 21: 22, 22: 24, 23: 36, 24: 84, 25: 110, 26: 144, 27: 176, 28: 210, 29: 292, 30: 66,
               31: 74, 32: 98, 33: 50, 34: 18, 35: 110, 36: 82, 37: 136, 38: 56, 39: 54, 40: 66, 41: 17, 42: 36, 43: 18,
               48: 24, 49: 3, 50: 3, 51: 3, 52: 1, 53: 3, 54: 3}
    assert {c: len(e.payload) for c, e in zip(NEW_DT, every)} == lengths
    # a 1.1 file without block dtypes has header_len 160 (section 11.1)
    yield "valid/1.1-no-block-dtype-160", write11([E("c", "C64", (1,))], [("k", "u8", 1)]), "valid"
    # records for element dtypes are allowed, and must be (1, element bytes); a record for an
    # unused block dtype too (not canonical, still valid: no rule forbids it)
    yield "valid/1.1-element-and-unused-records", write_ext(
        [E("c", "C64", (1,)), E("f", "F32", (2,))], ext=geometry_item([2, 16, 21, 48])), "valid"
    # an item of a tag this reader does not know is skipped (tags in strictly ascending order)
    yield "valid/1.1-unknown-tag-skipped", write_ext(
        [E("q", "Q4_1", (32,))], ext=geometry_item([20]) + ext_item(9, b"abc") + ext_item(0xFFFFFFFF, b"")), "valid"
    yield "valid/1.1-unknown-tag-only", write_ext([E("a")], ext=ext_item(2, bytes(13))), "valid"
    yield "valid/1.1-geometry-empty-body", write_ext([E("a")], ext=ext_item(1, b"")), "valid"
    yield "valid/1.1-array-depth-8", write11([], [("a", "array[]", nested_array(8))]), "valid"
    yield "valid/1.1-Q8_0-with-record", write_ext([E("q", "Q8_0", (32,))], ext=geometry_item([16])), "valid"
    # a minor-1 header extension in a nested container, inside a minor-0 container
    inner11 = write11([E("q", "IQ2_XS", (256,))], [("n", "i8", -1)])
    yield "valid/1.1-nested-in-minor-0", write([E("c", "CONTAINER", (len(inner11),), inner11)]), "valid"
    # ---- unknown dtypes (a minor-3 file, newer than this reader), with and without a geometry record
    yield "valid/minor3-unknown-dtype-no-record", write([E("u", 99, (3, 5), b"any length")], minor=3), "valid"
    rec = write_ext([E("u", 99, (2, 64), bytes(40)), E("v", 100, (5,), bytes(15)), E("w", 101, (), bytes(3))],
                    ext=geometry_item([(99, 32, 10), (100, 1, 3), (101, 1, 3)]), minor=3)
    yield "valid/minor3-unknown-dtype-with-record", rec, {
        "version": [1, 3], "compat_flags": 0, "metadata": [],
        "entries": [{"name": "u", "dtype": 99, "shape": [2, 64], "offset": payload_offset(rec, 0), "length": 40,
                     "alignment": 64, "target": None, "checksum": zlib.crc32(bytes(40))},
                    {"name": "v", "dtype": 100, "shape": [5], "offset": payload_offset(rec, 1), "length": 15,
                     "alignment": 64, "target": None, "checksum": zlib.crc32(bytes(15))},
                    {"name": "w", "dtype": 101, "shape": [], "offset": payload_offset(rec, 2), "length": 3,
                     "alignment": 64, "target": None, "checksum": zlib.crc32(bytes(3))}]}
    unk = lambda ents, recs: write_ext(ents, ext=geometry_item(recs), minor=3)
    yield "R28-unknown-dtype-record-length", unk([E("u", 99, (64,), bytes(21))], [(99, 32, 10)]), "R28"
    yield "R28-unknown-dtype-record-element", unk([E("u", 99, (5,), bytes(16))], [(99, 1, 3)]), "R28"
    yield "R28-unknown-dtype-record-rank0", unk([E("u", 99, (), bytes(4))], [(99, 1, 3)]), "R28"
    yield "R26-unknown-dtype-record-inner", unk([E("u", 99, (33,), bytes(10))], [(99, 32, 10)]), "R26"
    yield "R26-unknown-dtype-record-rank0", unk([E("u", 99, (), bytes(10))], [(99, 32, 10)]), "R26"
    yield "R25-unknown-dtype-record-bytes", unk([E("u", 99, (2 ** 62,), b"")], [(99, 1, 8)]), "R25"
    yield "R25-unknown-dtype-record-blocks", unk([E("u", 99, (2 ** 63,), b"")], [(99, 2, 5)]), "R25"
    # the record of another code does not apply
    yield "valid/minor3-unknown-dtype-other-record", unk([E("u", 99, (64,), bytes(21))], [(98, 32, 10)]), "valid"
    # minor 1 is not newer than this reader: an unknown code is R22 even with a record (section 10)
    yield "R22-unknown-dtype-record-minor-1", write_ext([E("u", 99, (64,), bytes(20))],
                                                         ext=geometry_item([(99, 32, 10)])), "R22"
    yield "R22-dtype-44-minor-1", write([E("a", 44, (3,), b"xyz")], minor=1), "R22"
    yield "R22-dtype-55-minor-1", write([E("a", 55, (3,), b"xyz")], minor=1), "R22"
    yield "R22-dtype-44-minor-0", write([E("a", 44, (3,), b"xyz")]), "R22"
    # R52 before the entries: a record for an unknown code must itself be well formed
    yield "R52-unknown-dtype-record-bad", unk([E("u", 99, (64,), bytes(20))], [(99, 3, 10)]), "R52"
    # issue 22 review: with a record's block geometry too, R26 comes before the byte-length part of R25
    # ((2^64 - 1) // 32 x 40 would overflow); a record for code 0 applies like any other (section 3.4)
    yield "order-R26-before-R25-bytes-unknown-dtype-record", unk([E("u", 99, (2 ** 64 - 1,), b"")],
                                                                [(99, 32, 40)]), "R26"
    yield "R26-code-0-record", unk([E("u", 0, (33,), bytes(10))], [(0, 32, 10)]), "R26"
    # section 10: a 1.1 reader reads a minor-3 file's extension as items (R51, R52), not as ignored bytes
    yield "R52-minor-3-own-geometry-differs", unk([E("q", "Q4_1", (32,))], [(20, 32, 21)]), "R52"

    # ---- the new dtypes' shape and length rules (R25, R26, R28)
    yield "R26-Q2_K-inner-128", write11([E("a", "Q2_K", (2, 128), bytes(84))]), "R26"
    yield "R26-F4E2M1-odd", write11([E("a", "F4E2M1", (3,), bytes(1))]), "R26"
    yield "R26-F6E3M2-rank0", write11([E("a", "F6E3M2", (), bytes(3))]), "R26"
    yield "R26-MXFP4-inner-16", write11([E("a", "MXFP4", (2, 16), bytes(17))]), "R26"
    yield "R28-Q4_K", write11([E("a", "Q4_K", (256,), bytes(145))]), "R28"
    yield "R28-Q8_1-gguf-py-40", write11([E("a", "Q8_1", (32,), bytes(40))]), "R28"
    yield "R28-C64", write11([E("a", "C64", (2,), bytes(8))]), "R28"
    yield "R28-F6E2M3", write11([E("a", "F6E2M3", (8,), bytes(8))]), "R28"
    # (count / 256) x 292 overflows for Q8_K (its blocks are larger than their element count; a Q2_K can't)
    yield "R25-Q8_K-blocks-times-bytes", write11([E("a", "Q8_K", (2 ** 64 - 256,), b"")]), "R25"
    # a Q2_K of 2^64 - 256 elements fits (R25 and R28 hold), so only its payload's place is wrong (R33)
    yield "R33-not-R25-Q2_K-largest", patch(write11([E("a", "Q2_K", (256,))]),
                                            [(("d", 0), "dim0", 2 ** 64 - 256),
                                             (("d", 0), "length", (2 ** 64 - 256) // 256 * 84)]), "R33"
    yield "R25-C64-bytes", write11([E("a", "C64", (2 ** 61,), b"")]), "R25"

    # ---- R51 ExtensionLayout
    ok = [E("q", "Q4_1", (32,))]
    g20 = geometry_item([20])
    yield "R51-tag-0", write_ext(ok, ext=g20 + ext_item(0, b"")), "R51"
    yield "R51-tag-0-first", write_ext(ok, ext=ext_item(0, b"xy") + g20), "R51"
    yield "R51-body-past-header-len", write_ext(ok, ext=g20 + struct.pack("<II", 7, 9) + b"12345678"), "R51"
    yield "R51-body-way-past", write_ext(ok, ext=g20 + struct.pack("<II", 7, 2 ** 32 - 1)), "R51"
    yield "R51-geometry-past-header-len", write_ext(ok, ext=struct.pack("<II", 1, 32) + geometry_body([20])), "R51"
    yield "R51-padding-nonzero", write_ext(ok, ext=g20 + ext_item(7, b"abc", pad=b"\0\0\0\0\x01")), "R51"
    yield "R51-duplicate-unknown-tag", write_ext(ok, ext=ext_item(7, b"") + g20 + ext_item(7, b"")), "R51"
    yield "R51-duplicate-geometry", write_ext(ok, ext=g20 + g20), "R51"
    # revised section 3.4 / R51 (working tree after 94d5792): items in strictly ascending order of tag
    yield "R51-tags-descending", write_ext(ok, ext=ext_item(7, b"") + g20), "R51"
    yield "R51-tags-descending-unknown", write_ext(ok, ext=g20 + ext_item(9, b"") + ext_item(8, b"")), "R51"
    yield "R51-in-minor-3", write_ext([E("a")], ext=ext_item(0, b""), minor=3), "R51"
    # the old 1.0 vectors' extension bytes: 8 zero bytes are an item of tag 0
    yield "R51-zero-extension", write_ext([E("a")], ext=bytes(8)), "R51"
    # extension group: after the checksums, before names; R51 before R52 (number order)
    bad_ext = write_ext(ok, ext=ext_item(0, b""))
    yield "order-R13-before-R51", patch(bad_ext, [("h", "header_crc", 1)], crc=False), "R13"
    roff = sec(bad_ext, 5)[0]
    yield "order-R14-before-R51", poke(bad_ext, roff + 4, b"\0\0\0\1"), "R14"
    yield "order-R51-before-R52", write_ext(ok, ext=geometry_item([(20, 3, 20)]) + ext_item(0, b"")), "R51"
    yield "order-R51-before-R17", write_ext([E("")], ext=ext_item(0, b"")), "R51"
    yield "order-R4-before-R51", patch(write_ext(ok, ext=ext_item(0, b"")), [("h", "minor", 0)]), "R4"
    yield "R39-nested-R51", write([E("c", "CONTAINER", (len(bad_ext),), bad_ext)]), "R39"

    # ---- R52 BlockGeometry
    geo = lambda recs, ents=ok: write_ext(ents, ext=geometry_item(recs))
    yield "R52-body-not-multiple-of-16", write_ext(ok, ext=ext_item(1, geometry_body([20]) + bytes(8))), "R52"
    yield "R52-descending", geo([21, 20], ok + [E("r", "Q5_0", (32,))]), "R52"
    yield "R52-repeated-dtype", geo([20, 20]), "R52"
    yield "R52-RAW", geo([(18, 1, 1), 20]), "R52"
    yield "R52-CONTAINER", geo([20, (19, 1, 1)]), "R52"
    yield "R52-reserved", geo([(20, 32, 20, 1, 0)]), "R52"
    yield "R52-reserved2", geo([(20, 32, 20, 0, 1)]), "R52"
    yield "R52-block-elements-0", geo([20, (99, 0, 4)]), "R52"
    yield "R52-block-elements-3", geo([20, (99, 3, 4)]), "R52"
    yield "R52-block-elements-2p17", geo([20, (99, 131072, 4)]), "R52"
    yield "valid/R52-block-elements-65536", geo([20, (99, 65536, 4)]), "valid"
    yield "R52-block-bytes-0", geo([20, (99, 32, 0)]), "R52"
    yield "R52-Q8_1-gguf-py-40", geo([(23, 32, 40)], [E("q", "Q8_1", (32,), bytes(40))]), "R52"
    yield "R52-Q4_1-elements", geo([(20, 64, 40)], [E("q", "Q4_1", (64,), bytes(40))]), "R52"
    yield "R52-F32-record-2-bytes", geo([(2, 1, 2), 20]), "R52"
    yield "R52-F32-record-as-block", geo([(2, 2, 8), 20]), "R52"
    yield "R52-F4E2M1-as-element", geo([20, (52, 1, 1)]), "R52"
    yield "R52-unused-known-code", geo([20, (24, 256, 85)]), "R52"
    yield "order-R52-before-R15", patch(geo([(20, 3, 20)]), [(("d", 0), "name_len", 9)]), "R52"
    yield "order-R52-before-R22", write_ext([E("u", 99, (3,), b"xyz")], ext=geometry_item([(98, 3, 1)])), "R52"
    yield "R39-nested-R52", write([E("c", "CONTAINER", (len(geo([(20, 3, 20)])),), geo([(20, 3, 20)]))]), "R39"

    # ---- R53 MissingGeometry
    yield "R53-no-extension", write([E("q", "Q4_1", (32,))], minor=1), "R53"
    yield "R53-Q8_0-in-minor-1", write([E("q", "Q8_0", (32,))], minor=1), "R53"
    yield "R53-Q4_0-in-minor-1", write([E("q", "Q4_0", (32,))], [("k", "u8", 1)], minor=1), "R53"
    yield "R53-other-record", write_ext([E("q", "Q5_0", (32,))], ext=geometry_item([20])), "R53"
    yield "R53-element-record-only", write_ext([E("q", "F4E2M1", (2,))], ext=geometry_item([2])), "R53"
    yield "R53-second-of-two", write_ext([E("q", "Q4_1", (32,)), E("r", "Q6_K", (256,))], ext=geometry_item([20])), "R53"
    yield "R53-unknown-tag-only", write_ext([E("q", "IQ1_M", (256,))], ext=ext_item(1000, geometry_body([38]))), "R53"
    yield "R53-in-minor-3", write([E("q", "Q4_1", (32,))], minor=3), "R53"
    yield "valid/R53-not-for-element-dtypes", write([E("c", "C64", (1,)), E("f", "F8E8M0", (1,))], minor=1), "valid"
    yield "valid/R53-not-in-minor-0-Q8_0", write([E("q", "Q8_0", (32,))]), "valid"
    # R53 is checked after R22-R32 of the same entry, and with the entries group (before payloads)
    yield "order-R31-before-R53", patch(write([E("q", "Q4_1", (32,))], minor=1), [(("d", 0), "flags", 2)]), "R31"
    yield "order-R32-before-R53", write([E("q", "Q4_1", (32,), target=2 ** 64 - 1)], minor=1), "R32"
    yield "order-R28-before-R53", write([E("q", "Q4_1", (32,), bytes(19))], minor=1), "R28"
    yield "order-R53-entry0-before-R28-entry1", write([E("q", "Q4_1", (32,)), E("f", "F32", (2,), bytes(7))],
                                                      minor=1), "R53"
    yield "order-R28-entry0-before-R53-entry1", write([E("f", "F32", (2,), bytes(7)), E("q", "Q4_1", (32,))],
                                                      minor=1), "R28"
    yield "order-R53-before-R33", patch(write([E("q", "Q4_1", (32,))], minor=1), [(("d", 0), "offset", 64 * 1000)]), "R53"
    yield "order-R53-before-R47", write([E("q", "Q4_1", (32,))], [("k", "u8", b"")], minor=1), "R53"
    missing = write([E("q", "Q4_1", (32,))], minor=1)
    yield "R39-nested-R53", write([E("c", "CONTAINER", (len(missing),), missing)]), "R39"

    # ---- metadata 1.1: R47 (width), R48 (bool[]), R49 and R47 inside array[]
    m11 = lambda meta, minor=1: write(meta=meta, minor=minor)
    for t, (width, _) in sorted(POOL_SCALAR.items()):
        name = tpack_reader.META_TYPES[t]
        yield "R47-%s-width-%d" % (name, width + 1), m11([("k", t, bytes(width + 1))]), "R47"
        yield "R47-%s-width-0" % name, m11([("k", t, b"")]), "R47"
        if width > 1:
            yield "R47-%s-width-%d" % (name, width - 1), m11([("k", t, bytes(width - 1))]), "R47"
        yield "R47-%s-inline-value" % name, patch(m11([("k", t, bytes(width))]), [(("m", 0), "value", 1)]), "R47"
    for t, (width, _) in sorted(FIXED_ARRAY.items()):
        name = tpack_reader.META_TYPES[t]
        if width > 1:
            yield "R47-%s-len-%d" % (name, width + 1), m11([("k", t, bytes(width + 1))]), "R47"
            yield "valid/R47-%s-len-%d" % (name, 2 * width), m11([("k", t, bytes(2 * width))]), "valid"
        else:
            yield "valid/R47-%s-any-len" % name, m11([("k", t, bytes(7))]), "valid"
        yield "R47-%s-inline-value" % name, patch(m11([("k", t, bytes(width))]), [(("m", 0), "value", 1)]), "R47"
    yield "R47-bool[]-inline-value", patch(m11([("k", "bool[]", [True])]), [(("m", 0), "value", 1)]), "R47"
    yield "R47-array[]-inline-value", patch(m11([("k", "array[]", [])]), [(("m", 0), "value", 1)]), "R47"
    yield "R47-new-type-reserved", patch(m11([("k", "u8", bytes(1))]), [(("m", 0), "reserved", 1)]), "R47"
    yield "R48-bool[]", m11([("k", "bool[]", [1, 0, 2])]), "R48"
    yield "R48-bool[]-ff", m11([("k", "bool[]", [255])]), "R48"
    yield "R48-bool[]-in-array[]", m11([("k", "array[]", [("bool[]", [True]), ("bool[]", [0, 2])])]), "R48"
    yield "R48-bool[]-level-3", m11([("k", "array[]", nested_array(3, ("bool[]", [7])))]), "R48"
    yield "R49-string[]-in-array[]", m11([("k", "array[]", [("string[]", ["ok", b"\xc0\xaf"])])]), "R49"
    yield "R49-string[]-level-8", m11([("k", "array[]", nested_array(8, ("string[]", [b"\xff"])))]), "R49"
    yield "R40-new-type-past-pool", patch(m11([("k", "u16", bytes(2))]), [(("m", 0), "value_len", 3)]), "R40"
    yield "R41-new-type-at-0", patch(m11([("k", "u8[]", b"")]), [(("m", 0), "value_offset", 0)]), "R41"
    # array[] framing (R47)
    A = lambda *items: m11([("k", "array[]", list(items))])
    yield "R47-array[]-depth-9", m11([("k", "array[]", nested_array(9))]), "R47"
    yield "R47-array[]-depth-9-empty", m11([("k", "array[]", nested_array(8, ("array[]", [])))]), "R47"
    yield "valid/R47-array[]-depth-8-empty", m11([("k", "array[]", nested_array(7, ("array[]", [])))]), "valid"
    yield "R47-array[]-trailing-bytes", A(("u8[]", [1]), b"\0\0\0"), "R47"
    yield "R47-array[]-header-cut", A(b"\x12\0\0\0\0"), "R47"
    yield "R47-array[]-item-overruns", A(arr_item("u8[]", [1, 2], length=3)), "R47"
    yield "R47-array[]-item-length-huge", A(arr_item("u8[]", [1], length=2 ** 32 - 1)), "R47"
    yield "R47-array[]-reserved", A(arr_item("u8[]", [1], reserved=b"\0\x01\0")), "R47"
    for bad in (0, 1, 4, 5, 6, 11, 17, 27, 255):   # scalars, string, bytes, unknown: not array types
        yield "R47-array[]-item-type-%d" % bad, A(struct.pack("<B3sI", bad, b"\0\0\0", 1) + b"\0"), "R47"
    for good in sorted(tpack_reader.META_ARRAY_TYPES):   # every array type is an item type
        yield "valid/array[]-item-type-%d" % good, A(struct.pack("<B3sI", good, b"\0\0\0", 0)), "valid"
    yield "R47-array[]-u16[]-odd", A(arr_item("u16[]", b"\0\0\0")), "R47"
    yield "R47-array[]-u64[]-7", A(arr_item("u64[]", bytes(7))), "R47"
    yield "R47-array[]-string[]-framing", A(arr_item("string[]", struct.pack("<I", 5) + b"ab")), "R47"
    yield "R47-array[]-nested-framing", A(("array[]", [("u8[]", [1]), b"\0"])), "R47"
    # R48/R49 need the framing of R47 for the whole value (section 12)
    yield "order-R47-after-R48-item", A(("bool[]", [2]), b"\0"), "R47"
    yield "order-R47-after-R49-item", A(("string[]", [b"\xff"]), arr_item("u8[]", [1], reserved=b"\x01\0\0")), "R47"
    yield "order-R47-depth-after-R48", A(("bool[]", [2]), ("array[]", nested_array(8))), "R47"
    # type 27 and above are unknown in 1.1: R46 in a minor-1 file, skipped in a minor-3 file
    yield "R46-type-27-minor-1", m11([("k", 27, b"\x01")]), "R46"
    yield "valid/minor3-type-27", m11([("k", 27, b"\x01")], minor=3), "valid"
    # a minor-3 array[] item of a type unknown to 1.1 (27) is still not an array type of section 7.1, which
    # says a later minor adds no item types
    yield "R47-array[]-item-type-27-minor-3", m11([("k", "array[]", [struct.pack("<B3sI", 27, b"\0\0\0", 0)])],
                                                         minor=3), "R47"
    # revised R22/R46 (working tree after 94d5792): the 1.1 codes are defined only for minor >= 1, so in a
    # minor-0 file they are undefined, like code 99 (and a 1.0 reader agrees: it rejects them too)
    for code in (20, 34, 41, 48, 49, 52, 54):
        yield "R22-1.1-dtype-%d-in-minor-0" % code, write([E("a", code, (32,))]), "R22"
    for t in (11, 17, 18, 25, 26):
        yield "R46-1.1-metadata-type-%d-in-minor-0" % t, write([], [("k", t, bytes(4))]), "R46"
    minor0_q41 = write([E("q", "Q4_1", (32,))])
    yield "R39-nested-minor-0-with-1.1-dtype", write11([E("c", "CONTAINER", (len(minor0_q41),), minor0_q41),
                                                        E("d", "C64", (1,))]), "R39"
    # each header governs its own container: a minor-1 container in a minor-0 one may use the 1.1 codes
    yield "valid/1.1-codes-nested-minor-1-in-minor-0", write([E("c", "CONTAINER", (len(gguf),), gguf)]), "valid"
    # section 3.4: a record's dtype may be any code but RAW and CONTAINER, 0 and undefined ones included
    yield "valid/record-for-code-0", write_ext([E("a")], ext=geometry_item([(0, 1, 1)])), "valid"
    # R39 covers R51-R53 inside a nested container too
    no_geometry = write([E("q", "Q4_1", (32,))], minor=1)
    yield "R39-nested-R53", write([E("c", "CONTAINER", (len(no_geometry),), no_geometry)]), "R39"
    # R22, R46: the codes of minor 1 are defined in every file of minor 1 and later, so a 1.1 reader reads a
    # minor-3 file's 1.1 types by their types (not as opaque bytes) and checks them; vectors
    # valid/format-1-1-as-minor-3, invalid/R48-bool-array-minor-3
    typed2 = write_ext([E("q", "Q4_1", (32,))], [("b", "bool[]", [True]), ("u", "u16", 7)],
                       ext=geometry_item([20]), minor=3)
    yield "valid/1.1-types-in-minor-3", typed2, {
        "version": [1, 3], "compat_flags": 0,
        "entries": [{"name": "q", "dtype": "Q4_1", "shape": [32], "offset": payload_offset(typed2, 0),
                     "length": 20, "alignment": 64, "target": None,
                     "checksum": zlib.crc32(E("q", "Q4_1", (32,)).payload)}],
        "metadata": [{"key": "b", "type": "bool[]", "value": [True]}, {"key": "u", "type": "u16", "value": 7}]}
    yield "R48-1.1-bool[]-in-minor-3", write_ext([], [("b", "bool[]", [1, 2])], minor=3), "R48"
    yield "R47-1.1-u16-in-minor-3", write_ext([], [("u", "u16", b"\0")], minor=3), "R47"
    yield "R26-1.1-dtype-in-minor-3", write_ext([E("q", "Q4_1", (16,), bytes(10))], ext=geometry_item([20]),
                                                minor=3), "R26"
    # section 3.4: an item may be empty; a block geometry item with no records is well formed
    yield "valid/1.1-empty-unknown-item", write_ext([E("a")], ext=ext_item(1, b"") + ext_item(6, b"")), "valid"


# ------------------------------------------------------------------ format 1.2: signed containers (section 14)
SIG_DT = 55
SIG_NAME = "tpack.signature"
MESSAGE_PREFIX = b"tpack signed v1\0"
SPKI_PREFIX = {1: bytes.fromhex("302a300506032b6570032100"),
               2: bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200")}
ED25519_L = 2 ** 252 + 27742317777372353535851937790883648493
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


class SigningKey(object):
    """A fixed test key, with pyca (`cryptography`, imported only when a signed case is built):
    Ed25519 from a 32-byte seed (deterministic signatures), or P-256 from a secret scalar (pyca
    signs with a random nonce, so the P-256 cases check verdicts, not bytes)."""

    def __init__(self, alg, secret):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519
        enc = serialization.Encoding
        fmt = serialization.PublicFormat
        self.alg = alg
        if alg == 1:
            self._key = ed25519.Ed25519PrivateKey.from_private_bytes(secret)
            self.public = self._key.public_key().public_bytes(enc.Raw, fmt.Raw)
        else:
            self._key = ec.derive_private_key(secret, ec.SECP256R1())
            self.public = self._key.public_key().public_bytes(enc.X962, fmt.UncompressedPoint)
        # the key id of section 14 is SHA-256 of the DER SubjectPublicKeyInfo: the fixed prefix and the
        # raw key must be exactly what pyca (OpenSSL) writes
        der = self._key.public_key().public_bytes(enc.DER, fmt.SubjectPublicKeyInfo)
        assert der == SPKI_PREFIX[alg] + self.public, der.hex()
        self.id = hashlib.sha256(der).digest()

    def sign(self, message):
        if self.alg == 1:
            return self._key.sign(message)
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
        r, s = decode_dss_signature(self._key.sign(message, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    def trusted(self, hash_only=False, subject=None, algorithm=None):
        """This key as a KEYS.json item of the kit protocol."""
        return {"algorithm": self.alg if algorithm is None else algorithm,
                "public_key": None if hash_only else self.public.hex(),
                "key_id": self.id.hex(), "subject": subject}


_KEYS = {}


def test_key(name):
    """The fixed keys of the signed cases: ed-a, ed-b (Ed25519), p-a, p-b (P-256)."""
    if name not in _KEYS:
        secrets = {"ed-a": (1, bytes(range(32))), "ed-b": (1, bytes(range(100, 132))),
                   "p-a": (2, 0x1F2E3D4C5B6A79880123456789ABCDEF0F1E2D3C4B5A69788796A5B4C3D2E1F0),
                   "p-b": (2, 0x00C0FFEE00C0FFEE00C0FFEE00C0FFEE00C0FFEE00C0FFEE00C0FFEE00C0FFEE)}
        _KEYS[name] = SigningKey(*secrets[name])
    return _KEYS[name]


def entry_range(buf, i):
    t = sec(buf, 0)[0] + 104 * i
    return struct.unpack_from("<Q", buf, t + 16)[0], struct.unpack_from("<Q", buf, t + 24)[0]


def entry_count(buf):
    return struct.unpack_from("<I", buf, 40)[0]


def set_payload(data, i, raw, fix_crc=True):
    """Entry i's payload replaced by raw (same length); with fix_crc its trailer CRC and the trailer's
    own checksum are recomputed, as an attacker who knows the format does."""
    off, ln = entry_range(data, i)
    assert len(raw) == ln
    buf = bytearray(data)
    buf[off:off + ln] = raw
    if fix_crc:
        roff = sec(buf, 5)[0]
        struct.pack_into("<I", buf, roff + 4 * i, zlib.crc32(bytes(raw)))
        fix_trailer(buf)
    return bytes(buf)


def flip_payload_byte(data, i, k=0, fix_crc=True):
    off, ln = entry_range(data, i)
    raw = bytearray(data[off:off + ln])
    raw[k] ^= 0x55
    return set_payload(data, i, bytes(raw), fix_crc)


def digest_table(data):
    """G of section 14: SHA-256 of every entry's payload but the last (the signature entry's)."""
    return b"".join(hashlib.sha256(data[o:o + ln]).digest()
                    for o, ln in (entry_range(data, i) for i in range(entry_count(data) - 1)))


def signed_message(data, digests):
    """M of section 14 = "tpack signed v1\\0" || SHA-256(bytes[0, payloads.offset)) || SHA-256(G)."""
    return MESSAGE_PREFIX + hashlib.sha256(data[:sec(data, 4)[0]]).digest() + hashlib.sha256(digests).digest()


def sign_in_place(data, key, digests=None, signature=None):
    """Fill the last entry's payload with G || sig (G from the payloads unless given; sig by key over M
    unless given) and fix its CRC: the signing of section 11.2, after the fact."""
    digests = digest_table(data) if digests is None else digests
    if signature is None:
        signature = key.sign(signed_message(data, digests))
    n = entry_count(data)
    _, ln = entry_range(data, n - 1)
    return set_payload(data, n - 1, (digests + signature)[:ln].ljust(ln, b"\0"))


def write_signed(entries=(), meta=(), key="ed-a", counter=7, subject=None, embed=False, minor=2, compat=1,
                 alg=None, key_id=None, pubkey=None, sig_len=None, sig_name=SIG_NAME, sig_alignment=8,
                 sig_target=None, sig_pos=None, sig_dtype=SIG_DT, sig_shape=None, drop=(), override=None,
                 sign=True):
    """A signed container by the canonical writer of section 11.1 (minor 2, compat bit 0, the signed
    attributes as metadata, the signature entry last with alignment 8, a block geometry item when a
    block dtype is used), signed by the named test key.  The keyword arguments break it on purpose:
    another algorithm code, key id, public key, signature length, name, alignment, target, position or
    dtype of the signature entry, signed attributes dropped (`drop`: keys) or replaced (`override`:
    key -> (type, value))."""
    k = test_key(key) if isinstance(key, str) else key
    alg = k.alg if alg is None else alg
    attrs = {"tpack.sig.alg": ("u64", alg), "tpack.sig.key": ("bytes", k.id if key_id is None else key_id),
             "tpack.sig.counter": ("u64", counter)}
    if subject is not None:
        attrs["tpack.sig.subject"] = ("string", subject)
    if embed or pubkey is not None:
        attrs["tpack.sig.pubkey"] = ("bytes", k.public if pubkey is None else pubkey)
    attrs.update(override or {})
    for d in drop:
        attrs.pop(d, None)
    all_meta = list(meta) + [(name, t, v) for name, (t, v) in attrs.items() if t is not None]
    entries = list(entries)
    n = len(entries) + 1
    length = 32 * (n - 1) + 64 if sig_len is None else sig_len
    sig_entry = E(sig_name, sig_dtype, sig_shape or (length,), bytes(length), alignment=sig_alignment,
                  target=sig_target)
    entries.insert(len(entries) if sig_pos is None else sig_pos, sig_entry)
    used = sorted(set(e.dtype for e in entries if e.dtype in BLOCK_DT))
    data = write_ext(entries, all_meta, geometry_item(used) if used else b"", minor=minor, compat=compat)
    if sign and sig_pos is None:
        data = sign_in_place(data, k)
    return data


def strip_signature(entries, meta):
    """What an attacker who strips the signature writes: the same content, canonical and unsigned."""
    return write11(entries, meta)


def expected_signed(data, entries, meta_expected, key, counter, subject=None, embed=False, alg=None,
                    version=(1, 2)):
    """The section-13 decoding of a file write_signed made (meta_expected: the decoded metadata records
    that are not signed attributes)."""
    k = test_key(key)
    n = len(entries) + 1
    decoded = []
    for i, e in enumerate(list(entries) + [E(SIG_NAME, SIG_DT, (32 * (n - 1) + 64,), b"", alignment=8)]):
        off, ln = entry_range(data, i)
        decoded.append({"name": e.name.decode(), "dtype": tpack_reader.DTYPES[e.dtype][0],
                        "shape": e.shape, "offset": off, "length": ln, "alignment": e.alignment,
                        "target": e.target, "checksum": zlib.crc32(data[off:off + ln])})
    attrs = [{"key": "tpack.sig.alg", "type": "u64", "value": k.alg if alg is None else alg},
             {"key": "tpack.sig.counter", "type": "u64", "value": counter},
             {"key": "tpack.sig.key", "type": "bytes", "value": k.id.hex()}]
    if embed:
        attrs.append({"key": "tpack.sig.pubkey", "type": "bytes", "value": k.public.hex()})
    if subject is not None:
        attrs.append({"key": "tpack.sig.subject", "type": "string", "value": subject})
    off, ln = entry_range(data, n - 1)
    return {"version": list(version), "compat_flags": 1, "entries": decoded,
            "metadata": sorted(list(meta_expected) + attrs, key=lambda r: r["key"].encode()),
            "signature": {"algorithm": k.alg if alg is None else alg, "key": k.id.hex(), "counter": counter,
                          "subject": subject, "public_key": k.public.hex() if embed else None,
                          "message": signed_message(data, data[off:off + 32 * (n - 1)]).hex()}}


def container_entry(name, inner, **kw):
    return E(name, "CONTAINER", (len(inner),), inner, **kw)


def cases_1_2():
    """Version 1.2 (signed containers): valid signed files with their decodings, and files that break
    each rule of the signature group (R54-R57), alone or with another rule (the order of section 12),
    nested (R39).  Each valid one is also given to the frozen 1.0 reader, by main()."""
    ents = [E("w", "F32", (2, 3)), E("b", "U8", (5,), alignment=1)]
    meta = [("name", "string", "kws")]
    meta_dec = [{"key": "name", "type": "string", "value": "kws"}]
    full = write_signed(ents, meta, "ed-a", counter=7, subject="acme.kws", embed=True)
    yield "valid/1.2-signed-ed25519", full, expected_signed(full, ents, meta_dec, "ed-a", 7, "acme.kws", True)
    # Ed25519 is deterministic: the same content signed twice gives the same bytes (section 11.1)
    assert full == write_signed(ents, meta, "ed-a", counter=7, subject="acme.kws", embed=True)
    bare = write_signed(ents, meta, "ed-a")
    yield "valid/1.2-signed-ed25519-no-subject-no-pubkey", bare, expected_signed(bare, ents, meta_dec, "ed-a", 7)
    p256 = write_signed(ents, [], "p-a", counter=2 ** 64 - 1, subject="x", embed=True)
    yield "valid/1.2-signed-p256", p256, expected_signed(p256, ents, [], "p-a", 2 ** 64 - 1, "x", True)
    only = write_signed([], [], "ed-a", counter=0)
    assert entry_range(only, 0)[1] == 64
    yield "valid/1.2-signed-no-other-entry", only, expected_signed(only, [], [], "ed-a", 0)
    q = [E("q", "Q4_1", (32,)), E("e", "F16", (0,))]
    yield "valid/1.2-signed-block-dtype", write_signed(q, [("a", "u16", 3)], "p-a"), "valid"
    sub255 = write_signed(ents, [], "ed-a", subject="s" * 255)
    yield "valid/1.2-subject-255-bytes", sub255, "valid"
    # nesting: a signed container inside an unsigned one, and the reverse, and signed in signed
    outer = write([E("a"), container_entry("m", full)])
    yield "valid/1.2-signed-nested-in-unsigned", outer, {
        "version": [1, 0], "compat_flags": 0, "metadata": [],
        "entries": [{"name": "a", "dtype": "U8", "shape": [4], "offset": 384, "length": 4, "alignment": 64,
                     "target": None, "checksum": zlib.crc32(E("a").payload)},
                    {"name": "m", "dtype": "CONTAINER", "shape": [len(full)], "offset": 448, "length": len(full),
                     "alignment": 64, "target": None, "checksum": zlib.crc32(full),
                     "container": expected_signed(full, ents, meta_dec, "ed-a", 7, "acme.kws", True)}]}
    plain = write([E("a")], [("k", "u64", 1)])
    yield "valid/1.2-unsigned-nested-in-signed", write_signed([container_entry("m", plain)], [], "ed-b"), "valid"
    yield "valid/1.2-signed-in-signed", write_signed([container_entry("m", p256)], [], "ed-a", embed=True), "valid"
    # a minor-2 file need not be signed (a canonical writer writes minor 2 only for a signed one)
    yield "valid/1.2-unsigned-minor-2", write_ext([E("a")], [("k", "u64", 1)], minor=2), "valid"
    # section 10: in files of minor 0 and 1 the tpack.sig. keys, the name tpack.signature and compat bit 0
    # mean nothing; dtype 55 is undefined (R22)
    yield "valid/1.1-sig-keys-and-bit-0-in-minor-1", write_ext(
        [E("tpack.signature", "U8", (2,))], [("tpack.sig.alg", "u64", 99), ("tpack.sig.x", "u8", 1)],
        compat=1), "valid"
    yield "valid/1.0-sig-keys-and-bit-0-in-minor-0", write(
        [E("tpack.signature")], [("tpack.sig.key", "string", "not a key")], compat=3), "valid"
    yield "R22-signature-dtype-in-minor-1", write_signed(ents, [], "ed-a", minor=1), "R22"
    yield "R22-signature-dtype-in-minor-0", write([E("s", SIG_DT, (64,))], compat=1), "R22"
    # a reader of minor 2 reads a minor-3 file: an algorithm it does not know, a reserved key it does not
    # know and a public key of any length are kept (section 14 / R56), the signature length only needs to
    # be above the digest table's (R57)
    newer = write_signed(ents, [], "ed-a", minor=3, alg=9, sig_len=32 * 2 + 1, pubkey=b"\x01" * 7,
                         override={"tpack.sig.extra": ("u64", 1)}, sign=False)
    yield "valid/1.2-newer-minor-unknown-algorithm", newer, "valid"
    yield "R57-newer-minor-unknown-algorithm-no-signature-bytes", write_signed(
        ents, [], "ed-a", minor=3, alg=9, sig_len=32 * 2, sign=False), "R57"
    yield "R56-unknown-algorithm-minor-2", write_signed(ents, [], "ed-a", alg=3, sign=False), "R56"
    yield "R56-algorithm-0", write_signed(ents, [], "ed-a", alg=0, sign=False), "R56"
    # ---- R54 SignedFlag
    yield "R54-bit-without-signature-entry", write_ext([E("a")], minor=2, compat=1), "R54"
    yield "R54-signature-entry-without-bit", write_signed(ents, [], "ed-a", compat=0), "R54"
    yield "R54-signature-entry-without-bit-other-bits", write_signed(ents, [], "ed-a", compat=6), "R54"
    yield "R54-sig-key-without-bit", write_ext([E("a")], [("tpack.sig.note", "string", "x")], minor=2), "R54"
    yield "R54-sig-attributes-without-entry", write_ext(
        [E("a")], [("tpack.sig.alg", "u64", 1), ("tpack.sig.counter", "u64", 1),
                   ("tpack.sig.key", "bytes", bytes(32))], minor=2, compat=1), "R54"
    yield "valid/1.2-compat-bits-beside-signed", write_signed(ents, [], "ed-a", compat=0xF001), "valid"
    # ---- R55 SignatureEntry
    yield "R55-two-signature-entries", write_signed(
        [E("s2", SIG_DT, (96,), bytes(96), alignment=8)] + ents, [], "ed-a", sign=False), "R55"
    yield "R55-not-last", write_signed(ents, [], "ed-a", sig_pos=0), "R55"
    yield "R55-not-last-middle", write_signed(ents, [], "ed-a", sig_pos=1), "R55"
    yield "R55-wrong-name", write_signed(ents, [], "ed-a", sig_name="sig"), "R55"
    yield "R55-name-with-nul", write_signed(ents, [], "ed-a", sig_name="tpack.signature\0"), "R55"
    yield "R55-other-dtype-named-signature-unsigned", write_ext([E("tpack.signature", "U8", (4,))], minor=2), "R55"
    yield "R55-other-dtype-named-signature-signed", write_signed(
        [E("tpack.signature", "RAW", (3,))] + ents, [], "ed-a", sig_name="sig", sign=False), "R55"
    yield "R55-unknown-dtype-named-signature-newer", write_ext([E("tpack.signature", 99, (4,), b"abcd")],
                                                             minor=3), "R55"
    yield "R55-has-target", write_signed(ents, [], "ed-a", sig_target=0x8000), "R55"
    yield "R55-has-target-0", write_signed(ents, [], "ed-a", sig_target=0), "R55"
    yield "R55-alignment-16", write_signed(ents, [], "ed-a", sig_alignment=16), "R55"
    yield "R55-alignment-1", write_signed(ents, [], "ed-a", sig_alignment=1), "R55"
    yield "R55-alignment-64", write_signed(ents, [], "ed-a", sig_alignment=64), "R55"
    # ---- R56 SignatureMeta
    for attr in ("tpack.sig.alg", "tpack.sig.key", "tpack.sig.counter"):
        yield "R56-missing-%s" % attr, write_signed(ents, [], "ed-a", drop=[attr]), "R56"
    for label, over in (("alg-i64", {"tpack.sig.alg": ("i64", 1)}),
                        ("alg-u8", {"tpack.sig.alg": ("u8", 1)}),
                        ("alg-string", {"tpack.sig.alg": ("string", "1")}),
                        ("key-31-bytes", {"tpack.sig.key": ("bytes", bytes(31))}),
                        ("key-33-bytes", {"tpack.sig.key": ("bytes", bytes(33))}),
                        ("key-string", {"tpack.sig.key": ("string", "k" * 32)}),
                        ("key-u8[]", {"tpack.sig.key": ("u8[]", [0] * 32)}),
                        ("counter-i64", {"tpack.sig.counter": ("i64", 7)}),
                        ("counter-u32", {"tpack.sig.counter": ("u32", 7)}),
                        ("subject-empty", {"tpack.sig.subject": ("string", "")}),
                        ("subject-256-bytes", {"tpack.sig.subject": ("string", "s" * 256)}),
                        ("subject-128-two-byte-chars", {"tpack.sig.subject": ("string", "\u00e9" * 128)}),
                        ("subject-bytes", {"tpack.sig.subject": ("bytes", b"acme")}),
                        ("pubkey-31-bytes", {"tpack.sig.pubkey": ("bytes", bytes(31))}),
                        ("pubkey-65-bytes-ed25519", {"tpack.sig.pubkey": ("bytes", bytes(65))}),
                        ("pubkey-string", {"tpack.sig.pubkey": ("string", "k" * 32)}),
                        ("other-reserved-key", {"tpack.sig.extra": ("u64", 1)}),
                        ("prefix-alone-as-key", {"tpack.sig.": ("u64", 1)})):
        yield "R56-%s" % label, write_signed(ents, [], "ed-a", override=over), "R56"
    yield "R56-pubkey-32-bytes-p256", write_signed(ents, [], "p-a", pubkey=bytes(32)), "R56"
    # an Ed25519 file whose algorithm is swapped to P-256 while it carries its 32-byte key
    yield "R56-algorithm-swapped-with-pubkey", write_signed(ents, [], "ed-a", embed=True, alg=2), "R56"
    yield "R49-subject-not-utf8", write_signed(ents, [], "ed-a", override={"tpack.sig.subject": ("string", b"\xff")}), "R49"
    # keys that only look reserved
    yield "valid/1.2-near-reserved-keys", write_signed(ents, [("tpack.sig", "u64", 1), ("tpack.sigx", "u64", 1),
                                                              ("tpack.signature", "u64", 1)], "ed-a"), "valid"
    # ---- R57 SignatureLength
    n3 = 32 * 2
    yield "R57-truncated-signature", write_signed(ents, [], "ed-a", sig_len=n3 + 63), "R57"
    yield "R57-signature-one-byte-long", write_signed(ents, [], "ed-a", sig_len=n3 + 65), "R57"
    yield "R57-digest-missing", write_signed(ents, [], "ed-a", sig_len=n3 + 32), "R57"
    yield "R57-empty", write_signed(ents, [], "p-a", sig_len=0), "R57"
    # ---- the order of section 12: the signature group after metadata, before payload integrity, and
    # its rules in number order
    yield "order-R54-before-R55", write_signed(ents, [], "ed-a", compat=0, sig_pos=0), "R54"
    yield "order-R54-before-R55-two", write_signed([E("s2", SIG_DT, (96,), bytes(96), alignment=8)] + ents, [],
                                                   "ed-a", compat=0, sign=False), "R54"
    yield "order-R55-before-R56", write_signed(ents, [], "ed-a", sig_alignment=16, drop=["tpack.sig.alg"]), "R55"
    yield "order-R56-before-R57", write_signed(ents, [], "ed-a", sig_len=n3 + 63,
                                               override={"tpack.sig.key": ("bytes", bytes(31))}), "R56"
    yield "order-R56-before-R57-missing-counter", write_signed(ents, [], "ed-a", sig_len=3,
                                                               drop=["tpack.sig.counter"]), "R56"
    yield "order-R49-before-R54", write_ext([E("a")], [("s", "string", b"\xff")], minor=2, compat=1), "R49"
    yield "order-R45-before-R56", write_signed(ents, [("tpack.sig.counter", "u64", 1)], "ed-a"), "R45"
    yield "order-R27-before-R55", write_signed(ents, [], "ed-a", sig_shape=(n3 + 64, 1), sig_pos=0), "R27"
    yield "order-R29-before-R55", patch(write_signed(ents, [], "ed-a"), [(("d", 2), "alignment", 12)]), "R29"
    yield "order-R28-before-R57", patch(write_signed(ents, [], "ed-a", sig_len=n3 + 63),
                                        [(("d", 2), "dim0", n3 + 64)]), "R28"
    yield "order-R31-before-R55", patch(write_signed(ents, [], "ed-a", sig_target=8),
                                        [(("d", 2), "flags", 3)]), "R31"
    truncated = write_signed(ents, [], "ed-a", sig_len=n3 + 63)
    yield "order-R57-before-R50", flip_payload_byte(truncated, 0, fix_crc=False), "R57"
    pad_w = write_signed([E("w", "F32", (2, 3), pad_byte=1)] + ents[1:], [], "ed-a", sig_len=n3 + 63)
    assert entry_range(pad_w, 0)[0] > sec(pad_w, 4)[0]     # padding before entry 0
    yield "order-R57-before-R37", pad_w, "R57"
    # the signature entry's payload is covered by its CRC like any other (R50), and its padding by R37
    yield "R50-signature-entry", flip_payload_byte(full, 2, 5, fix_crc=False), "R50"
    yield "R50-signature-entry-crc-fixed-is-valid", flip_payload_byte(full, 2, 5), "valid"
    assert entry_range(bare, 2)[0] > sum(entry_range(bare, 1))     # padding before the signature entry
    yield "R37-before-signature-entry", poke(bare, entry_range(bare, 2)[0] - 1, b"\x01"), "R37"
    # nesting: a nested container's signature group is a structural rule of the nested container (R39)
    for rule, bad in (("R54", write_signed(ents, [], "ed-a", compat=0)),
                      ("R55", write_signed(ents, [], "ed-a", sig_alignment=16)),
                      ("R56", write_signed(ents, [], "ed-a", drop=["tpack.sig.key"])),
                      ("R57", truncated)):
        yield "R39-nested-%s" % rule, write([container_entry("m", bad)]), "R39"
        yield "R39-nested-%s-in-signed" % rule, write_signed([container_entry("m", bad)], [], "ed-b"), "R39"
    r55 = write_signed(ents, [], "ed-a", sig_alignment=16)
    yield "order-R39-nested-R55-before-R43", write([container_entry("m", r55)], [(b"\xff", "u64", 1)]), "R39"
    yield "order-R39-nested-R55-before-R54", write_ext([container_entry("m", r55)], minor=2, compat=1), "R39"
    # R38 is the depth-8 container's nesting group; its signature group comes after it
    leaf = write_signed([container_entry("c", write())], [], "ed-a", sig_alignment=16)
    yield "order-R38-before-depth-8-R55", nest(8, leaf=leaf), "R38"
    yield "valid/1.2-signed-at-depth-8", nest(8, leaf=write_signed(ents, [], "ed-a")), "valid"
    # section 3.4 / R52: SIGNATURE has no geometry record in a file of minor >= 2 (like RAW and
    # CONTAINER); in a minor-1 file code 55 is undefined and a record for it is allowed (SPEC_NOTES S3)
    yield "R52-geometry-record-for-signature", write_ext([E("a")], [], geometry_item([(55, 1, 1)]), minor=2), "R52"
    yield "valid/1.1-geometry-record-for-code-55", write_ext([E("a")], [], geometry_item([(55, 2, 3)]),
                                                             minor=1), "valid"


def verify_cases():
    """yield (label, bytes, keys, policy, verdict, plain): the kit protocol --verify-signature (section
    14), verdict "ok" or the first rule of the authenticated verification; plain is the verdict of the
    reader without keys (the structural rules and R37/R50 only: a forgery with every CRC recomputed is a
    valid container, which is why signatures exist)."""
    ed_a, ed_b, p_a, p_b = (test_key(k) for k in ("ed-a", "ed-b", "p-a", "p-b"))
    KA = [ed_a.trusted()]
    require = {"require_signature": True, "min_counter": 7, "subject": "acme.kws"}
    lenient = {"require_signature": False, "min_counter": 0, "subject": None}
    ents = [E("w", "F32", (2, 3)), E("b", "U8", (5,), alignment=1)]
    meta = [("name", "string", "kws")]
    s = write_signed(ents, meta, "ed-a", counter=7, subject="acme.kws")
    s_pub = write_signed(ents, meta, "ed-a", counter=7, subject="acme.kws", embed=True)
    sp = write_signed(ents, meta, "p-a", counter=9, subject="acme.kws")
    sp_pub = write_signed(ents, meta, "p-a", counter=9, subject="acme.kws", embed=True)
    stripped = strip_signature(ents, meta)
    # ---- accepted
    yield "ok-ed25519", s, KA, require, "ok", "valid"
    yield "ok-ed25519-lenient-policy", s, KA, lenient, "ok", "valid"
    yield "ok-ed25519-pubkey-hash-only-key", s_pub, [ed_a.trusted(hash_only=True)], require, "ok", "valid"
    yield "ok-ed25519-pubkey-and-full-key", s_pub, KA, require, "ok", "valid"
    yield "ok-p256", sp, [p_a.trusted()], require, "ok", "valid"
    yield "ok-p256-pubkey-hash-only-key", sp_pub, [p_a.trusted(hash_only=True)], require, "ok", "valid"
    yield "ok-key-among-several", sp, [ed_b.trusted(), ed_a.trusted(), p_b.trusted(), p_a.trusted()], require, \
        "ok", "valid"
    yield "ok-counter-above-floor", sp, [p_a.trusted()], dict(require, min_counter=8), "ok", "valid"
    yield "ok-no-subject-asked", write_signed(ents, meta, "ed-a", counter=7), KA, \
        dict(require, subject=None), "ok", "valid"
    yield "ok-trusted-key-subject", s, [ed_a.trusted(subject="acme.kws")], dict(require, subject=None), "ok", "valid"
    yield "ok-unsigned-allowed", stripped, KA, lenient, "ok", "valid"
    yield "ok-unsigned-allowed-no-keys", stripped, [], lenient, "ok", "valid"
    # P-256: a high s is accepted (section 14: no low-s rule), so (r, n - s) verifies too
    raw = sp[entry_range(sp, 2)[0]:][:128]
    r_, s_ = raw[64:96], int.from_bytes(raw[96:128], "big")
    yield "ok-p256-other-s", sign_in_place(sp, None, raw[:64], r_ + (P256_N - s_).to_bytes(32, "big")), \
        [p_a.trusted()], require, "ok", "valid"
    # ---- R58 SignatureRequired
    yield "R58-stripped", stripped, KA, require, "R58", "valid"
    yield "R58-unsigned-minor-2", write_ext(ents, meta, minor=2), KA, require, "R58", "valid"
    # ---- R59 UnknownKey
    yield "R59-signed-by-another-key", write_signed(ents, meta, "ed-b", subject="acme.kws"), KA, require, "R59", "valid"
    yield "R59-no-trusted-key", s, [], require, "R59", "valid"
    yield "R59-pubkey-not-the-key-id", write_signed(ents, meta, "ed-a", subject="acme.kws", pubkey=ed_b.public), \
        KA, require, "R59", "valid"
    yield "R59-pubkey-not-the-key-id-hash-only", write_signed(ents, meta, "ed-a", subject="acme.kws",
                                                              pubkey=ed_b.public), \
        [ed_a.trusted(hash_only=True)], require, "R59", "valid"
    yield "R59-hash-only-key-no-pubkey", s, [ed_a.trusted(hash_only=True)], require, "R59", "valid"
    # the id of an Ed25519 key, declared as a P-256 key: the file's key hashed as a P-256 SPKI is not the id
    # (the SPKI is the trusted key's algorithm's, SPEC_NOTES S8)
    yield "R59-pubkey-hashed-as-trusted-algorithm", s_pub, [ed_a.trusted(hash_only=True, algorithm=2)], \
        require, "R59", "valid"
    # ---- R60 AlgorithmMismatch
    swapped = set_attr(s, "tpack.sig.alg", 2)
    yield "R60-algorithm-swapped", swapped, KA, require, "R60", "valid"
    # a trusted key declared with the other algorithm (the kit takes a key set as given; golden vector
    # valid/signed-ed25519, verification 4)
    yield "R60-trusted-key-of-other-algorithm", s, [ed_a.trusted(algorithm=2)], require, "R60", "valid"
    newer = write_signed(ents, meta, "ed-a", subject="acme.kws", minor=3, alg=9, sig_len=32 * 2 + 70, sign=False)
    yield "R60-unknown-algorithm-newer-minor", newer, KA, require, "R60", "valid"
    # ---- R61 SubjectMismatch
    yield "R61-other-subject", write_signed(ents, meta, "ed-a", subject="acme.other"), KA, require, "R61", "valid"
    yield "R61-no-subject", write_signed(ents, meta, "ed-a"), KA, require, "R61", "valid"
    yield "R61-bytewise", write_signed(ents, meta, "ed-a", subject="ACME.kws"), KA, require, "R61", "valid"
    yield "R61-prefix", write_signed(ents, meta, "ed-a", subject="acme.kws2"), KA, require, "R61", "valid"
    yield "R61-trusted-key-subject", s, [ed_a.trusted(subject="acme.asr")], dict(require, subject=None), \
        "R61", "valid"
    yield "R61-trusted-key-subject-and-policy", s, [ed_a.trusted(subject="acme.asr")], require, "R61", "valid"
    # ---- R62 Rollback: a genuine older model, validly signed with a lower counter
    yield "R62-counter-lowered", write_signed(ents, meta, "ed-a", counter=6, subject="acme.kws"), KA, require, \
        "R62", "valid"
    yield "R62-counter-0", write_signed(ents, meta, "ed-a", counter=0, subject="acme.kws"), KA, \
        dict(require, min_counter=1), "R62", "valid"
    yield "R62-floor-max", sp, [p_a.trusted()], dict(require, min_counter=2 ** 64 - 1), "R62", "valid"
    # ---- R63 BadSignature
    yield "R63-counter-raised-after-signing", set_attr(s, "tpack.sig.counter", 8), KA, require, "R63", "valid"
    yield "R63-counter-lowered-after-signing", set_attr(s, "tpack.sig.counter", 6), KA, \
        dict(require, min_counter=6), "R63", "valid"
    yield "R63-key-id-of-one-key-signature-of-another", write_signed(ents, meta, "ed-b", subject="acme.kws",
                                                                     key_id=ed_a.id), KA, require, "R63", "valid"
    yield "R63-p256-key-id-of-one-key-signature-of-another", write_signed(ents, meta, "p-b", subject="acme.kws",
                                                                          key_id=p_a.id), \
        [p_a.trusted()], require, "R63", "valid"
    # a payload changed, its digest in the table changed to match, every CRC recomputed: M changes
    forged = flip_payload_byte(s, 0)
    yield "R63-digest-table-changed-to-match", sign_in_place(forged, None, digest_table(forged),
                                                             s[entry_range(s, 2)[0] + 64:][:64]), \
        KA, require, "R63", "valid"
    # entries reordered after signing (the digest table reordered with them, the signature kept)
    e0, e1 = ents
    re = write_signed([e1, e0], meta, "ed-a", subject="acme.kws", sign=False)
    old = s[entry_range(s, 2)[0]:][:128]
    yield "R63-entries-reordered", sign_in_place(re, None, old[32:64] + old[:32], old[64:]), KA, require, \
        "R63", "valid"
    yield "R63-entry-renamed", sign_in_place(write_signed([E("v", "F32", (2, 3)), e1], meta, "ed-a",
                                                          subject="acme.kws", sign=False),
                                             None, old[:64], old[64:]), KA, require, "R63", "valid"
    yield "R63-metadata-changed", sign_in_place(write_signed(ents, [("name", "string", "kwt")], "ed-a",
                                                             subject="acme.kws", sign=False),
                                                None, old[:64], old[64:]), KA, require, "R63", "valid"
    yield "R63-signature-bit-flipped", flip_payload_byte(s, 2, 64 + 3), KA, require, "R63", "valid"
    yield "R63-signature-bit-flipped-crc-not-fixed", flip_payload_byte(s, 2, 64 + 3, fix_crc=False), KA, require, \
        "R63", "R50"
    yield "R63-p256-signature-bit-flipped", flip_payload_byte(sp, 2, 64 + 40), [p_a.trusted()], require, \
        "R63", "valid"
    sig = s[entry_range(s, 2)[0] + 64:][:64]
    big_s = (int.from_bytes(sig[32:], "little") + ED25519_L).to_bytes(32, "little")
    yield "R63-ed25519-s-plus-l", sign_in_place(s, None, old[:64], sig[:32] + big_s), KA, require, "R63", "valid"
    psig = sp[entry_range(sp, 2)[0] + 64:][:64]
    for label, rs in (("r-0", bytes(32) + psig[32:]), ("s-0", psig[:32] + bytes(32)),
                      ("s-n", psig[:32] + P256_N.to_bytes(32, "big")),
                      ("r-n", P256_N.to_bytes(32, "big") + psig[32:]),
                      ("r-plus-n", (int.from_bytes(psig[:32], "big") + P256_N).to_bytes(33, "big")[-32:] + psig[32:])):
        yield "R63-p256-%s" % label, sign_in_place(sp, None, sp[entry_range(sp, 2)[0]:][:64], rs), \
            [p_a.trusted()], require, "R63", "valid"
    # ---- R64 EntryDigest: a payload changed and every CRC recomputed (CRC-32 is no authentication)
    yield "R64-payload-changed-crcs-recomputed", flip_payload_byte(s, 0), KA, require, "R64", "valid"
    yield "R64-second-entry", flip_payload_byte(s, 1, 4), KA, require, "R64", "valid"
    yield "R64-before-R50", flip_payload_byte(s, 1, 4, fix_crc=False), KA, require, "R64", "R50"
    yield "R64-p256", flip_payload_byte(sp, 0), [p_a.trusted()], require, "R64", "valid"
    # ---- the order: structural rules, R58..R63, then entry by entry R37, R64, R50
    yield "order-R57-before-R58", write_signed(ents, meta, "ed-a", sig_len=127), KA, require, "R57", "R57"
    yield "order-R55-before-R59", write_signed(ents, meta, "ed-b", sig_alignment=16), KA, require, "R55", "R55"
    yield "order-R59-before-R60", set_attr(write_signed(ents, meta, "ed-b", subject="acme.kws"), "tpack.sig.alg", 2), \
        KA, require, "R59", "valid"
    yield "order-R60-before-R61", set_attr(write_signed(ents, meta, "ed-a", subject="x"), "tpack.sig.alg", 2), \
        KA, require, "R60", "valid"
    yield "order-R61-before-R62", write_signed(ents, meta, "ed-a", subject="x", counter=1), KA, require, \
        "R61", "valid"
    yield "order-R62-before-R63", set_attr(s, "tpack.sig.counter", 5), KA, require, "R62", "valid"
    yield "order-R63-before-R64", flip_payload_byte(flip_payload_byte(s, 0), 2, 64), KA, require, "R63", "valid"
    yield "order-R63-before-R37", flip_payload_byte(poke(s, entry_range(s, 0)[0] - 1, b"\x01"), 2, 64), KA, \
        require, "R63", "R37"
    padded = poke(s, entry_range(s, 0)[0] - 1, b"\x01")
    yield "order-R37-before-R64", flip_payload_byte(padded, 0), KA, require, "R37", "R37"
    yield "order-R64-entry0-before-R37-entry2", poke(flip_payload_byte(s, 0), entry_range(s, 2)[0] - 1, b"\x01"), \
        KA, require, "R64", "R37"
    yield "R50-signature-entry-crc", patch_trailer_crc(s, 2), KA, require, "R50", "R50"
    # ---- nesting: only the outermost signature is checked; it covers every nested byte
    inner_signed = write_signed(ents, meta, "ed-a", subject="acme.kws")
    outer_unsigned = write([E("a"), container_entry("m", inner_signed)])
    yield "R58-signed-nested-in-unsigned", outer_unsigned, KA, require, "R58", "valid"
    yield "ok-signed-nested-in-unsigned-lenient", outer_unsigned, KA, lenient, "ok", "valid"
    forged_inner = flip_payload_byte(inner_signed, 2, 64)
    yield "ok-badly-signed-nested-not-checked", write([container_entry("m", forged_inner)]), KA, lenient, \
        "ok", "valid"
    plain_inner = write([E("a")], [("k", "u64", 1)])
    outer_signed = write_signed([container_entry("m", plain_inner), E("z")], meta, "ed-a", subject="acme.kws")
    yield "ok-unsigned-nested-in-signed", outer_signed, KA, require, "ok", "valid"
    # a nested payload changed with the nested CRCs and the outer CRC recomputed: the outer digest catches it
    tampered_inner = flip_payload_byte(plain_inner, 0)
    yield "R64-nested-payload-changed", set_payload(outer_signed, 0, tampered_inner), KA, require, "R64", "valid"
    # a nested container whose own payload does not match its CRC, signed as such: R50, nested
    bad_inner = flip_payload_byte(plain_inner, 0, fix_crc=False)
    yield "R50-nested-under-valid-signature", write_signed([container_entry("m", bad_inner)], meta, "ed-a",
                                                           subject="acme.kws"), KA, require, "R50", "R50"
    yield "ok-signed-in-signed-outer-key", write_signed([container_entry("m", write_signed(ents, [], "ed-b"))], meta,
                                                        "ed-a", subject="acme.kws"), KA, require, "ok", "valid"


def set_attr(data, key, value):
    """The inline value of the metadata record of `key` changed (header checksum fixed): what an attacker
    does to a signed attribute after signing."""
    m = struct.unpack_from("<I", data, 48)[0]
    moff = sec(data, 3)[0]
    pool = moff + 24 * m
    for j in range(m):
        koff, klen = struct.unpack_from("<IH", data, moff + 24 * j)
        if data[pool + koff:pool + koff + klen] == key.encode():
            return patch(data, [(("m", j), "value", value)])
    raise KeyError(key)


def patch_trailer_crc(data, i):
    buf = bytearray(data)
    roff = sec(buf, 5)[0]
    struct.pack_into("<I", buf, roff + 4 * i, struct.unpack_from("<I", buf, roff + 4 * i)[0] ^ 1)
    fix_trailer(buf)
    return bytes(buf)


DEFAULT_READER = [sys.executable, READER]
FROZEN_1_0_READER = [sys.executable, READER_1_0]
DTYPES_1_0 = frozenset(range(1, 20))
META_TYPES_1_0 = frozenset(range(1, 11))


def has_minor_1(c):
    """Whether a container opened by tpack_reader (or one nested in it) is of minor >= 1."""
    return c.minor >= 1 or any(e.nested is not None and has_minor_1(e.nested) for e in c.entries)


def as_read_by_1_0(c):
    """The decoding a 1.0 reader gives of a container tpack_reader accepted (section 10: the 1.1 dtypes and
    metadata types, and the 1.2 dtype SIGNATURE, are unknown, skippable codes for it, and it has no
    "signature" object; section 13: an unknown dtype is its integer code,
    an unknown metadata type its integer code with its pool bytes in hex; the header extension is ignored)."""
    d = tpack_reader.decode(c)
    d.pop("signature", None)   # version 1.2: to a 1.0 reader the signature is an entry and metadata like others
    for e, de in zip(c.entries, d["entries"]):
        if e.dtype not in DTYPES_1_0:
            de["dtype"] = e.dtype
        if e.nested is not None:
            de["container"] = as_read_by_1_0(e.nested)
    for r, dm in zip(c.metas, d["metadata"]):
        if r.type not in META_TYPES_1_0:
            dm["type"] = r.type
            dm["value"] = r.raw.hex()
    return d
# A reader given a path that is not a regular file must stay below HOSTILE_RSS (enough for an interpreter,
# far less than reading /dev/zero to its absent end); HOSTILE_MEMORY is a hard limit that keeps a reader
# that does read it from taking the machine with it.
HOSTILE_RSS = 256 << 20
HOSTILE_MEMORY = 2 << 30


def run_measured(cmd, path, timeout):
    """-> (exit code or None after a timeout, stdout, stderr, peak resident set in bytes) of a reader run
    under HOSTILE_MEMORY; waited for with wait4, which gives this one reader's peak (Linux: ru_maxrss in KiB)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (HOSTILE_MEMORY, HOSTILE_MEMORY))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd + [path], stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             start_new_session=True, preexec_fn=limit)
        deadline = time.monotonic() + timeout
        rc = None
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                os.killpg(p.pid, signal.SIGKILL)
                _, _, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        p.returncode = rc if rc is not None else -signal.SIGKILL   # already reaped: Popen must not wait
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
    return rc, texts[0], texts[1], usage.ru_maxrss * 1024


def run_path(cmd, path, timeout):
    """-> (exit code, stdout, stderr); exit code None after a timeout (the reader is killed)."""
    p = subprocess.Popen(cmd + [path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def run_reader(cmd, data, timeout):
    with tempfile.NamedTemporaryFile(suffix=".tpack", delete=False) as f:
        f.write(data)
        path = f.name
    try:
        return run_path(cmd, path, timeout)
    finally:
        os.unlink(path)


def hostile_paths():
    """yield (label, path) for paths a reader must refuse without reading them to an end."""
    tmp = tempfile.mkdtemp(prefix="tpack-selftest-")
    try:
        yield "dev-zero", "/dev/zero"
        fifo = os.path.join(tmp, "fifo.tpack")
        os.mkfifo(fifo)              # nobody writes to it: opening it to read would wait forever
        yield "fifo", fifo
        yield "directory", tmp
    finally:
        shutil.rmtree(tmp)


def mutations(seeds, rounds, rng):
    """yield (round, bytes): the seeds with 1-4 random edits, the header checksum mostly fixed after."""
    for r in range(rounds):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            if op < 0.5 and data:
                data[rng.randrange(len(data))] = rng.randrange(256)
            elif op < 0.7 and len(data) > 8:
                pos = rng.randrange(0, len(data) - 8) & ~7
                data[pos:pos + 8] = struct.pack("<Q", rng.choice(
                    [0, 1, 2 ** 63, 2 ** 64 - 1, 2 ** 32, rng.randrange(2 ** 64), len(data)]))
            elif op < 0.85:
                data = data[:rng.randrange(len(data) + 1)]
            else:
                data += bytes(rng.randrange(16))
        if rng.random() < 0.7 and len(data) >= 160:
            try:
                fix_header_crc(data)
            except Exception:
                pass
        yield r, bytes(data)


def fuzz_in_process(seeds, rounds, rng):
    """tpack_reader.py on random mutations, in-process: it must only ever raise tpack_reader.Invalid."""
    bad = 0
    for r, data in mutations(seeds, rounds, rng):
        try:
            tpack_reader.read_container(data)
        except tpack_reader.Invalid:
            pass
        except Exception as exc:  # a crash
            bad += 1
            sys.stdout.write("FAIL fuzz round %d: %r\n" % (r, exc))
    return bad


def fuzz_verify_in_process(seeds, rounds, rng):
    """tpack_reader.verify_signed (section 14) on random mutations of the seeds, with the keys of the
    signed cases trusted: it too must only ever raise tpack_reader.Invalid."""
    keys = [dict(k.trusted(), public_key=k.public, key_id=k.id)
            for k in (test_key(name) for name in ("ed-a", "ed-b", "p-a", "p-b"))]
    keys.append(dict(keys[0], public_key=None))
    policy = {"require_signature": False, "min_counter": 0, "subject": None}
    bad = 0
    for r, data in mutations(seeds, rounds, rng):
        try:
            tpack_reader.verify_signed(data, keys, policy)
        except tpack_reader.Invalid:
            pass
        except Exception as exc:  # a crash
            bad += 1
            sys.stdout.write("FAIL verify fuzz round %d: %r\n" % (r, exc))
    return bad


def fuzz_command(cmd, seeds, rounds, rng, timeout):
    """A reader command on random mutations: each must exit 0, or 1 with a rule id first."""
    bad = 0
    for r, data in mutations(seeds, rounds, rng):
        rc, out, err = run_reader(cmd, data, timeout)
        tok = out.split()[0] if out.split() else ""
        if rc == 0 or (rc == 1 and tok[:1] == "R" and tok[1:].isdigit()):
            continue
        bad += 1
        sys.stdout.write("FAIL fuzz round %d: exit %s: %s %s\n" % (r, rc, out.strip()[:200], err.strip()[-200:]))
    return bad


USAGE = "usage: selftest.py [-v] [--fuzz N] [--timeout SECONDS] [-- READER_CMD [ARGS...]]\n"


def parse_args(argv):
    opts = {"verbose": False, "fuzz": None, "timeout": 30.0}
    cmd = None
    if "--" in argv:
        split = argv.index("--")
        argv, cmd = argv[:split], argv[split + 1:]
        if not cmd:
            raise ValueError("no reader command after --")
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-v":
            opts["verbose"] = True
        elif arg in ("--fuzz", "--timeout"):
            if i + 1 >= len(argv):
                raise ValueError("%s needs a value" % arg)
            i += 1
            opts[arg[2:]] = int(argv[i]) if arg == "--fuzz" else float(argv[i])
        elif arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            sys.exit(0)
        else:
            raise ValueError("unknown argument %s (put the reader command after --)" % arg)
        i += 1
    return opts, cmd


def main(argv):
    try:
        opts, cmd = parse_args(argv)
    except ValueError as exc:
        sys.stderr.write("selftest.py: %s\n%s" % (exc, USAGE))
        return 2
    try:
        import cryptography  # noqa: F401  (the signed cases are built with it)
    except ImportError:
        sys.stderr.write("selftest.py: the signed cases need the Python package cryptography "
                         "(pip install cryptography)\n")
        return 2
    in_process = cmd is None
    cmd = cmd or DEFAULT_READER
    verbose, timeout = opts["verbose"], opts["timeout"]
    print("reader: %s" % " ".join(cmd))
    passed = failed = 0
    seeds = []
    for label, data, expected in cases():
        seeds.append(data)
        rc, out, err = run_reader(cmd, data, timeout)
        tok = out.split()[0] if out.split() else ""
        ok = False
        if isinstance(expected, dict):
            try:
                ok = rc == 0 and json.loads(out) == expected
            except ValueError:
                ok = False
            want = "valid (exact decoding)"
        elif expected == "valid":
            ok = rc == 0
            want = "valid"
        else:
            ok = rc == 1 and tok == expected
            want = expected
        if ok:
            passed += 1
            if verbose:
                print("PASS %s -> %s" % (label, out.strip()[:100]))
        else:
            failed += 1
            print("FAIL %s: expected %s, got exit %s: %s %s" % (label, want, rc, out.strip()[:300], err.strip()[-300:]))
    # Signed containers (section 14): the kit protocol --verify-signature, and the verdict of the plain
    # reader on the same file (forgeries with every CRC recomputed are valid containers).
    signed_valid = []
    with tempfile.TemporaryDirectory(prefix="tpack-selftest-keys-") as tmp:
        keys_path = os.path.join(tmp, "keys.json")
        policy_path = os.path.join(tmp, "policy.json")
        for label, data, keys, policy, verdict, plain in verify_cases():
            seeds.append(data)
            if plain == "valid":
                signed_valid.append(("verify/" + label, data, "valid"))
            for kind, args, want in (("verify", ["--verify-signature", keys_path, policy_path], verdict),
                                     ("plain", [], plain)):
                with open(keys_path, "w") as f:
                    json.dump(keys, f)
                with open(policy_path, "w") as f:
                    json.dump(policy, f)
                rc, out, err = run_reader(cmd + args, data, timeout)
                tok = out.split()[0] if out.split() else ""
                if want in ("ok", "valid"):
                    ok = rc == 0 and (kind == "plain" or tok == "ok")
                else:
                    ok = rc == 1 and tok == want
                if ok:
                    passed += 1
                    if verbose:
                        print("PASS %s/%s -> %s" % (kind, label, out.strip()[:100]))
                else:
                    failed += 1
                    print("FAIL %s/%s: expected %s, got exit %s: %s %s"
                          % (kind, label, want, rc, out.strip()[:300], err.strip()[-300:]))
    # Compatibility (section 10, "a 1.0 reader reads every 1.1 file"): the frozen 1.0 reader accepts
    # every valid case that holds a container of minor >= 1 (every signed file too), and decodes it as a
    # 1.0 reader must.
    compat = 0
    for label, data, expected in list(cases()) + signed_valid:
        if expected != "valid" and not isinstance(expected, dict):
            continue
        try:
            c = tpack_reader.open_container(memoryview(data), 0)
        except tpack_reader.Invalid:
            continue     # reported above as a failure of the reader under test
        if not has_minor_1(c):
            continue
        compat += 1
        want = as_read_by_1_0(c)
        rc, out, err = run_reader(FROZEN_1_0_READER, data, timeout)
        try:
            ok = rc == 0 and json.loads(out) == want
        except ValueError:
            ok = False
        if ok:
            passed += 1
            if verbose:
                print("PASS compat-1.0/%s" % label)
        else:
            failed += 1
            print("FAIL compat-1.0/%s: the frozen 1.0 reader, expected valid with the 1.0 decoding, got exit %s: %s %s"
                  % (label, rc, out.strip()[:300], err.strip()[-300:]))
    if verbose:
        print("(%d valid cases of minor >= 1 given to the frozen 1.0 reader)" % compat)
    # Not containers at all: a clean refusal (a non-zero exit, not a signal) within 10 s and HOSTILE_RSS.
    for label, path in hostile_paths():
        rc, out, err, rss = run_measured(cmd, path, min(timeout, 10.0))
        tok = out.split()[0] if out.split() else ""
        if rc is None:
            problem = "a timeout"
        elif rss > HOSTILE_RSS:
            problem = "exit %d after a resident set of %d MiB" % (rc, rss >> 20)
        elif rc <= 0:
            problem = "exit %d" % rc
        elif rc == 1 and not (tok[:1] == "R" and tok[1:].isdigit()):
            # exit 1 is the protocol's "invalid", which needs a rule id (not an out-of-memory traceback)
            problem = "exit 1 without a rule id"
        else:
            problem = None
        if problem is None:
            passed += 1
            if verbose:
                print("PASS path-%s -> exit %d: %s" % (label, rc, (out + err).strip()[:100]))
        else:
            failed += 1
            print("FAIL path-%s: expected a prompt refusal (non-zero exit), got %s: %s %s"
                  % (label, problem, out.strip()[:200], err.strip()[-200:]))
    rng = random.Random(1234)
    if in_process:
        rounds = 3000 if opts["fuzz"] is None else opts["fuzz"]
        bad = fuzz_in_process(seeds, rounds, rng)
        bad += fuzz_verify_in_process(seeds, rounds // 3, rng)
    else:
        rounds = 300 if opts["fuzz"] is None else opts["fuzz"]
        bad = fuzz_command(cmd, seeds, rounds, rng, timeout)
    if bad:
        failed += 1
    else:
        passed += 1
        if verbose:
            print("PASS fuzz (%d mutations, no crash)" % rounds)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
