"""Shared fixtures: the repository, its golden vectors, and the `tpack` CLI binary."""

from __future__ import annotations

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
