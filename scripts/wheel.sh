#!/usr/bin/env bash
# The distributable artefacts, into dist/: the engine wheel (abi3, manylinux_2_28, x86_64, profile `dist`:
# thin LTO, one codegen unit, stripped, dependencies built for size; 37.7 MB), the sdist, and the companion
# wheel with the default model (scripts/model_wheel.py). zig links against glibc 2.28's symbol versions, so
# the wheel installs on RHEL/Rocky 8+, Debian 10+, Ubuntu 18.10+, Amazon Linux 2023. A cold build takes
# about 50 minutes on 2 cores (see benches/RESULTS.md), in its own target directory, and CI does not run it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
TARGET="${WHEEL_TARGET:-x86_64-unknown-linux-gnu}"
export CARGO_TARGET_DIR="${FUNES_DIST_TARGET_DIR:-/var/cache/funes_py/target-dist}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}" CARGO_INCREMENTAL=0
# .cargo/config.toml links the development build with mold; zig is the linker here.
export RUSTFLAGS=""
"$PY" -m pip install -q --disable-pip-version-check "maturin>=1.9,<2" "ziglang>=0.13" "auditwheel>=6"
bash scripts/vendor-lancedb.sh
mkdir -p dist
start=$(date +%s)
"$PY" -m maturin build --profile dist --zig --compatibility manylinux_2_28 --target "$TARGET" --out dist >&2
echo "wheel.sh: engine wheel built in $(( $(date +%s) - start ))s" >&2
"$PY" -m maturin sdist --out dist >&2
"$PY" scripts/model_wheel.py dist
for whl in dist/funes_py-*manylinux_2_28*.whl; do "$PY" -m auditwheel show "$whl"; done
ls -l dist
