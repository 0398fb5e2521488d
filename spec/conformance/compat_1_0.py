#!/usr/bin/env python3
"""Section 10's promise, tested on the golden vectors: a 1.0 reader still reads every 1.1 file.

    python3 spec/conformance/compat_1_0.py [--manifest PATH]

Runs the frozen 1.0 reader (`tpack_reader_1_0.py`, kept as it was when format 1.0 was current) over every
vector of the manifest and checks:

  valid vector                  -> accepted, with the decoding a 1.0 reader must give (the 1.1 dtypes and
                                   metadata types are unknown codes to it: section 10 and 13), derived from
                                   the 1.1 reader's decoding;
  invalid vector of minor 0     -> the manifest's rule (1.1 changed nothing for 1.0 files);
  invalid vector of minor >= 1  -> the manifest's rule, or accepted: the file breaks a rule of 1.1 or 1.2
  (or holding a nested            that a 1.0 reader cannot know (it skips the extension, the 1.1 and 1.2
  container of minor >= 1)         codes and the signature group), so accepting is right; a different rule
                                   would be a compatibility bug.  Which containers are of minor >= 1 is read
                                   from the 1.0 reader's own decoding (a minor-0 file may hold a minor-2
                                   container that breaks R55: R39 for a 1.2 reader, valid for a 1.0 one).

One exception, of any minor: where the manifest says R13 and the 1.0 reader says R3 or R5, the file is one
whose damaged header reads as "needs a newer reader"; the header diagnosis of section 12, added after the
1.0 reader was frozen, makes that R13. Both reject the file; only the newer text names the damage.

Prints one line per vector that fails and a summary; exits non-zero on any failure or if no vector ran.
"""

import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import selftest        # noqa: E402  (the frozen reader's command and the 1.0 view of a decoding)
import tpack_reader    # noqa: E402

# What a reader without the header diagnosis of section 12 says of a damaged header that the diagnosis calls R13.
DIAGNOSED = ("R3", "R5")

DEFAULT_MANIFEST = os.path.normpath(os.path.join(HERE, "..", "vectors", "manifest.json"))


def any_newer(decoding_text):
    """Whether a decoding the 1.0 reader printed holds a container (at any depth) of minor >= 1."""
    try:
        doc = json.loads(decoding_text)
    except ValueError:
        return False
    stack = [doc]
    while stack:
        c = stack.pop()
        if c.get("version", [1, 0])[1] >= 1:
            return True
        stack.extend(e["container"] for e in c.get("entries", []) if "container" in e)
    return False


def main(argv):
    manifest_path = DEFAULT_MANIFEST
    if argv[:1] == ["--manifest"] and len(argv) == 2:
        manifest_path = argv[1]
    elif argv:
        sys.stderr.write("usage: compat_1_0.py [--manifest PATH]\n")
        return 2
    with open(manifest_path) as f:
        manifest = json.load(f)
    base = os.path.dirname(manifest_path)
    counts = {"valid": 0, "same rule": 0, "accepted 1.1-only": 0, "R3/R5 before the header diagnosis": 0}
    failed = 0
    for vector in manifest["vectors"]:
        path = os.path.join(base, vector["file"])
        with open(path, "rb") as f:
            data = f.read()
        rc, out, err = selftest.run_path(selftest.FROZEN_1_0_READER, path, 10.0)
        token = out.split()[0] if out.split() else ""
        if vector["valid"]:
            want = selftest.as_read_by_1_0(tpack_reader.open_container(memoryview(data), 0))
            try:
                ok = rc == 0 and json.loads(out) == want
            except ValueError:
                ok = False
            kind = "valid"
        else:
            minor = struct.unpack_from("<H", data, 10)[0] if len(data) >= 12 else 0
            if rc == 1 and token == vector["rule"]:
                ok, kind = True, "same rule"
            elif rc == 1 and vector["rule"] == "R13" and token in DIAGNOSED:
                ok, kind = True, "R3/R5 before the header diagnosis"
            else:
                ok, kind = rc == 0 and (minor >= 1 or any_newer(out)), "accepted 1.1-only"
        if ok:
            counts[kind] += 1
        else:
            failed += 1
            print("FAIL %s: the 1.0 reader said exit %s: %s %s"
                  % (vector["file"], rc, out.strip()[:200], err.strip()[-200:]))
    ran = sum(counts.values()) + failed
    print("1.0 reader over %d vectors: %d valid as 1.0 reads them, %d rejected with the same rule, "
          "%d of minor >= 1 accepted (a rule of 1.1 or 1.2 only), %d damaged headers named R3/R5 (R13 since the "
          "header diagnosis), %d failed"
          % (ran, counts["valid"], counts["same rule"], counts["accepted 1.1-only"],
             counts["R3/R5 before the header diagnosis"], failed))
    return 1 if failed or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
