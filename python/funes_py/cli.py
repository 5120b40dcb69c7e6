"""``funes-py``: the command line, mirroring the funes commands so a script that called ``funes`` can call
``funes-py``. The memory is ``--home DIR`` or ``$FUNES_HOME``.

Exit codes: 0 ok · 1 other error · 2 usage · 3 no memory at --home · 4 model mismatch · 5 path not found or
unreadable · 6 memory locked by another index run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NO_MEMORY, EXIT_MODEL, EXIT_PATH, EXIT_LOCKED = 0, 1, 2, 3, 4, 5, 6


def _parser() -> argparse.ArgumentParser:
    from . import _funes  # defaults come from the engine, not from here

    p = argparse.ArgumentParser(prog="funes-py", description="Recall over earlier conversations.")
    p.add_argument("--home", help="memory directory (default: $FUNES_HOME or ~/.funes-py)")
    p.add_argument("--embedder", help="embedding model directory or cached name (default: $FUNES_EMBEDDER or MiniLM)")
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("index", help="index a .funes.jsonl file or a directory of them")
    s.add_argument("path", nargs="?")
    s.add_argument("--rebuild", action="store_true", help="re-embed the stored text with the current embedder")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("recall", help="hybrid search; put the query after -- if it starts with '-'")
    s.add_argument("-k", "--k", type=int, default=_funes.DEFAULT_K)
    s.add_argument("--candidates", type=int, default=_funes.DEFAULT_CANDIDATES)
    s.add_argument("--half-life", type=float, default=_funes.DEFAULT_HALF_LIFE_DAYS, help="days; 0 turns recency off")
    s.add_argument("--neighbors", type=int, default=_funes.DEFAULT_NEIGHBORS)
    s.add_argument("--since")
    s.add_argument("--until")
    s.add_argument("--role", action="append", dest="roles")
    s.add_argument("--type", action="append", dest="block_types")
    s.add_argument("--min-similarity", type=float)
    s.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None)
    s.add_argument("--reranker", help="cross-encoder model directory or cached name")
    s.add_argument("--json", action="store_true")
    s.add_argument("query", nargs="*")

    s = sub.add_parser("get", help="a session's turns around a turn")
    s.add_argument("session_id")
    s.add_argument("turn_uuid", nargs="?")
    s.add_argument("--window", type=int, default=_funes.DEFAULT_GET_WINDOW)
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("scan", help="exact substring search within one session")
    s.add_argument("session_id")
    s.add_argument("needle")
    s.add_argument("--case-sensitive", action="store_true")
    s.add_argument("--context", type=int)
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("sessions", help="sessions, newest first")
    s.add_argument("--since")
    s.add_argument("--until")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("sketch", help="what a session was about")
    s.add_argument("session_id")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("status", help="model, rows, sessions, indexes, disk use")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("forget", help="delete a session; its text is physically removed")
    s.add_argument("session_id")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("models", help="list, build, verify, quantize or pull models")
    s.add_argument("action", choices=["list", "build", "verify", "quantize", "pull"])
    s.add_argument("target", nargs="?", help="build: a model directory; verify/quantize: a directory or name; pull: a Hub id")
    s.add_argument("--name")

    for name, help_ in (("serve", "run the MCP recall service"), ("demo", "seed a demo and ask it questions"),
                        ("proxy", "archive-and-recall proxy in front of an OpenAI-compatible engine")):
        s = sub.add_parser(name, help=help_, add_help=False)
        s.add_argument("rest", nargs=argparse.REMAINDER)
    return p


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


def _home(args: argparse.Namespace) -> Path:
    from .config import settings

    return Path(args.home).expanduser() if args.home else settings().home


def _run(args: argparse.Namespace) -> int:
    from .engine import Engine
    from .models import Models
    from .render import format_hits

    out = sys.stdout
    if args.cmd == "models":
        from .convert import registry

        return registry.cli(args.action, args.target, args.name, embedder=args.embedder)

    home = _home(args)
    if args.cmd != "index" and not home.exists():
        print(f"no memory at {home}: run `funes-py --home {home} index PATH` first", file=sys.stderr)
        return EXIT_NO_MEMORY
    models = Models.load(embedder=args.embedder, reranker=getattr(args, "reranker", None))

    if args.cmd == "index":
        if args.rebuild:
            _, n = Engine.rebuild(home, models)
            print(f"rebuilt {home}: re-embedded {n} chunks with {models.embedder_stamp}")
            return EXIT_OK
        if not args.path:
            print("index needs a PATH (or --rebuild)", file=sys.stderr)
            return EXIT_USAGE
        eng = Engine(home, models, resident=False)
        report = eng.index(args.path, _progress if sys.stderr.isatty() else None)
        for b in report.bad_lines:
            print(f"skipped {b.file}:{b.line}: {b.reason}", file=sys.stderr)
        for path, err in report.unreadable:
            print(f"unreadable {path}: {err}", file=sys.stderr)
        if args.json:
            json.dump(_as_dict(report), out, indent=2)
            out.write("\n")
        else:
            print(
                f"indexed {report.files} files ({report.files_unchanged} unchanged), {report.turns} turns: "
                f"{report.chunks_added} chunks added ({report.texts_embedded} texts embedded), "
                f"{report.chunks_skipped} already stored, "
                f"{len(report.bad_lines)} bad lines, {report.seconds:.1f}s"
            )
        return EXIT_OK

    # One command per process: Lance's indexes answer it directly; a resident copy would cost a full scan.
    eng = Engine(home, models, resident=False)
    if args.cmd == "recall":
        query = " ".join(args.query).strip()
        if not query:
            print("recall needs a QUERY", file=sys.stderr)
            return EXIT_USAGE
        hits = eng.recall(
            query, k=args.k, candidates=args.candidates, half_life_days=args.half_life, neighbors=args.neighbors,
            since=args.since, until=args.until, roles=args.roles, block_types=args.block_types,
            min_similarity=args.min_similarity, rerank=args.rerank,
        )  # fmt: skip
        if args.json:
            json.dump(_as_dict(hits), out, indent=2)
            out.write("\n")
        else:
            out.write(format_hits(hits))
            if not hits:
                out.write("\n")
        return EXIT_OK
    if args.cmd == "get":
        result: Any = eng.get(args.session_id, args.turn_uuid, args.window)
        text = "".join(f"[{t.ts}] {t.role} #{t.seq} {t.turn_uuid}\n{t.text}\n---\n" for t in result)
    elif args.cmd == "scan":
        result = eng.scan(args.session_id, args.needle, not args.case_sensitive, args.context)
        text = "".join(f"[{m.ts}] {m.role} #{m.seq} {m.turn_uuid}\n  {m.excerpt}\n---\n" for m in result)
        text = text or f'no matches for "{args.needle}"\n'
    elif args.cmd == "sessions":
        result = eng.sessions(args.since, args.until)
        text = "".join(f"[{s.first_ts} .. {s.last_ts}] {s.session_id} {s.turns} turns\n" for s in result)
        text += f"{len(result)} sessions\n"
    elif args.cmd == "sketch":
        result = eng.sketch(args.session_id)
        s = result
        text = (f"{s.session_id}: {s.turns} turns, {s.chars} chars, {s.first_ts} .. {s.last_ts}\n"
                f"opening: {s.opening}\nlast word ({s.last_role}): {s.last_word}\n")  # fmt: skip
    elif args.cmd == "status":
        result = st = eng.status()
        text = (
            f"memory: {st.home}\nmodel: {st.model}\nmemory model: {st.memory_model or '(empty)'}\n"
            f"chunks: {st.rows}\nsessions: {st.sessions}\n"
            f"bm25 index: {'yes' if st.fts_indexed else 'no'} ({st.fts_unindexed_rows} rows not yet indexed, scanned)\n"
            f"vector index: {'yes' if st.vector_indexed else 'no (exact search)'}\n"
            f"disk: {st.disk_bytes / 1e6:.1f} MB\n"
        )
    elif args.cmd == "forget":
        result = r = eng.forget(args.session_id)
        text = (f"forgot {r.session_id}: {r.rows_removed} chunks of {r.turns_removed} turns removed\n" if r.found
                else f"no session {r.session_id} in this memory\n")  # fmt: skip
    else:  # pragma: no cover - argparse rejects unknown commands
        return EXIT_USAGE
    if args.json:
        json.dump(_as_dict(result), out, indent=2)
        out.write("\n")
    else:
        out.write(text)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["proxy"]:  # owns its flags (funes_py.proxy.cli)
        from .proxy.cli import main as proxy_main

        return proxy_main(argv)
    # serve / demo own their flags.
    if argv[:1] in (["serve"], ["demo"]):
        from .config import configure_logging

        configure_logging()
        if argv[0] == "serve":
            from .server.cli import serve_main

            return serve_main(argv[1:]) or 0
        from .server.demo import main as demo_main

        return demo_main(argv[1:]) or 0
    args = _parser().parse_args(argv)
    from .config import configure_logging
    from .errors import FunesError, MemoryLockedError, ModelMismatchError

    configure_logging()
    try:
        return _run(args)
    except ModelMismatchError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_MODEL
    except MemoryLockedError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_LOCKED
    except (FileNotFoundError, PermissionError, IsADirectoryError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_PATH
    except FunesError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
