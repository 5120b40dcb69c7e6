"""Korean and mixed Korean/English recall, per embedder and BM25 analyser, and what each model costs.

    python -m benches.run --parts korean                  # Korean, mixed, English at 1,000 and 10,000
    python -m benches.multilingual --n 1000 --configs minilm-whitespace        # one config, standalone

A config is an embedder and a BM25 analyser (CONFIGS). Each (history, config) gets its own memory
(`benches/out/multilingual/history-ko-N-s7-<config>/memory`), indexed once in a child process (index
time, model load and peak RSS recorded as `benches.latency.ensure_indexed` does) and reused while the engine
build is the same (`--keep-index` trusts an older one). Quality is `quality.measure` on that memory (the same
legs, phrasings and k as the English table); cost is a child process per (config, N) timing 300 warm
`recall(q, k=8)` calls with the defaults, long Korean questions in turn, and its peak RSS.

The English history is measured the same way (lang "en"), and LoCoMo with e5 (`locomo`), so a user can
choose a model per language from one table.

Rows from earlier runs are kept in the result file unless measured again, each with the engine build that
made it: the whitespace-analyser baseline comes from the build before the bigram analyser existed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from functools import lru_cache
from pathlib import Path

from .harness import REPO, engine_stamp, load_result, meta, pct, save_result
from .history import generate, history_dirname, write_history
from .latency import OUT, run_child

E5, E5_INT8 = "intfloat/multilingual-e5-small", "intfloat/multilingual-e5-small-int8"
# Named, not the library's default (which may become the int8 MiniLM): the rows say float32 MiniLM.
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_INT8 = "sentence-transformers/all-MiniLM-L6-v2-int8"
AUTO = "auto"  # no embedder named (`auto-bigram`)
# name -> (embedder for Models.load; BM25 analyser). The analyser is what the
# memory was indexed with; "whitespace" is the engine before issue 14 (Lance's simple tokenizer).
CONFIGS = {
    "minilm-whitespace": (MINILM, "whitespace"),
    "minilm-bigram": (MINILM, "bigram"),
    "e5-bigram": (E5_INT8, "bigram"),
    # Not run by default (--configs): the float32 e5, and the service's int8 MiniLM, for the cost table.
    "e5fp32-bigram": (E5, "bigram"),
    "minilm8-bigram": (MINILM_INT8, "bigram"),
    # No model named: Engine(home) lets a new memory's first texts choose (funes_py.choice), and opens a built
    # one with its own model; what a user who never chose a model gets (issue 36).
    "auto-bigram": (AUTO, "bigram"),
    # The service's int8 MiniLM forced on every history: the fusion must not fall below BM25 alone.
    "minilm8-forced-bigram": (MINILM_INT8, "bigram"),
}
DEFAULT_CONFIGS = ("minilm-whitespace", "minilm-bigram", "e5-bigram")
LABELS = {"minilm-whitespace": "MiniLM + whitespace BM25", "minilm-bigram": "MiniLM + bigram BM25",
          "e5-bigram": "e5 (int8) + bigram BM25", "e5fp32-bigram": "e5 (float32) + bigram BM25",
          "minilm8-bigram": "MiniLM (int8) + bigram BM25", "auto-bigram": "no model named + bigram BM25",
          "minilm8-forced-bigram": "MiniLM (int8) forced + bigram BM25"}  # fmt: skip
LANGS = ("ko", "mixed", "en")
SIZES = (1_000, 10_000)
RECALL_CALLS = 300
MEMORIES = OUT / "multilingual"


@lru_cache(maxsize=1)
def analyzer_of_build() -> str:
    """The BM25 analyser the compiled engine indexes with: "bigram" once it splits Hangul/Han/Kana runs
    into character bigrams (issue 14), else "whitespace". Asked of the engine itself: a one-turn memory
    holding `서버가` is searched for `서버` through BM25 alone."""
    import tempfile

    from funes_py import Engine, Models

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src" / "probe.funes.jsonl"
        src.parent.mkdir()
        turn = {"session_id": "probe", "turn_uuid": "probe-1", "seq": 0, "ts": "2026-01-01T00:00:00Z",
                "role": "user", "harness": "probe", "blocks": [{"block_type": "text", "text": "서버가 다운됐어요"}]}
        src.write_text(json.dumps(turn, ensure_ascii=False) + "\n", encoding="utf-8")
        eng = Engine(Path(tmp) / "memory", Models.load())
        eng.index(src.parent)
        found = eng.recall("서버", k=1, legs="bm25", neighbors=0)
    return "bigram" if found else "whitespace"


# ---------------------------------------------------------------------------------------------------
# memories

def ensure_history(n: int, lang: str, seed: int = 7) -> Path:
    root = OUT / history_dirname(n, seed, lang)
    manifest = root / "manifest.json"
    if not (manifest.exists() and json.loads(manifest.read_text())["n_conversations"] == n):
        shutil.rmtree(root, ignore_errors=True)
        write_history(generate(n, seed=seed, lang=lang), root)
    return root


_INDEX_CODE = (
    "import json,resource,sys,time\n"
    "from funes_py import Engine, Models\n"
    "t0=time.perf_counter(); m=None if sys.argv[3]=='auto' else Models.load(embedder=sys.argv[3] or None); load=time.perf_counter()-t0\n"
    "t1=time.perf_counter(); r=Engine(sys.argv[1], m).index(sys.argv[2]); idx=time.perf_counter()-t1\n"
    "print(json.dumps({'model_load_s':load,'index_s':idx,'chunks':r.chunks_added,'files':r.files,"
    "'peak_rss_mb':resource.getrusage(resource.RUSAGE_SELF).ru_maxrss//1024}))\n"
)


def ensure_memory(root: Path, config: str, keep_index: bool = False, index_only: bool = False) -> tuple[Path, dict]:
    """The memory of `root`'s history under `config`, indexed in a child process unless a record of this
    engine build (or any, with keep_index) exists. Returns (home, index record). Memories live apart from
    the histories (MEMORIES/<history>-<config>), so the English benchmark's own cache handling, which
    regenerates a history directory, never drops them.

    `index_only` indexes with whatever analyser the build has (the embedding is the cost; the analyser is
    recorded): a build with a newer analyser re-tokenises such a memory when it opens it (issue 14), and
    that first open is timed here, in a child process, as `retokenise_s`."""
    embedder, analyzer = CONFIGS[config]
    if analyzer != analyzer_of_build() and not index_only:
        raise RuntimeError(f"config {config} needs the {analyzer} analyser; this engine build indexes with "
                           f"{analyzer_of_build()}")  # fmt: skip
    base = MEMORIES / f"{root.name}-{config}"
    home, info_path = base / "memory", base / "index-run.json"
    base.mkdir(parents=True, exist_ok=True)
    info = json.loads(info_path.read_text()) if info_path.exists() else None
    if info is None or not (keep_index or index_only or info.get("engine") == engine_stamp()):
        shutil.rmtree(home, ignore_errors=True)
        info_path.unlink(missing_ok=True)
        _, _, out = run_child([sys.executable, "-c", _INDEX_CODE, str(home), str(root / "src"), embedder or ""],
                              env=_env())  # fmt: skip
        info = json.loads(out.strip().splitlines()[-1]) | {"engine": engine_stamp(), "config": config,
                                                           "analyzer": analyzer_of_build(),
                                                           "measured_at": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                        time.gmtime())}  # fmt: skip
        info_path.write_text(json.dumps(info, indent=1))
    if not index_only and info.get("analyzer", analyzer) != analyzer_of_build():
        _, _, out = run_child([sys.executable, "-c", _OPEN_CODE, str(home), embedder or ""], env=_env())
        info |= {"analyzer": analyzer_of_build(), "retokenised": json.loads(out.strip().splitlines()[-1])
                 | {"engine": engine_stamp()}}  # fmt: skip
        info_path.write_text(json.dumps(info, indent=1))
    return home, info


_OPEN_CODE = (
    "import json,sys,time\n"
    "from funes_py import Engine, Models\n"
    "m=None if sys.argv[2]=='auto' else Models.load(embedder=sys.argv[2] or None)\n"
    "t=time.perf_counter(); st=Engine(sys.argv[1], m).status(); s=time.perf_counter()-t\n"
    "print(json.dumps({'retokenise_s':s,'rows':st.rows,'analyzer_version':getattr(st,'analyzer_version',None)}))\n"
)


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


# ---------------------------------------------------------------------------------------------------
# quality and cost

_COST_CODE = (
    "import json,resource,sys,time\n"
    "from funes_py import Engine, Models\n"
    "from benches.metrics import percentiles\n"
    "qs=[json.loads(l)['long'] for l in open(sys.argv[3],encoding='utf-8') if l.strip()]\n"
    "t=time.perf_counter(); eng=Engine(sys.argv[1], None if sys.argv[2]=='auto' else Models.load(embedder=sys.argv[2] or None)); "
    "open_s=time.perf_counter()-t\n"
    "eng.recall(qs[0], k=8); ms=[]\n"
    "for i in range(int(sys.argv[4])):\n"
    "    t=time.perf_counter(); eng.recall(qs[i % len(qs)], k=8); ms.append((time.perf_counter()-t)*1000)\n"
    "print(json.dumps({'open_s':open_s,'recall_ms':percentiles(ms),"
    "'rss_mb':resource.getrusage(resource.RUSAGE_SELF).ru_maxrss//1024}))\n"
)


def recall_cost(root: Path, home: Path, config: str, calls: int = RECALL_CALLS) -> dict:
    """Warm recall latency and peak RSS of an engine on `home`, in its own process."""
    embedder = CONFIGS[config][0]
    _, _, out = run_child([sys.executable, "-c", _COST_CODE, str(home), embedder or "",
                           str(root / "questions.jsonl"), str(calls)], env=_env())  # fmt: skip
    return json.loads(out.strip().splitlines()[-1]) | {"calls": calls}


def measure(n: int, lang: str, config: str, keep_index: bool = False, calls: int = RECALL_CALLS) -> dict:
    """Quality rows and costs for one (history, config)."""
    from funes_py import Engine, Models

    from . import quality

    root = ensure_history(n, lang)
    home, info = ensure_memory(root, config, keep_index)
    embedder = CONFIGS[config][0]
    eng = Engine(home) if embedder == AUTO else Engine(home, Models.load(embedder=embedder))
    rows, misses = quality.measure(eng, root, n)
    del eng
    cost = recall_cost(root, home, config, calls)
    tag = {"n": n, "lang": lang, "model_config": config, "engine": engine_stamp()}
    # The load when the recall cost was measured: on 2 shared cores it moves p50 several-fold.
    cost["loadavg"] = [round(x, 1) for x in os.getloadavg()]
    return {"key": f"{lang}-{n}-{config}", "rows": [r | tag for r in rows], "misses": [m | tag for m in misses[:5]],
            "index": info, "cost": cost, "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **tag}  # fmt: skip


def run(sizes=SIZES, langs=LANGS, configs=None, keep_index: bool = False, calls: int = RECALL_CALLS,
        previous: dict | None = None, locomo_conversations: int | None = None, on_progress=None,
        command: str | None = None) -> dict:  # fmt: skip
    """Every (lang, size, config) the engine build supports, then LoCoMo with e5 (locomo_conversations=0
    skips it); earlier results for other keys are kept. `on_progress(data)` after each measurement, so a
    long run that is stopped keeps what it measured."""
    supported = [c for c in (configs or DEFAULT_CONFIGS) if CONFIGS[c][1] == analyzer_of_build()]
    kept = {r["key"]: r for r in (previous or {}).get("runs", [])}
    out: dict = {k: previous[k] for k in ("locomo", "locomo_minilm") if (previous or {}).get(k)}  # type: ignore[index]
    order = {lang: i for i, lang in enumerate(LANGS)}
    for lang in langs:
        for n in sizes:
            for config in supported:
                t = time.perf_counter()
                kept[f"{lang}-{n}-{config}"] = measure(n, lang, config, keep_index, calls) | {"command": command}
                print(f"korean: {lang} {n:,} {config} in {time.perf_counter() - t:.0f} s", file=sys.stderr,
                      flush=True)  # fmt: skip
                out["runs"] = sorted(kept.values(), key=lambda r: (order[r["lang"]], r["n"],
                                                                  list(CONFIGS).index(r["model_config"])))  # fmt: skip
                if on_progress:
                    on_progress(out)
    out.setdefault("runs", list(kept.values()))
    # LoCoMo with e5, and with MiniLM on the same build beside it (the quality part's run-locomo.json may be
    # from another build).
    for key, embedder in (("locomo", E5_INT8), ("locomo_minilm", MINILM)):
        config = next((c for c in supported if CONFIGS[c][0] == embedder), None)
        if config and locomo_conversations != 0:
            out[key] = locomo(config, locomo_conversations, keep_index) | {"command": command}
            if on_progress:
                on_progress(out)
    return out


def locomo(config: str = "e5-bigram", conversations: int | None = None, keep_index: bool = False) -> dict:
    """LoCoMo turn recall with `config`'s embedder, each conversation its own memory under
    benches/out/locomo-<config>/ (MiniLM's stay under benches/out/locomo/)."""
    from funes_py import Models

    from . import locomo_recall

    data = locomo_recall.run(Models.load(embedder=CONFIGS[config][0]), conversations, keep_index,
                             cache_root=OUT / f"locomo-{config}")  # fmt: skip
    return data | {"model_config": config, "engine": engine_stamp()}


# ---------------------------------------------------------------------------------------------------
# rendering

def _cell(rows: list[dict], lang: str, n: int, style: str, config: str, legs: str) -> str:
    for r in rows:
        if (r["lang"], r["n"], r["style"], r["model_config"], r["config"]) == (lang, n, style, config, legs):
            return f"{pct(r['hit@1'])} / {pct(r['hit@3'])} / {pct(r['hit@8'])}"
    return "–"


def render(data: dict) -> str:
    runs = data.get("runs", [])
    rows = [r for run in runs for r in run["rows"]]
    configs = [c for c in CONFIGS if any(run["model_config"] == c for run in runs)]
    out = ""
    for lang, title in (("ko", "Korean"), ("mixed", "Mixed Korean/English"), ("en", "English")):
        sizes = sorted({r["n"] for r in runs if r["lang"] == lang})
        if not sizes:
            continue
        out += f"**{title} history**, hit@1 / @3 / @8 in % of 100 questions (hybrid; bm25 and dense legs alone):\n\n"
        out += "| conversations | questions | leg | " + " | ".join(LABELS[c] for c in configs) + " |\n"
        out += "|---|---|---|" + "---|" * len(configs) + "\n"
        for n in sizes:
            for style in ("long", "short"):
                for legs in ("hybrid", "bm25", "dense"):
                    cells = [_cell(rows, lang, n, style, c, legs) for c in configs]
                    out += f"| {n:,} | {style} | {legs} | " + " | ".join(cells) + " |\n"
        out += "\n"
    out += ("Cost per model: index from scratch in a child process (model load excluded), its "
            "peak RSS; warm `recall(q, k=8)` with the defaults, 300 calls in a fresh process, and that process's "
            "peak RSS; the 1-minute load average when the recall cost was measured (2 cores).\n\n"
            "| model + analyser | history | index s | index peak RSS MB | recall p50 / p95 ms | recall RSS MB | load | "
            "engine build |\n|---|---|---|---|---|---|---|---|\n")  # fmt: skip
    for run in runs:
        i, c = run["index"], run["cost"]
        retok = i.get("retokenised")
        index_s = f"{i['index_s']:.0f}" + (f" (+ {retok['retokenise_s']:.0f} re-tokenising)" if retok else "")
        out += (f"| {LABELS[run['model_config']]} | {run['lang']} {run['n']:,} | {index_s} | "
                f"{i['peak_rss_mb']} | {c['recall_ms']['p50']:.1f} / {c['recall_ms']['p95']:.1f} | {c['rss_mb']} | "
                f"{c['loadavg'][0] if c.get('loadavg') else '–'} | {run['engine']} |\n")  # fmt: skip
    out += ("\nThe engine build is that of each row: the whitespace rows come from the build before the bigram "
            "analyser existed (issue 14's baseline). Times depend on what else shares the 2 cores (the load "
            "average is under the title): compare rows measured together.\n")  # fmt: skip
    retokenised = sorted({(r["index"]["engine"], r["index"]["retokenised"]["engine"]) for r in runs
                          if r["index"].get("retokenised")})  # fmt: skip
    for old, new in retokenised:
        out += (f"\nRows with \"re-tokenising\": the memory was indexed (embedded) by build {old}, whose BM25 "
                f"analyser was whitespace (`python -m benches.multilingual --index-only ...`, or the whitespace row's memory copied), and re-tokenised by build {new} when it first opened it (issue 14: an "
                "older memory is re-tokenised from its stored text, vectors kept); that open is timed apart.\n")  # fmt: skip
    out += _commands(runs + [data[k] for k in ("locomo", "locomo_minilm") if data.get(k)])
    if data.get("locomo"):
        out += "\n" + render_locomo(data["locomo"], data.get("locomo_minilm") or load_result("locomo", False))
    return out


def _commands(runs: list[dict]) -> str:
    """Which command measured which rows (a result file gathers several runs)."""
    by: dict[str, list[str]] = {}
    for r in runs:
        what = f"{r['lang']} {r['n']:,} {r['model_config']}" if "lang" in r else f"LoCoMo {r['model_config']}"
        by.setdefault(r.get("command") or "(command not recorded)", []).append(what)
    return "\nRows and the commands that measured them:\n\n" + "".join(
        f"- {cmd}: {', '.join(whats)}\n" if cmd.startswith("(") else f"- `{cmd}`: {', '.join(whats)}\n"
        for cmd, whats in by.items())


def render_locomo(e5: dict, minilm: dict | None) -> str:
    """LoCoMo turn recall with e5 beside MiniLM's (from run-locomo.json, when it exists)."""
    out = (f"**LoCoMo** with {LABELS[e5['model_config']]} ({e5['questions']:,} questions, "
           f"{len(e5['conversations'])} conversations), turn recall @1 / @5 / @10 in %:\n\n"
           f"| legs | e5 | MiniLM ({'same build' if minilm and minilm.get('engine') == e5['engine'] else 'run-locomo.json'}) |"
           "\n|---|---|---|\n")  # fmt: skip
    for legs in e5["tables"]:
        cells = []
        for data in (e5, minilm):
            a = (data or {}).get("tables", {}).get(legs, {}).get("ALL")
            cells.append("–" if not a else " / ".join(pct(a[f"turn_recall@{k}"], 1) for k in (1, 5, 10)))
        out += f"| {legs} | " + " | ".join(cells) + " |\n"
    return out + f"\ne5 memories built by engine {e5['engine']}.\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.multilingual", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--langs", nargs="+", default=list(LANGS), choices=LANGS)
    ap.add_argument("--configs", nargs="+", choices=list(CONFIGS),
                    help=f"default: {' '.join(DEFAULT_CONFIGS)} (those the build's analyser supports)")
    ap.add_argument("--calls", type=int, default=RECALL_CALLS)
    ap.add_argument("--keep-index", action="store_true")
    ap.add_argument("--locomo-conversations", type=int, help="LoCoMo conversations with e5 (default all, 0: none)")
    ap.add_argument("--no-results-md", action="store_true", help="do not rewrite the korean section of RESULTS.md")
    ap.add_argument("--locomo-only", action="store_true", help="only LoCoMo (e5, and MiniLM beside it)")
    ap.add_argument("--index-only", action="store_true",
                    help="only index the memories (any analyser; a newer build re-tokenises them on open, timed)")
    args = ap.parse_args(argv)
    if args.index_only:
        for lang in args.langs:
            for n in args.n:
                for config in args.configs or DEFAULT_CONFIGS:
                    t = time.perf_counter()
                    ensure_memory(ensure_history(n, lang), config, index_only=True)
                    print(f"korean: indexed {lang} {n:,} {config} in {time.perf_counter() - t:.0f} s", file=sys.stderr,
                          flush=True)  # fmt: skip
        return 0
    command = "python -m benches.multilingual" + "".join(" " + a for a in (argv if argv is not None else sys.argv[1:]))
    t0 = time.perf_counter()

    def save(data: dict) -> None:
        save_result("korean", False, data | {"meta": meta("korean", command, False, time.perf_counter() - t0)})

    data = run([] if args.locomo_only else args.n, args.langs, args.configs, args.keep_index, args.calls, load_result("korean", False),
               args.locomo_conversations, on_progress=save, command=command)  # fmt: skip
    save(data)
    print(render(data))
    if not args.no_results_md:
        print(write_section(load_result("korean", False)), file=sys.stderr)
    return 0


def section_body(data: dict) -> str:
    """The `korean` section's body: the tables and issue 14's targets (the shared targets table is
    `benches.results`' to rewrite, from every part's results)."""
    from . import targets

    rows = targets._korean(data)
    return render(data) + ("\nIssue 14's targets:\n\n" + targets.render(rows) if rows else "")


def write_section(data: dict) -> Path:
    """Rewrite only the `korean` section of RESULTS.md (and the dashboard)."""
    from . import results

    return results.write_section("korean", results.section("korean", data, section_body(data)))


if __name__ == "__main__":
    sys.exit(main())
