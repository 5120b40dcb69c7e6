"""Every section of benches/RESULTS.md, in one table: the parts `benches.run` measures and `benches.results`
renders, and the sections other commands write (or were pasted from their output), which the dashboard reads.

A `Part` is a row: its name (the `--parts` value, the result file `run-<name>.json` and the section's marker),
its title, `measure(ctx)` (the JSON a run saves), `render(data, chart_base)` (the section's body) and
`headline(section)` (its figures for the dashboard). `run` and `results` have no list of parts of their own:
adding a part is adding a row here (tests/test_bench_registry.py holds them to that).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import charts, cost, dashboard, floor, locomo_recall, meaning, quality, scale, speed
from .harness import load_result, meta, results_dir, save_result

FLOOR_N = 1_000


@dataclass
class Context:
    """What a part's `measure` may use: the run's arguments and command, the histories `run` indexed for it,
    the parts measured before it in this run, and one loaded `Models` and one `Engine` per memory, shared."""

    args: argparse.Namespace
    command: str
    histories: dict[int, tuple] = field(default_factory=dict)
    results: dict[str, dict] = field(default_factory=dict)
    _models: object = None
    _engines: dict = field(default_factory=dict)

    @property
    def models(self):
        return self.load_models()

    def load_models(self):
        if self._models is None:
            from funes_py import Models

            self._models = Models.load()
        return self._models

    def engine(self, home):
        if str(home) not in self._engines:
            from funes_py import Engine

            self._engines[str(home)] = Engine(home, self.models)
        return self._engines[str(home)]

    def indexed(self, sizes) -> list[tuple[int, tuple]]:
        return [(n, self.histories[n]) for n in sizes]

    def checkpoint(self, part: str, t0: float) -> Callable[[dict], None]:
        """Saves a part's rows as they come, so a stopped run keeps them (the korean part takes hours)."""

        def save(data: dict) -> None:
            save_result(part, self.args.quick, data | {"meta": meta(part, self.command, self.args.quick, time.perf_counter() - t0)})

        return save


@dataclass(frozen=True)
class Section:
    """A section of RESULTS.md that the dashboard reads: `headline` turns the section's text into its figures."""

    name: str
    title: str
    headline: Callable[[str], list[str]]


@dataclass(frozen=True)
class Part(Section):
    """A section `benches.run` measures and `benches.results` renders from `run-<name>.json`."""

    measure: Callable[[Context], dict]
    render: Callable[[dict, str], str]
    # The history sizes `run` indexes before the parts start (from the parsed arguments).
    sizes: Callable[[argparse.Namespace], set[int]] = lambda args: set()
    # Loads the models before the part starts, so no part's seconds include the model load.
    uses_models: bool = False
    # In a plain `benches.run`; False: only when named in --parts (long).
    default: bool = True


def floor_sizes(ns: list[int], quick: bool) -> list[int]:
    """1,000 conversations (or the smallest size asked for), plus the largest in a full run."""
    base = FLOOR_N if FLOOR_N in ns else min(ns)
    return sorted({base} | (set() if quick else {max(ns)}))


def _korean(ctx: Context) -> dict:
    from . import multilingual

    sizes = [n for n in ctx.args.n if n in multilingual.SIZES] or ctx.args.n
    return multilingual.run(sizes, keep_index=ctx.args.keep_index, previous=load_result("korean", ctx.args.quick),
                            locomo_conversations=ctx.args.locomo_conversations,
                            on_progress=ctx.checkpoint("korean", time.perf_counter()))  # fmt: skip


def _korean_body(data: dict, chart_base: str) -> str:
    from . import multilingual

    return multilingual.section_body(data)


def _scale(ctx: Context) -> dict:
    data = scale.run(ctx.args.n, keep_index=True, locomo_conversations=ctx.args.locomo_conversations,
                     previous=load_result("scale", ctx.args.quick), domains=tuple(ctx.args.scale_domains.split(",")))
    scale.chart(data)
    return data


def _charts(ctx: Context) -> dict:
    have = {p: ctx.results.get(p) or load_result(p, ctx.args.quick) for p in ("latency", "quality")}
    out_dir = results_dir(True) if ctx.args.quick else charts.CHART_DIR
    return {"files": charts.run(have, out_dir)}


def _chart_links(data: dict, chart_base: str) -> str:
    return "".join(f"![{k}]({chart_base}/{Path(v).name})\n\n" for k, v in data.get("files", {}).items())


def _all_sizes(args: argparse.Namespace) -> set[int]:
    return set(args.n)


_PARTS = [
    Part("quality", "Quality: hit@k on the synthetic history", dashboard.quality,
         measure=lambda ctx: quality.run(ctx.engine, ctx.indexed(ctx.args.n)),
         render=lambda data, _: quality.render(data) + "\n" + quality.render_misses(data),
         sizes=_all_sizes, uses_models=True),
    Part("latency", "Latency: warm in-process against a process per call", dashboard.latency,
         measure=lambda ctx: speed.latency(ctx.args.n, ctx.args.calls, ctx.args.process_calls),
         render=lambda data, _: speed.render_latency(data), sizes=_all_sizes),
    Part("backfill", "Backfill: indexing from scratch, disk, unchanged re-index", dashboard.backfill,
         measure=lambda ctx: speed.backfill(ctx.engine, ctx.indexed(ctx.args.n)),
         render=lambda data, _: speed.render_backfill(data), sizes=_all_sizes, uses_models=True),
    Part("fresh", "Freshness: a new conversation until it is found", dashboard.fresh,
         measure=lambda ctx: speed.fresh(ctx.models, max(ctx.args.n), ctx.histories[max(ctx.args.n)], runs=ctx.args.fresh_runs),
         render=lambda data, _: speed.render_fresh(data), sizes=lambda args: {max(args.n)}, uses_models=True),
    Part("locomo", "LoCoMo: turn-level recall", dashboard.locomo,
         measure=lambda ctx: locomo_recall.run(ctx.models, ctx.args.locomo_conversations, keep_index=ctx.args.keep_index),
         render=lambda data, _: locomo_recall.render(data), uses_models=True),
    Part("floor", "Relevance floor: saying nothing to questions with no answer", dashboard.floor,
         measure=lambda ctx: floor.run(ctx.engine, ctx.indexed(floor_sizes(ctx.args.n, ctx.args.quick))),
         render=lambda data, _: floor.render(data), sizes=lambda args: set(floor_sizes(args.n, args.quick)),
         uses_models=True),
    Part("meaning", "Recall by meaning: reworded questions, out-of-domain negatives, a held-out domain", dashboard.meaning,
         measure=lambda ctx: meaning.run(ctx.args.n, ctx.args.embedder, keep_index=ctx.args.keep_index),
         render=lambda data, _: meaning.render(data)),
    Part("charts", "Charts", dashboard.charts, measure=_charts, render=_chart_links),
    Part("korean", "Korean and other languages: models and BM25 analysers side by side", dashboard.korean,
         measure=_korean, render=_korean_body, default=False),
    Part("scale", "Recall as memories grow: quality and cost from 1,000 to 100,000 conversations", dashboard.scale,
         measure=_scale, render=lambda data, _: scale.render(data), default=False),
    Part("cost", "Cost per recall: latency, CPU, steps, parallel callers", dashboard.cost,
         measure=lambda ctx: cost.run(ctx.args.n, ctx.args.baseline, keep_index=True),
         render=lambda data, _: cost.render(data), default=False),
]  # fmt: skip
PARTS: dict[str, Part] = {p.name: p for p in _PARTS}
DEFAULT_PARTS = tuple(p.name for p in _PARTS if p.default)
OPTIONAL_PARTS = tuple(p.name for p in _PARTS if not p.default)

# Sections that other commands write into RESULTS.md (`sources`, `proxy`, `proxy-quick`), or that were pasted
# from a command's output with its `Command:` and `Run:` lines: the dashboard reads them as it reads the parts.
_RECORDED = [
    Section("targets", "Targets", dashboard.targets),
    Section("warm-p50", "Warm recall at 10,000 conversations, one engine", dashboard.warm_p50),
    Section("service", "Recall service through MCP", dashboard.service),
    Section("ingest-stall", "Large turns through POST /turns", dashboard.ingest_stall),
    Section("soak", "Soak: mixed ingest and 8 recall clients", dashboard.soak),
    Section("personal", "One person: sync, the stdio server's watcher", dashboard.personal),
    Section("memory", "One engine's memory while another process writes", dashboard.memory),
    Section("rerank", "Cross-encoder rerank", dashboard.rerank),
    Section("int8", "int8 against fp32 embedders", dashboard.int8),
    Section("floor-growth", "An answer floor that grows with the memory", dashboard.floor_growth),
    Section("lab", "The lab against the engine", dashboard.lab),
    Section("sources", "Sources: reading a ChatGPT export", dashboard.sources),
    Section("refresh-scale", "Sources: the final refresh at 1 GB scale", dashboard.refresh_scale),
    Section("proxy", "Agent-archive proxy", dashboard.proxy),
    Section("proxy-quick", "Agent-archive proxy (quick, 8K window)", dashboard.proxy),
    Section("distributed", "Past one machine: replicas on one S3 bucket behind HAProxy", dashboard.distributed),
    Section("wheel", "The distributed wheel", dashboard.wheel),
]
RECORDED: dict[str, Section] = {s.name: s for s in _RECORDED}
# Everything the dashboard knows, in the order it lists them.
SECTIONS: dict[str, Section] = {"targets": RECORDED["targets"], **PARTS,
                                **{k: v for k, v in RECORDED.items() if k != "targets"}}  # fmt: skip
