#!/usr/bin/env bash
# Runs the whole test suite: the Rust core without Python (cargo test), then pytest (API, CLI, service,
# converter, benchmark generator; real models from the installed packages). Run scripts/bootstrap.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/cache/funes_py/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export CARGO_INCREMENTAL=0
PY="${PYTHON:-python3}"

bash scripts/vendor-lancedb.sh
cargo test --release --lib
# Run pytest against the installed wheel, not the source tree (which has no compiled _funes).
"$PY" -m pytest -q -p no:cacheprovider "$@"
