#!/usr/bin/env python3
"""Differential fuzz: another reader against tpack_reader.py, on mutations of the signed selftest files.

    python3 spec/conformance/differential.py [--rounds N] [--seed S] -- READER_CMD [ARGS...]

Builds the signed containers of selftest.py (section 14: valid ones, attacks, files that break R54-R57),
mutates them as the selftest's fuzz does, and gives each mutation to READER_CMD twice — as a plain reader
(`READER_CMD FILE`) and as a verifier (`READER_CMD --verify-signature KEYS.json POLICY.json FILE`, with
two test keys trusted and one known by its id only, a signature required, counter floor 3) — and to
tpack_reader.py in-process. The two must agree on valid/invalid and on the rule id. Prints each
disagreement (and keeps its file in a temporary directory), then "N rounds, M disagreements"; exits 1 on any.
Needs the Python package `cryptography`.
"""

import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import selftest      # noqa: E402
import tpack_reader  # noqa: E402

USAGE = "usage: differential.py [--rounds N] [--seed S] -- READER_CMD [ARGS...]\n"


def first_token(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
    tokens = p.stdout.split()
    return p.returncode, tokens[0] if tokens else ""


def python_verdict(data, keys, policy):
    """(exit code, token) as the protocol has them: plain mode when keys is None."""
    try:
        if keys is None:
            tpack_reader.read_container(data)
        else:
            tpack_reader.verify_signed(data, keys, policy)
        return 0, "ok"
    except tpack_reader.Invalid as exc:
        return 1, exc.rule


def main(argv):
    if "--" not in argv:
        sys.stderr.write(USAGE)
        return 2
    split = argv.index("--")
    opts, cmd = argv[:split], argv[split + 1:]
    rounds, seed = 1000, 7
    while opts:
        if len(opts) < 2 or opts[0] not in ("--rounds", "--seed"):
            sys.stderr.write(USAGE)
            return 2
        if opts[0] == "--rounds":
            rounds = int(opts[1])
        else:
            seed = int(opts[1])
        opts = opts[2:]
    if not cmd:
        sys.stderr.write(USAGE)
        return 2
    seeds = [case[1] for case in selftest.verify_cases()] + [case[1] for case in selftest.cases_1_2()]
    trusted = [selftest.test_key("ed-a").trusted(), selftest.test_key("p-a").trusted(),
               selftest.test_key("ed-b").trusted(hash_only=True)]
    policy = {"require_signature": True, "min_counter": 3, "subject": None}
    tmp = tempfile.mkdtemp(prefix="tpack-differential-")
    keys_path, policy_path = os.path.join(tmp, "keys.json"), os.path.join(tmp, "policy.json")
    with open(keys_path, "w") as f:
        json.dump(trusted, f)
    with open(policy_path, "w") as f:
        json.dump(policy, f)
    keys = tpack_reader.load_keys(keys_path)
    policy = tpack_reader.load_policy(policy_path)
    path = os.path.join(tmp, "input.tpack")
    disagreements = 0
    for r, data in selftest.mutations(seeds, rounds, random.Random(seed)):
        with open(path, "wb") as f:
            f.write(data)
        for mode, args, k in (("plain", [], None), ("verify", ["--verify-signature", keys_path, policy_path], keys)):
            rc, tok = first_token(cmd + args + [path])
            want_rc, want_tok = python_verdict(data, k, policy)
            if rc != want_rc or (rc == 1 and tok != want_tok):
                disagreements += 1
                kept = os.path.join(tmp, "round-%d-%s.tpack" % (r, mode))
                with open(kept, "wb") as f:
                    f.write(data)
                print("DISAGREE round %d (%s): reader exit %s %s, tpack_reader.py exit %d %s; file %s"
                      % (r, mode, rc, tok, want_rc, want_tok, kept))
    print("%d rounds, %d disagreements" % (rounds, disagreements))
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
