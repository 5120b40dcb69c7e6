"""The commands on one memory: index, recall, get, scan, sessions, sketch, status, forget. The memory is
``--home DIR`` or ``$FUNES_HOME``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .exits import EXIT_NO_MEMORY, EXIT_OK, EXIT_USAGE, fail


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    from .. import _funes  # defaults come from the engine, not from here

    def command(name: str, help_: str) -> argparse.ArgumentParser:
        s: argparse.ArgumentParser = sub.add_parser(name, parents=[common], help=help_, description=help_)
        s.add_argument("--json", action="store_true", help="print the result as JSON")
        return s

    s = command("index", "index conversations: a file, a directory or an export zip (see `sources`)")
    s.add_argument("path", nargs="?")
    s.add_argument("--format", type=_format_name, help="read every file as this format (default: recognised by content)")
    s.add_argument("--rebuild", action="store_true", help="re-embed the stored text with the current embedder")

    s = command("recall", "hybrid search; put the query after -- if it starts with '-'")
    s.add_argument("-k", "--k", type=int, default=_funes.DEFAULT_K)
    s.add_argument("--candidates", type=int, default=_funes.DEFAULT_CANDIDATES)
    s.add_argument("--half-life", type=float, default=_funes.DEFAULT_HALF_LIFE_DAYS, help="days; 0 turns recency off")
    s.add_argument("--neighbors", type=int, default=_funes.DEFAULT_NEIGHBORS)
    s.add_argument("--since")
    s.add_argument("--until")
    s.add_argument("--session", action="append", dest="sessions", help="only this session (repeatable)")
    s.add_argument("--role", action="append", dest="roles")
    s.add_argument("--type", action="append", dest="block_types")
    s.add_argument("--harness", action="append", dest="harnesses", help="only turns of this harness (repeatable)")
    s.add_argument("--min-similarity", type=float)
    s.add_argument("--keep-repeats", action="store_true", help="every copy of a passage said more than once")
    s.add_argument("--no-near-words", dest="near_words", action="store_false",
                   help="BM25 asks for the query's own words only, not the embedder's near words too")  # fmt: skip
    s.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None)
    s.add_argument("--reranker", help="cross-encoder model directory or cached name")
    s.add_argument("query", nargs="*")

    s = command("get", "a session's turns around a turn")
    s.add_argument("session_id")
    s.add_argument("turn_uuid", nargs="?")
    s.add_argument("--window", type=int, default=_funes.DEFAULT_GET_WINDOW)

    s = command("scan", "exact substring search within one session")
    s.add_argument("session_id")
    s.add_argument("needle")
    s.add_argument("--case-sensitive", action="store_true")
    s.add_argument("--context", type=int)

    s = command("sessions", "sessions, newest first")
    s.add_argument("--since")
    s.add_argument("--until")

    s = command("sketch", "what a session was about")
    s.add_argument("session_id")

    command("status", "model, rows, sessions, indexes, disk use")

    s = command("forget", "delete a session; its text is physically removed")
    s.add_argument("session_id")


def _format_name(name: str) -> str:
    from ..sources import get

    try:
        return get(name).name
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _as_dict(obj: Any) -> Any:
    """Result objects (frozen pyclasses) → plain JSON values."""
    if isinstance(obj, (list, tuple)):
        return [_as_dict(o) for o in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return {n: _as_dict(getattr(obj, n)) for n in dir(obj) if not n.startswith("_") and not callable(getattr(obj, n))}


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\rembedding [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _home(args: argparse.Namespace) -> str:
    """The memory: ``--home``, else ``$FUNES_HOME``; a local directory or an ``s3://bucket/prefix`` URI."""
    from ..config import settings

    home = args.home or settings().home
    return home if "://" in home else str(Path(home).expanduser())


def _index(args: argparse.Namespace, home: str, models: Any) -> tuple[Any, str]:
    from ..engine import Engine

    if args.rebuild:
        _, n = Engine.rebuild(home, models)
        return {"chunks": n, "model": models.embedder_stamp}, f"rebuilt {home}: re-embedded {n} chunks with {models.embedder_stamp}\n"
    progress = _progress if sys.stderr.isatty() else None
    # No model named: the memory's own, or for a new memory the one its first texts choose (funes_py.choice).
    eng = Engine(home, models, resident=False) if models is not None else Engine(home, resident=False)
    if models is None and eng.choice.open:
        eng.choose_model(args.path, args.format)
        if eng.choice.embedder is not None:
            print(f"model: {eng.models.embedder_name} ({eng.choice.why})", file=sys.stderr)
    report = eng.index(args.path, format=args.format, progress=progress)
    not_read = 0
    for b in report.bad_lines:
        if b.line == 0:  # place 0: the whole file (no format recognised it, or it could not be read)
            not_read += 1
            print(f"not read {b.file}: {b.reason}", file=sys.stderr)
        else:
            print(f"skipped {b.file}:{b.line}: {b.reason}", file=sys.stderr)
    for path, err in report.unreadable:
        print(f"unreadable {path}: {err}", file=sys.stderr)
    text = (
        f"indexed {report.files} files ({report.files_unchanged} unchanged), {report.turns} turns: "
        f"{report.chunks_added} chunks added ({report.texts_embedded} texts embedded), "
        f"{report.chunks_skipped} already stored, {len(report.bad_lines) - not_read} bad lines, "
        f"{not_read + len(report.unreadable)} files not read, {report.seconds:.1f}s\n"
    )
    return report, text


def _recall(args: argparse.Namespace, eng: Any) -> tuple[Any, str]:
    from ..options import RecallOptions
    from ..render import format_hits

    opts = RecallOptions(
        k=args.k, candidates=args.candidates, half_life_days=args.half_life, neighbors=args.neighbors,
        since=args.since, until=args.until, sessions=args.sessions, roles=args.roles,
        block_types=args.block_types, harnesses=args.harnesses, min_similarity=args.min_similarity,
        rerank=args.rerank, keep_repeats=args.keep_repeats, near_words=args.near_words,
    )  # fmt: skip
    hits = eng.recall(" ".join(args.query).strip(), opts)
    return hits, format_hits(hits) + ("" if hits else "\n")


def _model_choice(eng: Any, stamp: str) -> str:
    """Why the memory has its model, told from a sample of its text (`funes_py.choice.describe`)."""
    from .. import choice

    if not stamp:
        return "none yet: the first texts indexed choose"
    texts: list[str] = []
    for s in eng.sessions()[:20]:
        texts += [t.text for t in eng.get(s.session_id)]
        if len(texts) >= choice.SAMPLE_TEXTS:
            break
    return choice.describe(stamp, texts[: choice.SAMPLE_TEXTS])


def _read(args: argparse.Namespace, eng: Any) -> tuple[Any, str]:
    """get, scan, sessions, sketch, status, forget: the result and its text."""
    if args.cmd == "get":
        turns = eng.get(args.session_id, args.turn_uuid, args.window)
        return turns, "".join(f"[{t.ts}] {t.role} #{t.seq} {t.turn_uuid}\n{t.text}\n---\n" for t in turns)
    if args.cmd == "scan":
        found = eng.scan(args.session_id, args.needle, not args.case_sensitive, args.context)
        text = "".join(f"[{m.ts}] {m.role} #{m.seq} {m.turn_uuid}\n  {m.excerpt}\n---\n" for m in found)
        return found, text or f'no matches for "{args.needle}"\n'
    if args.cmd == "sessions":
        ss = eng.sessions(args.since, args.until)
        text = "".join(f"[{s.first_ts} .. {s.last_ts}] {s.session_id} {s.turns} turns\n" for s in ss)
        return ss, text + f"{len(ss)} sessions\n"
    if args.cmd == "sketch":
        s = eng.sketch(args.session_id)
        return s, (f"{s.session_id}: {s.turns} turns, {s.chars} chars, {s.first_ts} .. {s.last_ts}\n"
                   f"opening: {s.opening}\nlast word ({s.last_role}): {s.last_word}\n")  # fmt: skip
    if args.cmd == "status":
        st = eng.status()
        return st, (
            f"memory: {st.home}\nmodel: {st.model}\nmemory model: {st.memory_model or '(empty)'}\n"
            f"model choice: {_model_choice(eng, st.memory_model)}\n"
            f"bm25 analyzer: version {st.analyzer_version or '-'}\n"
            f"chunks: {st.rows}\nsessions: {st.sessions}\n"
            f"bm25 index: {'yes' if st.fts_indexed else 'no'} ({st.fts_unindexed_rows} rows not yet indexed, scanned)\n"
            f"vector index: {'yes' if st.vector_indexed else 'no (exact search)'}\n"
            f"disk: {st.disk_bytes / 1e6:.1f} MB\n"
        )
    r = eng.forget(args.session_id)
    return r, (f"forgot {r.session_id}: {r.rows_removed} chunks of {r.turns_removed} turns removed\n" if r.found
               else f"no session {r.session_id} in this memory\n")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from ..engine import Engine
    from ..models import Models

    home = _home(args)
    if args.cmd != "index" and "://" not in home and not Path(home).exists():
        return fail(f"no memory at {home}: run `funes-py index --home {home} PATH` first", EXIT_NO_MEMORY)
    if args.cmd == "index" and not (args.path or args.rebuild):
        return fail("index needs a PATH (or --rebuild)", EXIT_USAGE)
    if args.cmd == "recall" and not " ".join(args.query).strip():
        return fail("recall needs a QUERY", EXIT_USAGE)
    reranker = getattr(args, "reranker", None)
    if args.embedder is not None or (args.cmd == "index" and args.rebuild):  # --rebuild: the model of now
        models = Models.load(embedder=args.embedder, reranker=reranker)
    elif args.cmd == "index":
        models = None  # the engine chooses: the memory's own model, or the one its first texts choose
    else:
        from .. import choice

        models = Models.load(embedder=choice.for_memory(home).embedder, reranker=reranker)
    if args.cmd == "index":
        result, text = _index(args, home, models)
    else:
        # One command per process: Lance's indexes answer it directly; a resident copy would cost a full scan.
        eng = Engine(home, models, resident=False)
        result, text = _recall(args, eng) if args.cmd == "recall" else _read(args, eng)
    if args.json:
        json.dump(_as_dict(result), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text)
    return EXIT_OK
