"""Signed containers (format 1.2, spec §14) through the Python API: signing on save, the policy checked on
open (R58–R63), each entry's digest checked the first time it is read (R64), attacks refused with their rule,
keys from openssl, and the verdicts of the golden vectors' `verifications`."""

from __future__ import annotations

import hashlib
import pickle
import pydoc
import shutil
import struct
import subprocess
import zlib

import numpy as np
import pytest

import tpack
from conftest import VECTORS, manifest, run_cli

TENSORS = {"a": np.arange(64, dtype=np.float32), "b": np.arange(12, dtype=np.int16).reshape(3, 4),
           "c": np.ones(5, np.uint8)}
ALGORITHMS = ("ed25519", "p256")
#: Where the header locates the trailer (spec §3): offset and length, u64 each.
TRAILER_SECTION_AT = 136


@pytest.fixture(scope="module")
def keys():
    """Two private keys per algorithm, as PEM text."""
    return {alg: (tpack.generate_key(alg), tpack.generate_key(alg)) for alg in ALGORITHMS}


@pytest.fixture
def signed(keys):
    """A container signed with the first Ed25519 key, counter 5, subject `acme.kws`."""
    return tpack.save_bytes(TENSORS, metadata={"arch": "mlp"}, sign_key=keys["ed25519"][0], counter=5,
                            subject="acme.kws")


def public(key: str) -> str:
    return tpack.public_key_pem(key)


def forge_payload(data: bytes, name: str, at: int = 0) -> bytes:
    """`data` with byte `at` of entry `name`'s payload changed and every CRC recomputed: the entry's, and the
    trailer's own (the header checksum does not cover the trailer), as an attacker would."""
    buf = bytearray(data)
    with tpack.open_bytes(data) as c:
        e, n = c.entry(name), len(c)
    buf[e.offset + at] ^= 0x01
    trailer, _ = struct.unpack_from("<QQ", buf, TRAILER_SECTION_AT)
    struct.pack_into("<I", buf, trailer + 4 * e.position, zlib.crc32(buf[e.offset:e.offset + e.nbytes]))
    struct.pack_into("<I", buf, trailer + 4 * n, zlib.crc32(buf[trailer:trailer + 4 * n]))
    return bytes(buf)


# -- round trips ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("alg", ALGORITHMS)
def test_a_signed_container_round_trips(tmp_path, keys, alg):
    key = keys[alg][0]
    path = tmp_path / "m.tpack"
    tpack.save(path, TENSORS, metadata={"arch": "mlp"}, sign_key=key, counter=7, subject="acme.kws")
    with tpack.open(path, keys=[public(key)], min_counter=7, subject="acme.kws") as f:
        assert f.version == (1, 2) and f.compat_flags & 1
        assert f.keys() == [*TENSORS, "tpack.signature"]
        s = f.signer
        assert (s.algorithm, s.counter, s.subject, s.public_key, s.authenticated) == (alg, 7, "acme.kws", None, True)
        assert s.key_id == tpack.TrustedKey.from_pem(key).key_id and len(bytes.fromhex(s.key_id)) == 32
        for name, array in TENSORS.items():
            assert np.array_equal(f.get(name), array)
        assert f.metadata()["arch"] == "mlp" and f.metadata()["tpack.sig.counter"] == 7
        f.verify()
    loaded = tpack.load(path, keys=[public(key)])
    assert all(np.array_equal(loaded[n], a) for n, a in TENSORS.items())


def test_without_a_policy_the_signer_is_a_claim(signed):
    with tpack.open_bytes(signed) as f:
        s = f.signer
        assert (s.algorithm, s.counter, s.subject, s.authenticated) == ("ed25519", 5, "acme.kws", False)
        f.verify()
    with tpack.open_bytes(tpack.save_bytes(TENSORS)) as f:
        assert f.signer is None and f.version[1] < 2


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_signing_twice_gives_the_same_bytes(tmp_path, keys, alg):
    key = keys[alg][0]
    once = tpack.save_bytes(TENSORS, sign_key=key, counter=3, embed_public_key=True)
    assert tpack.save_bytes(TENSORS, sign_key=key, counter=3, embed_public_key=True) == once
    tpack.save(tmp_path / "m.tpack", TENSORS, sign_key=key.encode(), counter=3, embed_public_key=True)
    assert (tmp_path / "m.tpack").read_bytes() == once
    # Another key or counter signs differently.
    assert tpack.save_bytes(TENSORS, sign_key=keys[alg][1], counter=3, embed_public_key=True) != once
    assert tpack.save_bytes(TENSORS, sign_key=key, counter=4, embed_public_key=True) != once


def test_a_key_is_pem_text_bytes_or_a_path(tmp_path, keys):
    key = keys["ed25519"][0]
    (tmp_path / "k.pem").write_text(key)
    (tmp_path / "k.pub").write_text(public(key))
    data = tpack.save_bytes(TENSORS, sign_key=tmp_path / "k.pem")
    assert data == tpack.save_bytes(TENSORS, sign_key=str(tmp_path / "k.pem")) == tpack.save_bytes(
        TENSORS, sign_key=key.encode())
    for trusted in (tmp_path / "k.pub", str(tmp_path / "k.pub"), public(key), public(key).encode(), key,
                    tpack.TrustedKey.from_pem(tmp_path / "k.pub")):
        with tpack.open_bytes(data, keys=[trusted]) as f:
            assert f.signer.authenticated
    with tpack.open_bytes(data, keys=tmp_path / "k.pub") as f:  # one key where a list was expected
        assert f.signer.authenticated


def test_a_key_that_only_its_id_names_needs_the_public_key_in_the_file(keys):
    key = keys["ed25519"][0]
    by_id = tpack.TrustedKey("ed25519", tpack.TrustedKey.from_pem(key).key_id)
    with tpack.open_bytes(tpack.save_bytes(TENSORS, sign_key=key, embed_public_key=True), keys=[by_id]) as f:
        assert f.signer.public_key == tpack.TrustedKey.from_pem(key).public_key
        f.verify()
    with pytest.raises(tpack.SignatureError) as info:
        tpack.open_bytes(tpack.save_bytes(TENSORS, sign_key=key), keys=[by_id])
    assert info.value.rule == "R59"


# -- the policy at open: R58 to R63 ---------------------------------------------------------------------------

def refused(data: bytes, rule: str, **policy) -> tpack.SignatureError:
    with pytest.raises(tpack.SignatureError) as info:
        tpack.open_bytes(data, **policy)
    err = info.value
    assert (err.rule, str(err).split(" ")[0]) == (rule, rule) and err.rule_name in str(err)
    assert isinstance(err, tpack.TpackError) and not isinstance(err, (tpack.FormatError, tpack.IntegrityError))
    return err


def test_a_stripped_container_is_refused_when_a_signature_is_required(keys, signed):
    stripped = tpack.save_bytes(TENSORS, metadata={"arch": "mlp"})  # what removing the signature leaves
    pub = public(keys["ed25519"][0])
    refused(stripped, "R58", keys=[pub])
    refused(stripped, "R58", require_signature=True)
    with tpack.open_bytes(stripped, keys=[pub], require_signature=False) as f:
        assert f.signer is None
        f.verify()


def test_another_key_is_refused(keys, signed):
    refused(signed, "R59", keys=[public(keys["ed25519"][1])])
    refused(signed, "R59", keys=[public(keys["p256"][0])])
    refused(signed, "R59", keys=[])
    refused(signed, "R59", min_counter=0)  # a policy without keys trusts no signer
    with tpack.open_bytes(signed, keys=[public(keys["ed25519"][1]), public(keys["ed25519"][0])]) as f:
        assert f.signer.authenticated


def test_a_lower_counter_is_refused(keys, signed):
    pub = public(keys["ed25519"][0])
    err = refused(signed, "R62", keys=[pub], min_counter=6)
    assert err.value == 5 and "counter 5" in str(err)
    with tpack.open_bytes(signed, keys=[pub], min_counter=5) as f:  # the same release may be installed again
        assert f.signer.counter == 5


def test_another_subject_is_refused(keys, signed):
    pub = public(keys["ed25519"][0])
    refused(signed, "R61", keys=[pub], subject="acme.asr")
    refused(signed, "R61", keys=[tpack.TrustedKey.from_pem(pub, subject="acme.asr")])
    refused(tpack.save_bytes(TENSORS, sign_key=keys["ed25519"][0]), "R61", keys=[pub], subject="acme.kws")
    with tpack.open_bytes(signed, keys=[tpack.TrustedKey.from_pem(pub, subject="acme.kws")], subject="acme.kws"):
        pass


def test_a_changed_signature_is_refused(keys, signed):
    with tpack.open_bytes(signed) as f:
        sig = f.entry("tpack.signature")
    forged = bytearray(signed)
    forged[sig.offset + sig.nbytes - 1] ^= 0x80
    refused(bytes(forged), "R63", keys=[public(keys["ed25519"][0])])


def test_a_signature_error_pickles_with_its_context(keys, signed):
    err = refused(signed, "R62", keys=[public(keys["ed25519"][0])], min_counter=9)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is tpack.SignatureError and (back.rule, back.value, str(back)) == ("R62", 5, str(err))


# -- each entry on first use: R64 --------------------------------------------------------------------------

def test_a_changed_payload_with_every_crc_recomputed_is_refused_when_that_tensor_is_read(keys, signed):
    forged = forge_payload(signed, "b")
    with tpack.open_bytes(forged) as f:
        f.verify()  # the CRCs cannot tell: that is the attack
    pub = public(keys["ed25519"][0])
    with tpack.open_bytes(forged, keys=[pub], min_counter=5) as f:  # the prefix is intact: open succeeds
        assert np.array_equal(f.get("a"), TENSORS["a"]) and np.array_equal(f["c"], TENSORS["c"])
        for read in (lambda: f.get("b"), lambda: f["b"], lambda: f.get_slice("b")[0], lambda: dict(f.items())):
            with pytest.raises(tpack.SignatureError) as info:
                read()
            err = info.value
            assert (err.rule, err.rule_name, err.entry, err.entry_name) == ("R64", "EntryDigest", 1, "b")
            assert "entry 1" in str(err) and "'b'" in str(err)
    with tpack.open_bytes(forged, keys=[pub]) as f:
        with pytest.raises(tpack.SignatureError) as info:
            f.verify()
        assert (info.value.rule, info.value.entry, info.value.entry_name) == ("R64", 1, "b")
    with pytest.raises(tpack.SignatureError) as info:
        tpack.load_bytes(forged, keys=[pub])
    assert info.value.rule == "R64"


def test_verify_with_progress_reports_the_digest_too(keys, signed):
    seen = []
    with tpack.open_bytes(forge_payload(signed, "c"), keys=[public(keys["ed25519"][0])]) as f:
        with pytest.raises(tpack.SignatureError) as info:
            f.verify(progress=lambda done, total: seen.append(done))
    assert (info.value.rule, info.value.entry_name) == ("R64", "c") and seen


def test_an_entry_is_checked_once(tmp_path, keys):
    """The first read hashes the entry; later reads do not (a change made in between goes unseen by them),
    while verify() hashes everything again."""
    path = tmp_path / "m.tpack"
    key = keys["ed25519"][0]
    tpack.save(path, TENSORS, sign_key=key)
    with tpack.open(path, keys=[public(key)]) as f:
        first = f.get("a").copy()
        offset = f.entry("a").offset
        with open(path, "r+b") as raw:  # rewritten in place, under the map
            raw.seek(offset)
            raw.write(b"\x00\x00\x80\x7f")
        assert f.get("a")[0] != first[0]  # the map shows the change, and no check ran again
        with pytest.raises(tpack.SignatureError) as info:
            f.verify()
        assert (info.value.rule, info.value.entry_name) == ("R64", "a")
    with tpack.open(path, keys=[public(key)]) as f:  # a fresh open checks on first read
        with pytest.raises(tpack.SignatureError):
            f.get("a")


def test_threads_reading_at_once_each_get_their_verdict(keys):
    """The first reads of entries race on several threads (hashing runs without the GIL): each read of the
    forged entry raises, every other read returns its tensor."""
    from concurrent.futures import ThreadPoolExecutor
    key = keys["ed25519"][0]
    tensors = {f"t{i}": np.full(1 << 16, i, np.float32) for i in range(32)}
    forged = forge_payload(tpack.save_bytes(tensors, sign_key=key), "t7", 100)

    def read(name):
        try:
            return float(f.get(name)[0])
        except tpack.SignatureError as e:
            return e.rule, e.entry_name

    with tpack.open_bytes(forged, keys=[public(key)]) as f:
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(read, [n for n in tensors for _ in range(3)]))
    expected = [("R64", "t7") if n == "t7" else float(i) for i, n in enumerate(tensors) for _ in range(3)]
    assert results == expected


def test_an_unsigned_container_a_policy_allows_is_checked_by_crc_on_first_read(tmp_path):
    data = bytearray(tpack.save_bytes(TENSORS))
    with tpack.open_bytes(bytes(data)) as f:
        data[f.entry("b").offset] ^= 1
    with tpack.open_bytes(bytes(data), require_signature=False) as f:
        f.get("a")
        with pytest.raises(tpack.IntegrityError) as info:
            f.get("b")
        assert (info.value.rule, info.value.entry_name) == ("R50", "b")
    with tpack.open_bytes(bytes(data)) as f:
        f.get("b")  # without a policy, reading checks nothing (verify() does)


def test_a_nested_container_is_checked_as_an_entry_and_by_its_own_policy_when_asked(keys):
    inner_key, outer_key = keys["ed25519"]
    inner = tpack.save_bytes({"w": np.ones(4, np.float32)}, sign_key=inner_key, counter=2)
    outer = tpack.save_bytes({"inner": tpack.Typed("CONTAINER", np.frombuffer(inner, np.uint8)),
                              "x": np.zeros(3, np.int8)}, sign_key=outer_key)
    with tpack.open_bytes(outer, keys=[public(outer_key)]) as f:
        assert f.nested("inner").signer.authenticated is False
        n = f.nested("inner", keys=[public(inner_key)], min_counter=2)
        assert n.signer.authenticated and np.array_equal(n.get("w"), np.ones(4))
        with pytest.raises(tpack.SignatureError) as info:
            f.nested("inner", keys=[public(outer_key)])
        assert info.value.rule == "R59"
        f.verify()
    with tpack.open_bytes(inner) as f:
        at = f.entry("w").offset  # a payload byte of the inner container: its structure stays valid
    forged = forge_payload(outer, "inner", at)
    with tpack.open_bytes(forged, keys=[public(outer_key)]) as f:
        with pytest.raises(tpack.SignatureError) as info:
            f.nested("inner")
        assert (info.value.rule, info.value.entry_name) == ("R64", "inner")


def test_the_cli_reads_what_save_signed(tmp_path, cli, keys):
    path = tmp_path / "m.tpack"
    tpack.save(path, TENSORS, sign_key=keys["p256"][0], counter=2, subject="acme.kws")
    result = run_cli(cli, "verify", str(path))
    assert result.returncode == 0, result.stderr


# -- what signing refuses ----------------------------------------------------------------------------------

def test_bad_signing_requests_are_refused(tmp_path, keys):
    key = keys["ed25519"][0]
    with pytest.raises(ValueError, match="PEM key"):
        tpack.save_bytes(TENSORS, sign_key=public(key))  # a public key cannot sign
    with pytest.raises(ValueError, match="sign_key"):
        tpack.save_bytes(TENSORS, counter=3)
    with pytest.raises(FileNotFoundError):
        tpack.save_bytes(TENSORS, sign_key=tmp_path / "missing.pem")
    for subject in ("", "x" * 256):
        with pytest.raises(tpack.FormatError) as info:
            tpack.save_bytes(TENSORS, sign_key=key, subject=subject)
        assert info.value.rule == "R56"
    tpack.save_bytes(TENSORS, sign_key=key, subject="x" * 255)
    with pytest.raises(tpack.FormatError) as info:
        tpack.save_bytes(TENSORS, metadata={"tpack.sig.counter": 9}, sign_key=key)
    assert info.value.rule == "R54"
    with pytest.raises(tpack.FormatError) as info:
        tpack.save(tmp_path / "m.tpack", TENSORS, sign_key=key, subject="")
    assert not (tmp_path / "m.tpack").exists()
    with pytest.raises(ValueError):
        tpack.generate_key("rsa")


def test_trusted_keys_are_checked(keys):
    k = tpack.TrustedKey.from_pem(keys["p256"][0])
    assert k.algorithm == "p256" and len(k.public_key) == 65 and k.public_key[0] == 4
    assert tpack.TrustedKey.from_public_key("p256", k.public_key) == k
    with pytest.raises(ValueError):
        tpack.TrustedKey.from_public_key("p256", k.public_key[:33])
    with pytest.raises(ValueError):
        tpack.TrustedKey("ed25519", k.key_id[:10])
    with pytest.raises(TypeError):
        tpack.TrustedKey("ed25519", k.key_id, "not bytes")
    with pytest.raises(ValueError):
        tpack.TrustedKey("rsa", k.key_id)
    with pytest.raises(ValueError):
        tpack.TrustedKey.from_public_key("ed25519", b"\x01" * 31)
    with pytest.raises(TypeError):
        tpack.open_bytes(tpack.save_bytes(TENSORS), keys=[42])


# -- keys from openssl ---------------------------------------------------------------------------------------

OPENSSL_GENPKEY = {"ed25519": ["-algorithm", "ed25519"],
                   "p256": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]}


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
@pytest.mark.parametrize("alg", ALGORITHMS)
def test_keys_from_openssl_sign_and_verify(tmp_path, alg):
    private, pub = tmp_path / "key.pem", tmp_path / "pub.pem"
    subprocess.run(["openssl", "genpkey", *OPENSSL_GENPKEY[alg], "-out", str(private)], check=True)
    subprocess.run(["openssl", "pkey", "-in", str(private), "-pubout", "-out", str(pub)], check=True)
    der = subprocess.run(["openssl", "pkey", "-pubin", "-in", str(pub), "-outform", "DER"], check=True,
                         capture_output=True).stdout
    tpack.save(tmp_path / "m.tpack", TENSORS, sign_key=private, counter=1)
    with tpack.open(tmp_path / "m.tpack", keys=[pub], min_counter=1) as f:
        assert f.signer.key_id == hashlib.sha256(der).hexdigest()  # what `openssl ... | sha256sum` prints
        assert f.signer.algorithm == alg
        f.verify()
    assert tpack.public_key_pem(private).strip() == pub.read_text().strip()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
@pytest.mark.parametrize("alg", ALGORITHMS)
def test_openssl_reads_the_keys_generate_key_writes(tmp_path, alg):
    (tmp_path / "ours.pem").write_text(tpack.generate_key(alg))
    subprocess.run(["openssl", "pkey", "-in", str(tmp_path / "ours.pem"), "-noout"], check=True)


# -- the golden vectors' verifications ------------------------------------------------------------------------

ALGORITHM_NAMES = {1: "ed25519", 2: "p256"}
VERIFICATIONS = [(v["file"], i, case) for v in manifest() for i, case in enumerate(v.get("verifications", []))]


def verdict(path, case) -> str:
    """The kit's verdict through the package: the policy on open, then every entry (spec §14's order)."""
    trusted = [tpack.TrustedKey(ALGORITHM_NAMES[k["algorithm"]], k["key_id"],
                                None if k["public_key"] is None else bytes.fromhex(k["public_key"]), k["subject"])
               for k in case["keys"]]
    policy = case["policy"]
    try:
        with tpack.open(path, keys=trusted, require_signature=policy["require_signature"],
                        min_counter=policy["min_counter"], subject=policy["subject"]) as f:
            f.verify()
    except tpack.SignatureError as e:
        return e.rule
    return "ok"


def test_the_manifest_has_verifications_with_every_verdict():
    verdicts = {case["verdict"] for _, _, case in VERIFICATIONS}
    assert verdicts == {"ok", *(f"R{n}" for n in range(58, 65))}


@pytest.mark.parametrize("file,index,case", VERIFICATIONS, ids=[f"{f}#{i}" for f, i, _ in VERIFICATIONS])
def test_a_golden_vector_verification_gives_its_verdict(file, index, case):
    assert verdict(VECTORS / file, case) == case["verdict"]


def test_help_describes_signing():
    text = pydoc.render_doc(tpack.open)
    assert all(word in text for word in ("keys", "min_counter", "R58", "R63", "R64", "first time"))
    assert "sign_key" in tpack.save.__doc__ and "openssl genpkey" in tpack.save.__doc__
    for fn in (tpack.generate_key, tpack.public_key_pem, tpack.TrustedKey, tpack.TrustedKey.from_pem, tpack.Signer,
               tpack.SignatureError, tpack.Container.signer):
        assert fn.__doc__ and len(fn.__doc__) > 60, fn
    assert "Signing and verifying" in tpack.__doc__
