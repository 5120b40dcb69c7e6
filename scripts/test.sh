#!/usr/bin/env bash
# Runs the gates and the whole test suite: formatting and lints (cargo fmt, clippy, ruff, mypy), the Rust
# core without Python (cargo test), then pytest (API, CLI, service, converter, benchmark generator; real
# models from the installed packages). Run scripts/bootstrap.sh first; this sets up what only the tests need
# (scripts/test-setup.sh: about 6 minutes the first time, seconds after).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

bash scripts/test-setup.sh

bash scripts/vendor-lancedb.sh
cargo fmt --check
"$PY" -m ruff check python tests benches
"$PY" -m mypy python/funes_py
# Clippy with every warning an error, through the workspace wrapper so that dependencies are shared with the
# release build (`cargo clippy` would check all of them again): the core and its tests as they run, then
# the binding (feature `python`).
export RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/clippy-driver.sh"
cargo test --release --lib
cargo build --release --lib --features python
unset RUSTC_WORKSPACE_WRAPPER
# Run pytest against the installed wheel, not the source tree (which has no compiled _funes).
"$PY" -m pytest -q -p no:cacheprovider "$@"
