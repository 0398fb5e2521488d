"""Shared fixtures: the repository, its golden vectors, and the `tpack` CLI binary."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "spec" / "vectors"


def manifest():
    return json.loads((VECTORS / "manifest.json").read_text())["vectors"]


@pytest.fixture(scope="session")
def cli() -> str:
    """The `tpack` binary: $TPACK_CLI, else the workspace's debug build. CI sets TPACK_REQUIRE_CLI=1."""
    candidates = [os.environ.get("TPACK_CLI"), str(REPO / "target" / "debug" / "tpack"), shutil.which("tpack")]
    for c in candidates:
        if c and Path(c).is_file():
            return c
    if os.environ.get("TPACK_REQUIRE_CLI") == "1":
        pytest.fail("the tpack CLI is required (TPACK_REQUIRE_CLI=1) but was not found; cargo build -p tpack-cli")
    pytest.skip("the tpack CLI is not built (cargo build -p tpack-cli)")


def run_cli(cli: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([cli, *args], capture_output=True, text=True)


def require_framework(package: str):
    """``package`` imported (torch, jax), or the whole test module skipped with the reason; CI sets
    TPACK_REQUIRE_FRAMEWORKS=1, which makes a missing framework a failure instead."""
    try:
        return importlib.import_module(package)
    except ImportError as e:
        if os.environ.get("TPACK_REQUIRE_FRAMEWORKS") == "1":
            pytest.fail(f"TPACK_REQUIRE_FRAMEWORKS=1 but {package} cannot be imported ({e})", pytrace=False)
        pytest.skip(f"{package} is not installed (pip install {package}; CI sets TPACK_REQUIRE_FRAMEWORKS=1)",
                    allow_module_level=True)


def mapping_of(address: int):
    """The line of /proc/self/maps whose range holds ``address``, split in fields, or ``None`` (Linux only)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if start <= address < end:
                return fields
    return None
