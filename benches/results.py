"""(Re)writes benches/RESULTS.md: the sections of `benches.run`'s parts from their result files, the targets, and
the dashboard that opens the file.

    python -m benches.results              # from benches/out/run-*.json (full runs); the dashboard always
    python -m benches.results --quick      # from benches/out/quick/ into benches/out/quick/RESULTS.md

Each section lies between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`; a section is replaced in place (text
outside the markers is kept, so prose written by hand survives) or appended when missing. Every section names
the exact command that produced its numbers, the machine, the date and the engine build. Which parts exist and
how each renders is `benches.registry`; the dashboard is `benches.dashboard`, built from the sections' text, so
it is current after any writer (this module, `benches.sources.bench`, `benches.proxy.bench`,
`benches.multilingual`) has run.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from . import dashboard, targets
from .harness import load_result, results_dir
from .paths import BENCHES
from .registry import DEFAULT_PARTS, OPTIONAL_PARTS, PARTS, SECTIONS

RESULTS_MD = BENCHES / "RESULTS.md"
HEADER = ("# Benchmark results\n\nWritten by `python -m benches.results` from the JSON files of "
          "`python -m benches.run` and from the sections other benchmarks write (see benches/README.md for what "
          "is timed and what is excluded). Read the ratios, not the floors: the machine is shared and absolute "
          "times move between runs.\n")


def replace_section(doc: str, name: str, body: str) -> str:
    """`doc` with the section `name` holding `body`: replaced between its markers, or appended at the end."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{body.strip()}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(doc):
        return pattern.sub(lambda _: block, doc, count=1)
    return doc.rstrip("\n") + ("\n\n" if doc.strip() else "") + block + "\n"


def with_dashboard(doc: str) -> str:
    """`doc` with its dashboard rebuilt from its sections: in place, or before the first section."""
    body = dashboard.build(doc, SECTIONS)
    if "<!-- bench:dashboard -->" in doc or "<!-- bench:" not in doc:
        return replace_section(doc, "dashboard", body)
    at = doc.index("<!-- bench:")
    return doc[:at] + f"<!-- bench:dashboard -->\n{body.strip()}\n<!-- /bench:dashboard -->\n\n" + doc[at:]


def write_section(name: str, body: str, path: Path | None = None) -> Path:
    """One section rewritten (by a benchmark with its own command), then the dashboard."""
    path = path or RESULTS_MD
    doc = path.read_text(encoding="utf-8") if path.exists() else HEADER
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(with_dashboard(replace_section(doc, name, body)), encoding="utf-8")
    return path


def provenance(meta: dict) -> str:
    """The lines under a section title: command, machine, when, which build."""
    quick = " (quick mode)" if meta.get("quick") else ""
    load = meta.get("loadavg")
    busy = (f" Load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min) on "
            f"{meta.get('cores', '?')} cores." if load else "")
    return (f"Command: `{meta['command']}`{quick}  \nMachine: {meta['machine']}  \n"
            f"Run: {meta['date']}, git {meta['git']}, engine {meta['engine']}, {meta['seconds']:.0f} s.{busy}\n")


def section(name: str, data: dict, body: str) -> str:
    return f"## {PARTS[name].title}\n\n{provenance(data['meta'])}\n{body.strip()}\n"


def render_part(name: str, data: dict, chart_base: str = "charts") -> str:
    if name not in PARTS:
        raise ValueError(f"unknown part {name!r}")
    return section(name, data, PARTS[name].render(data, chart_base))


def render_targets(results: dict) -> str:
    rows = targets.evaluate(results)
    commands = sorted({d["meta"]["command"] for d in results.values() if "meta" in d})
    return (f"## {SECTIONS['targets'].title}\n\nFrom the sections below ({'; '.join(f'`{c}`' for c in commands)}).\n\n"
            + targets.render(rows))


def write(quick: bool = False, path: Path | None = None, parts=None, targets_too: bool = True) -> Path:
    """The sections of `parts` that have result files, the targets from every part's file, the dashboard.
    `targets_too=False` leaves the targets section alone (one part rewritten from a checkout that lacks the
    other parts' result files); so does a checkout whose result files feed no target (a run of `cost` alone must
    not wipe the targets the other parts measured). `parts` None: every part."""
    path = path or (results_dir(True) / "RESULTS.md" if quick else RESULTS_MD)
    results = {p: d for p in PARTS if (d := load_result(p, quick)) is not None}
    doc = path.read_text(encoding="utf-8") if path.exists() else HEADER
    if targets_too and results and (targets.evaluate(results) or "bench:targets" not in doc):
        doc = replace_section(doc, "targets", render_targets(results))
    chart_base = "charts" if not quick else "."
    for name in parts or PARTS:
        if name in results:
            doc = replace_section(doc, name, render_part(name, results[name], chart_base))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(with_dashboard(doc), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.results", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="from the quick run's files, into benches/out/quick/")
    ap.add_argument("--out", type=Path, help="the markdown file to update (default benches/RESULTS.md)")
    ap.add_argument("--parts", help="only these sections (comma-separated); the targets section is then left as it is")
    args = ap.parse_args(argv)
    if args.parts:
        parts = [p.strip() for p in args.parts.split(",")]
        unknown = set(parts) - set(DEFAULT_PARTS + OPTIONAL_PARTS)
        if unknown:
            ap.error(f"unknown parts {sorted(unknown)}; choose from {','.join(DEFAULT_PARTS + OPTIONAL_PARTS)}")
        print(write(args.quick, args.out, parts=parts, targets_too=False))
    else:
        print(write(args.quick, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
