"""Hostile files never crash the interpreter: every vector damaged in many ways, read through the whole
API in a child process, which must exit normally."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

import tpack
from conftest import VECTORS, manifest

CHILD = textwrap.dedent("""
    import random, sys, pathlib
    import tpack
    random.seed(int(sys.argv[1]))
    # The signed vectors' key, trusted by hash only and by its raw key: the policy path reads the signed
    # attributes, the digests and the signature of every damaged copy too.
    algorithm, key_id, raw = sys.argv[2], sys.argv[3], bytes.fromhex(sys.argv[4])
    keys = [tpack.TrustedKey(algorithm, key_id), tpack.TrustedKey(algorithm, key_id, raw)]
    files = [pathlib.Path(p).read_bytes() for p in sys.argv[5:]]
    outcomes = {"ok": 0, "error": 0, "authenticated": 0}
    def exercise(c, depth=0):
        c.keys(); c.metadata(); c.metadata(typed=True); repr(c)
        for e in c.entries():
            a = c.get(e.name)
            bytes(a.tobytes()[:64])
            if e.dtype == "CONTAINER" and depth < 10:
                exercise(c.nested(e.name), depth + 1)
        c.verify()
    for data in files:
        for _ in range(60):
            buf = bytearray(data)
            kind = random.randrange(4)
            if kind == 0 and buf:
                for _ in range(random.randint(1, 8)):
                    buf[random.randrange(len(buf))] = random.randrange(256)
            elif kind == 1:
                del buf[random.randrange(len(buf) + 1):]
            elif kind == 2 and buf:
                i = random.randrange(len(buf)); buf[i:i + 8] = b"\\xff" * 8
            else:
                buf += bytes(random.randrange(1, 64))
            try:
                exercise(tpack.open_bytes(bytes(buf)))
                outcomes["ok"] += 1
            except tpack.TpackError:
                outcomes["error"] += 1
            try:
                c = tpack.open_bytes(bytes(buf), keys=keys[random.randrange(2):], require_signature=False)
                outcomes["authenticated"] += c.signer is not None and c.signer.authenticated
                exercise(c)
            except tpack.TpackError:
                pass
    print(outcomes["ok"], outcomes["error"], outcomes["authenticated"])
""")


def test_damaged_vectors_never_crash_the_interpreter():
    vectors = manifest()
    files = [str(VECTORS / v["file"]) for v in vectors]
    key = next(k for v in vectors for case in v.get("verifications", []) for k in case["keys"]
               if k["algorithm"] == 1 and k["public_key"] is not None)
    child = subprocess.run([sys.executable, "-c", CHILD, "17", "ed25519", key["key_id"], key["public_key"], *files],
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr[-2000:]
    ok, errors, authenticated = map(int, child.stdout.split())
    assert errors > 0 and ok + errors == 60 * len(files)
    # Damage past the prefix leaves the signature valid: those copies open and fail on reads (R64, R50, …).
    assert authenticated > 0


def test_files_that_are_not_containers_raise(tmp_path):
    for content, rule in [(b"", "R1"), (b"x" * 159, "R1"), (b"\x00" * 4096, "R2")]:
        path = tmp_path / "f.tpack"
        path.write_bytes(content)
        try:
            tpack.open(path)
        except tpack.FormatError as e:
            assert e.rule == rule
        else:
            raise AssertionError("opened")
    try:
        tpack.open(tmp_path / "missing.tpack")
    except FileNotFoundError as e:
        assert e.filename == str(tmp_path / "missing.tpack")
    try:
        tpack.open(tmp_path)
    except OSError:
        pass
    else:
        raise AssertionError("opened a directory")


def test_names_from_files_are_escaped_in_messages():
    name = "evil\x1b[2J\n\u202e"
    data = bytearray(tpack.save_bytes({name: np.ones(4, np.float32)}))
    with tpack.open_bytes(bytes(data)) as c:
        offset = c.entry(name).offset
    data[offset] ^= 0xFF
    with tpack.open_bytes(bytes(data)) as c:
        try:
            c.verify()
        except tpack.IntegrityError as e:
            assert e.entry_name == name
            assert "\x1b" not in str(e) and "\n" not in str(e) and "\u202e" not in str(e)
            assert repr(name) in str(e)
        else:
            raise AssertionError("verified")
