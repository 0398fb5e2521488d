#!/usr/bin/env python3
"""tpack conformance harness (language-neutral, in the spirit of toml-test).

    python3 spec/conformance/run.py [--manifest PATH] [--filter SUBSTRING] [--timeout SECONDS] \\
        -- READER_CMD [ARGS...]

For every vector in the manifest, runs `READER_CMD ARGS... FILE` and checks:
  valid vector   -> exit 0, stdout is JSON structurally equal to the manifest's "decoding"
  invalid vector -> exit 1, first whitespace-separated token of stdout equals the manifest's "rule"
and, for each item of a vector's "verifications" list (format 1.2, signed containers: spec section 14),
runs `READER_CMD ARGS... --verify-signature KEYS.json POLICY.json FILE` with the item's "keys" and
"policy" written to two temporary files, and checks:
  verdict "ok"   -> exit 0, first token of stdout "ok"
  verdict "Rnn"  -> exit 1, first token of stdout "Rnn"
Prints "PASS <file>" or "FAIL <file>: <reason>" per vector (and "PASS <file> [verify K]" per
verification), then "N passed, M failed".
Exits non-zero if any vector failed or no vector was run.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MANIFEST = os.path.normpath(os.path.join(HERE, "..", "vectors", "manifest.json"))

USAGE = ("usage: run.py [--manifest PATH] [--filter SUBSTRING] [--timeout SECONDS] "
         "-- READER_CMD [ARGS...]\n")


def parse_args(argv):
    opts = {"manifest": DEFAULT_MANIFEST, "filter": None, "timeout": 10.0}
    if "--" in argv:
        split = argv.index("--")
        head, cmd = argv[:split], argv[split + 1:]
    else:
        head, cmd = argv, []
    i = 0
    while i < len(head):
        arg = head[i]
        key, eq, val = arg.partition("=")
        if key in ("--manifest", "--filter", "--timeout"):
            if not eq:
                if i + 1 >= len(head):
                    raise ValueError("%s needs a value" % key)
                i += 1
                val = head[i]
            opts[key[2:]] = val
        elif arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            sys.exit(0)
        elif not cmd and not arg.startswith("-"):
            # no "--": the rest is the reader command
            cmd = head[i:]
            break
        else:
            raise ValueError("unknown option %s" % arg)
        i += 1
    if not cmd:
        raise ValueError("no reader command given (put it after --)")
    opts["timeout"] = float(opts["timeout"])
    if opts["timeout"] <= 0:
        raise ValueError("--timeout must be positive")
    return opts, cmd


# JSON's kinds of value, by the Python type json.loads gives; bool before int, since a bool is an int in Python.
JSON_TYPES = ((type(None), "null"), (bool, "bool"), (int, "int"), (float, "float"), (str, "string"),
              (list, "array"), (dict, "object"))


def jtype(v):
    return next((name for t, name in JSON_TYPES if isinstance(v, t)), type(v).__name__)


def short(v, limit=60):
    s = json.dumps(v, sort_keys=True)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def diff(expected, got, path="$"):
    """First structural difference as a short string, or None when equal.
    Objects compare without regard to key order; arrays element by element;
    true/false never equal 1/0, and 1 never equals 1.0."""
    te, tg = jtype(expected), jtype(got)
    if te != tg:
        return "%s: expected %s %s, got %s %s" % (path, te, short(expected), tg, short(got))
    if te == "object":
        for k in sorted(expected):
            if k not in got:
                return "%s: missing key %s" % (path, json.dumps(k))
        for k in sorted(got):
            if k not in expected:
                return "%s: unexpected key %s" % (path, json.dumps(k))
        for k in sorted(expected):
            d = diff(expected[k], got[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if te == "array":
        for i, (e, g) in enumerate(zip(expected, got)):
            d = diff(e, g, "%s[%d]" % (path, i))
            if d:
                return d
        if len(expected) != len(got):
            return "%s: expected %d elements, got %d" % (path, len(expected), len(got))
        return None
    if expected != got:
        return "%s: expected %s, got %s" % (path, short(expected), short(got))
    return None


def one_line(text, limit=120):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def kill_group(proc):
    """Kill the reader we started (and anything it spawned in its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        try:
            proc.kill()
        except OSError:
            pass
    try:
        proc.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass


def run_cmd(argv, timeout):
    """-> (exit code, stdout, one-line stderr), or a reason string after a failure to run or a timeout."""
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return "cannot run reader: %s" % exc
    try:
        raw_out, raw_err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        return "timeout after %gs" % timeout
    return proc.returncode, raw_out.decode("utf-8", "replace"), one_line(raw_err.decode("utf-8", "replace"))


def check_verification(item, path, cmd, timeout, tmp):
    """One item of a vector's "verifications" (section 14, the kit protocol --verify-signature):
    -> None on pass, else a short reason."""
    if not isinstance(item, dict) or not isinstance(item.get("keys"), list) \
            or not isinstance(item.get("policy"), dict) or not isinstance(item.get("verdict"), str):
        return "manifest verification needs \"keys\" (a list), \"policy\" (an object) and \"verdict\""
    keys_path = os.path.join(tmp, "keys.json")
    policy_path = os.path.join(tmp, "policy.json")
    with open(keys_path, "w") as f:
        json.dump(item["keys"], f)
    with open(policy_path, "w") as f:
        json.dump(item["policy"], f)
    result = run_cmd(cmd + ["--verify-signature", keys_path, policy_path, path], timeout)
    if isinstance(result, str):
        return result
    rc, out, err = result
    tokens = out.split()
    first = tokens[0] if tokens else "(empty stdout)"
    verdict = item["verdict"]
    want_rc = 0 if verdict == "ok" else 1
    if rc not in (0, 1):
        return "expected %s, reader crashed (exit %d)%s" % (verdict, rc, ": " + err if err else "")
    if rc != want_rc or first != verdict:
        return "expected %s, got %s (exit %d)" % (verdict, one_line(out), rc)
    return None


def check(vector, base, cmd, timeout):
    """-> None on pass, else a short reason."""
    rel = vector.get("file")
    if not isinstance(rel, str):
        return "manifest entry has no \"file\""
    path = os.path.join(base, rel)
    if not os.path.isfile(path):
        return "vector file missing: %s" % path
    valid = vector.get("valid")
    if valid is not True and valid is not False:
        return "manifest entry has no boolean \"valid\""
    try:
        proc = subprocess.Popen(cmd + [path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return "cannot run reader: %s" % exc
    try:
        raw_out, raw_err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        return "timeout after %gs" % timeout
    out = raw_out.decode("utf-8", "replace")
    err = one_line(raw_err.decode("utf-8", "replace"))
    tokens = out.split()
    first = tokens[0] if tokens else "(empty stdout)"
    rc = proc.returncode
    if valid:
        if rc != 0:
            if rc == 1:
                return "expected valid, got %s (exit 1): %s" % (first, one_line(out))
            return "expected valid, reader crashed (exit %d)%s" % (rc, ": " + err if err else "")
        try:
            got = json.loads(out)
        except ValueError as exc:
            return "expected valid, stdout is not JSON (%s)" % exc
        if "decoding" not in vector:
            return "manifest entry has no \"decoding\""
        d = diff(vector["decoding"], got)
        return d
    rule = vector.get("rule")
    if rc == 0:
        return "expected %s, got valid (exit 0)" % rule
    if rc != 1:
        return "expected %s, reader crashed (exit %d)%s" % (rule, rc, ": " + err if err else "")
    if first != rule:
        return "expected %s, got %s" % (rule, one_line(out))
    return None


def main(argv):
    try:
        opts, cmd = parse_args(argv)
    except ValueError as exc:
        sys.stderr.write("run.py: %s\n%s" % (exc, USAGE))
        return 2
    manifest_path = os.path.abspath(opts["manifest"])
    try:
        with open(manifest_path, "rb") as f:
            manifest = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as exc:
        sys.stderr.write("run.py: cannot load manifest %s: %s\n" % (manifest_path, exc))
        print("0 passed, 0 failed")
        return 2
    vectors = manifest.get("vectors") if isinstance(manifest, dict) else None
    if not isinstance(vectors, list):
        sys.stderr.write("run.py: manifest has no \"vectors\" list\n")
        print("0 passed, 0 failed")
        return 2
    base = os.path.dirname(manifest_path)   # manifest paths are relative to spec/vectors/
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="tpack-run-") as tmp:
        for vector in vectors:
            name = vector.get("file", "?") if isinstance(vector, dict) else "?"
            if opts["filter"] and opts["filter"] not in str(name):
                continue
            results = [(name, check(vector, base, cmd, opts["timeout"]) if isinstance(vector, dict)
                        else "manifest entry is not an object")]
            verifications = vector.get("verifications", []) if isinstance(vector, dict) else []
            if not isinstance(verifications, list):
                results.append(("%s [verify]" % name, "\"verifications\" is not a list"))
                verifications = []
            for k, item in enumerate(verifications):
                path = os.path.join(base, str(name))
                results.append(("%s [verify %d]" % (name, k),
                                check_verification(item, path, cmd, opts["timeout"], tmp)))
            for label, reason in results:
                if reason is None:
                    passed += 1
                    print("PASS %s" % label)
                else:
                    failed += 1
                    print("FAIL %s: %s" % (label, reason))
            sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    if failed or passed + failed == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
