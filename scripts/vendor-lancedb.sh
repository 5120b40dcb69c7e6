#!/usr/bin/env bash
# lancedb 0.40.0 does not compile with its default features off: src/job.rs builds an `Error::Http`, a
# variant that exists only with the `remote` feature (fixed upstream in 0.41, which needs lance 14). Turning
# `remote` on would rebuild arrow and lance with other features and link an HTTP client we never use, so
# instead this script unpacks the published crate (checksum-verified) into rust/vendor/ and gates those two
# match arms on `remote`. It also makes IvfPqIndexBuilder::sample_rate reach the PQ training as well as the
# IVF one: 0.40.0 leaves PQ at Lance's default of 256 per centroid, 65,536 vectors (100 MB at 384 dimensions,
# three copies while training) whatever the memory's size, the largest part of a first vector index's peak.
# Cargo.toml's [patch.crates-io] points at the result. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.40.0
SHA256=078c80d326ec656d53247ca8647222dab4707b623e795a4a2de1d1063ff78e88
dest="rust/vendor/lancedb-$VERSION"
[ -f "$dest/.funes-patched-2" ] && exit 0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
crate=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/lancedb-$VERSION.crate 2>/dev/null | head -n1 || true)
if [ -z "$crate" ]; then
  crate="$tmp/lancedb-$VERSION.crate"
  curl -sSfL "https://static.crates.io/crates/lancedb/lancedb-$VERSION.crate" -o "$crate"
fi
echo "$SHA256  $crate" | sha256sum -c --quiet -
tar -xzf "$crate" -C "$tmp"
python3 - "$tmp/lancedb-$VERSION/src/job.rs" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
arm = "Some(request_id) => Error::Http {"
assert s.count(arm) == 2, "unexpected lancedb job.rs"
s = s.replace(arm, '#[cfg(feature = "remote")]\n            ' + arm)
s = s.replace("None => Error::Runtime {", "_ => Error::Runtime {")
open(p, "w").write(s)
PY
python3 - "$tmp/lancedb-$VERSION/src/table/create_index.rs" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
line = "pq_params.max_iters = index.max_iterations as usize;"
assert s.count(line) == 1, "unexpected lancedb create_index.rs"
s = s.replace(line, line + "\n                pq_params.sample_rate = index.sample_rate as usize;")
open(p, "w").write(s)
PY
mkdir -p rust/vendor
rm -rf "$dest"
mv "$tmp/lancedb-$VERSION" "$dest"
touch "$dest/.funes-patched-2"
echo "vendored patched lancedb $VERSION into $dest" >&2
