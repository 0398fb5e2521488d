#!/usr/bin/env bash
# The Python package's CI: build the abi3 wheel, install it into a fresh venv with the pinned test
# dependencies, and run the pytest suite against the installed wheel (not the source tree). Fails loudly.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=target/python-ci-venv
WHEELS=target/python-wheels
PIP=(--quiet --disable-pip-version-check)

# The binding's own lints (the root's clippy covers the default members only, which leave python/ out).
cargo clippy -q -p tpack-python --all-targets -- -D warnings

rm -rf "$VENV" "$WHEELS"
python3 -m venv "$VENV"
"$VENV/bin/pip" install "${PIP[@]}" maturin==1.9.6
(cd python && "../$VENV/bin/maturin" build --release --out "../$WHEELS")
wheel=$(ls "$WHEELS"/tpack_weights-*-cp39-abi3-*.whl)  # one wheel for every CPython >= 3.9 on this platform
echo "built $wheel"

# The CLI converts the test models and verifies what `tpack.save` wrote.
cargo build -q -p tpack-cli

"$VENV/bin/pip" install "${PIP[@]}" "$wheel" pytest==8.4.2 numpy==2.4.6 ml_dtypes==0.5.3 safetensors==0.8.0 gguf==0.19.0
# From the tests' folder, so that `import tpack` can only find the installed wheel.
cd python/tests
"../../$VENV/bin/python" -c 'import tpack, sys; assert "site-packages" in tpack.__file__, tpack.__file__'
TPACK_CLI="$PWD/../../target/debug/tpack" TPACK_REQUIRE_CLI=1 \
  "../../$VENV/bin/python" -m pytest -q -p no:cacheprovider -W error::pytest.PytestUnraisableExceptionWarning
