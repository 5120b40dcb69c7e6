"""(Re)writes the sections of benches/RESULTS.md from the result files of `benches.run`.

    python -m benches.results              # from benches/out/run-*.json (full runs)
    python -m benches.results --quick      # from benches/out/quick/ into benches/out/quick/RESULTS.md

Each part owns one section between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`; a section is replaced
in place (text outside the markers is kept, so prose written by hand survives) or appended when missing.
Every section names the exact command that produced its numbers, the machine, the date and the engine build.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from . import floor, locomo_recall, meaning, quality, speed, targets
from .harness import load_result, results_dir

RESULTS_MD = Path(__file__).parent / "RESULTS.md"
TITLES = {
    "targets": "Targets",
    "quality": "Quality: hit@k on the synthetic history",
    "latency": "Latency: warm in-process against a process per call",
    "backfill": "Backfill: indexing from scratch, disk, unchanged re-index",
    "fresh": "Freshness: a new conversation until it is found",
    "locomo": "LoCoMo: turn-level recall",
    "floor": "Relevance floor: saying nothing to questions with no answer",
    "meaning": "Recall by meaning: reworded questions, out-of-domain negatives, a held-out domain",
    "charts": "Charts",
    "korean": "Korean and other languages: models and BM25 analysers side by side",
}
PARTS = ("quality", "latency", "backfill", "fresh", "locomo", "floor", "meaning", "charts")
# Parts a plain `benches.run` leaves out (long: several 10,000-conversation backfills); ask with --parts.
OPTIONAL_PARTS = ("korean",)
HEADER = ("# Benchmark results\n\nWritten by `python -m benches.results` from the JSON files of "
          "`python -m benches.run` (see benches/README.md for what is timed and what is excluded). Read the "
          "ratios, not the floors: the machine is shared and absolute times move between runs.\n")


def replace_section(doc: str, name: str, body: str) -> str:
    """`doc` with the section `name` holding `body`: replaced between its markers, or appended at the end."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{body.strip()}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(doc):
        return pattern.sub(lambda _: block, doc, count=1)
    return doc.rstrip("\n") + ("\n\n" if doc.strip() else "") + block + "\n"


def provenance(meta: dict) -> str:
    """The lines under a section title: command, machine, when, which build."""
    quick = " (quick mode)" if meta.get("quick") else ""
    load = meta.get("loadavg")
    busy = (f" Load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min) on "
            f"{meta.get('cores', '?')} cores." if load else "")
    return (f"Command: `{meta['command']}`{quick}  \nMachine: {meta['machine']}  \n"
            f"Run: {meta['date']}, git {meta['git']}, engine {meta['engine']}, {meta['seconds']:.0f} s.{busy}\n")


def section(name: str, data: dict, body: str) -> str:
    return f"## {TITLES[name]}\n\n{provenance(data['meta'])}\n{body.strip()}\n"


def render_part(name: str, data: dict, chart_base: str = "charts") -> str:
    if name == "quality":
        body = quality.render(data) + "\n" + quality.render_misses(data)
    elif name == "latency":
        body = speed.render_latency(data)
    elif name == "backfill":
        body = speed.render_backfill(data)
    elif name == "fresh":
        body = speed.render_fresh(data)
    elif name == "locomo":
        body = locomo_recall.render(data)
    elif name == "floor":
        body = floor.render(data)
    elif name == "meaning":
        body = meaning.render(data)
    elif name == "korean":
        from . import multilingual

        body = multilingual.render(data)
    elif name == "charts":
        body = "".join(f"![{k}]({chart_base}/{Path(v).name})\n\n" for k, v in data.get("files", {}).items())
    else:
        raise ValueError(f"unknown part {name!r}")
    return section(name, data, body)


def render_targets(results: dict) -> str:
    rows = targets.evaluate(results)
    commands = sorted({d["meta"]["command"] for d in results.values() if "meta" in d})
    return (f"## {TITLES['targets']}\n\nFrom the sections below ({'; '.join(f'`{c}`' for c in commands)}).\n\n"
            + targets.render(rows))


def write(quick: bool = False, path: Path | None = None, parts=PARTS, targets_too: bool = True) -> Path:
    """`targets_too=False` leaves the targets section alone (one part rewritten from a checkout that lacks
    the other parts' result files)."""
    path = path or (results_dir(True) / "RESULTS.md" if quick else RESULTS_MD)
    results = {p: d for p in PARTS + OPTIONAL_PARTS if (d := load_result(p, quick)) is not None}
    doc = path.read_text(encoding="utf-8") if path.exists() else HEADER
    if targets_too:
        doc = replace_section(doc, "targets", render_targets(results))
    chart_base = "charts" if not quick else "."
    for name in parts:
        if name in results:
            doc = replace_section(doc, name, render_part(name, results[name], chart_base))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.results", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="from the quick run's files, into benches/out/quick/")
    ap.add_argument("--out", type=Path, help="the markdown file to update (default benches/RESULTS.md)")
    ap.add_argument("--parts", help="only these sections (comma-separated); the targets section is then left as it is")
    args = ap.parse_args(argv)
    if args.parts:
        print(write(args.quick, args.out, parts=[p.strip() for p in args.parts.split(",")], targets_too=False))
    else:
        print(write(args.quick, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
