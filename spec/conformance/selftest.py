#!/usr/bin/env python3
"""Self-test of a tpack reader, independent of the golden vectors (by default of tpack_reader.py).

Contains a tiny canonical writer written from spec/FORMAT.md section 11, builds
valid containers, containers that break one rule and containers that break several
(where the first in the order of section 12 must be reported), runs the reader on each
(as a subprocess, through the command-line protocol of README.md) and checks the answer.
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
sys.path.insert(0, HERE)
import tpack_reader  # noqa: E402  (used in-process for the fuzz loop)

MAGIC = b"\x89TPK\r\n\x1a\n"
DT = {n: c for c, (n, _, _) in tpack_reader.DTYPES.items()}
MT = {n: c for c, n in tpack_reader.META_TYPES.items()}
SCALAR_MT = (1, 2, 3, 4)


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
    return 0, value      # unknown type: raw pool bytes


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
    newer = write([E("a", 42, (3,), b"xyz"), E("b", 0, (2, 2), b"1234")],
                  [("k", 77, b"\x01\x02"), ("s", "string", "v")], minor=1, header_len=168,
                  extra_header=b"ABCDEFGH")
    yield "valid/newer-minor", newer, {
        "version": [1, 1], "compat_flags": 0,
        "entries": [{"name": "a", "dtype": 42, "shape": [3], "offset": payload_offset(newer, 0),
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
    # entries
    yield "R22", write([E("a", 20, (4,), b"abcd")]), "R22"
    yield "R22-zero", write([E("a", 0, (4,), b"abcd")]), "R22"
    # section 10: an unknown dtype of a newer minor still gets R23, R24, R29-R32 and R33-R37
    yield "R23-unknown-dtype-newer", patch(write([E("a", 42, (3,), b"xyz")], minor=1),
                                           [(("d", 0), "rank", 9)]), "R23"
    yield "R24-unknown-dtype-newer", patch(write([E("a", 42, (3,), b"xyz")], minor=1),
                                           [(("d", 0), "dim3", 1)]), "R24"
    yield "R32-unknown-dtype-newer", write([E("a", 42, (3,), b"xyz", target=2 ** 64 - 2)], minor=1), "R32"
    yield "R36-unknown-dtype-newer", write([E("a", 42, (3,), b"xyz", extra_pad=1)], minor=1), "R36"
    yield "R27-not-for-unknown-dtype", write([E("a", 42, (), b"xyz")], minor=1), "valid"
    # sections 4.1, 10, 12 (R25): the element-count bound holds for an unknown dtype too;
    # only the byte-length part of R25 (and R26-R28) needs the element size
    yield "R25-unknown-dtype-newer", write([E("a", 42, (2 ** 63, 4), b"xyz")], minor=1), "R25"
    yield "R25-unknown-dtype-newer-partial", write([E("a", 42, (2 ** 40, 2 ** 40, 0), b"")], minor=1), "R25"
    yield "R25-unknown-dtype-newer-fits", write([E("a", 42, (2 ** 32, 2 ** 32 - 1), b"xyz")], minor=1), "valid"
    yield "R23", patch(base, [(("d", 0), "rank", 9)]), "R23"
    yield "R24", patch(base, [(("d", 0), "dim5", 1)]), "R24"
    yield "R25", write([E("a", "U8", (2 ** 32, 2 ** 32), b"")]), "R25"
    yield "R25-bytes", write([E("a", "U64", (2 ** 61,), b"")]), "R25"
    yield "R25-zero-dim", write([E("a", "U8", (2 ** 40, 2 ** 40, 0), b"")]), "R25"
    yield "R25-q8", write([E("a", "Q8_0", (2 ** 64 - 32,), b"")]), "R25"
    yield "R26-rank0", write([E("a", "Q8_0", (), b"\0" * 34)]), "R26"
    yield "R26-inner", write([E("a", "Q4_0", (33,), b"\0" * 18)]), "R26"
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
    yield "R36-empty-n0", grow_section(write(), 4, bytes(8)), "R36"
    yield "R37", write([E("a", pad_byte=7)]), "R37"
    # nesting
    yield "R38-depth9", nest(9), "R38"
    yield "R38-depth9-second", write([E("ok", "CONTAINER", (len(inner),), inner), E("deep", "CONTAINER", (len(nest(8)),), nest(8))]), "R38"
    bad_inner = write([E("")])
    yield "R39", write([E("c", "CONTAINER", (len(bad_inner),), bad_inner)]), "R39"
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
    yield "R46", write([], [("a", 11, b"")]), "R46"
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
    yield "R46-newer-ok", write([], [("a", 11, b"zz")], minor=1), "valid"
    yield "R46-newer-type-0", write([], [("a", 0, b"zz"), ("b", 0, b"")], minor=1), {
        "version": [1, 1], "compat_flags": 0, "entries": [],
        "metadata": [{"key": "a", "type": 0, "value": "7a7a"}, {"key": "b", "type": 0, "value": ""}]}
    # sections 10, 12 (R47): an unknown type of a newer minor still needs a zero reserved
    # byte and a zero inline value, and its value at the running pool position
    yield "R47-newer-unknown-reserved", patch(write([], [("a", 11, b"zz")], minor=1),
                                              [(("m", 0), "reserved", 9)]), "R47"
    yield "R47-newer-unknown-value", patch(write([], [("a", 11, b"zz")], minor=1),
                                           [(("m", 0), "value", 5)]), "R47"
    yield "R47-newer-unknown-value-empty", patch(write([], [("a", 11, b"")], minor=1),
                                                 [(("m", 0), "value", 1)]), "R47"
    yield "R41-newer-unknown-at-0", patch(write([], [("a", 11, b"")], minor=1),
                                          [(("m", 0), "value_offset", 0)]), "R41"
    yield "R40-newer-unknown-past-pool", patch(write([], [("a", 11, b"zz")], minor=1),
                                               [(("m", 0), "value_len", 3)]), "R40"
    yield "R46-before-R47-reserved", patch(write([], [("a", 11, b"zz")]), [(("m", 0), "reserved", 9)]), "R46"
    yield "R47-newer-known-reserved", patch(write([], [("a", "string", "zz")], minor=1),
                                            [(("m", 0), "reserved", 9)]), "R47"
    # order inside the metadata group is the reader's choice (note A3): this reader checks the
    # type-independent reserved byte before the value's R40; the type-specific R47 parts after R40
    yield "choice-R47-reserved-before-R40", patch(write([], [("a", "string", "x")]),
                                                  [(("m", 0), "value_len", 9), (("m", 0), "reserved", 1)]), "R47"
    yield "R40-before-R47-inline-value", patch(write([], [("a", "string", "x")]),
                                               [(("m", 0), "value_len", 9), (("m", 0), "value", 1)]), "R40"
    yield "R47-before-R40", patch(write([], [("a", "u64[]", [1])]), [(("m", 0), "value_len", 12)]), "R40"
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


DEFAULT_READER = [sys.executable, READER]
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
