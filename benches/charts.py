"""Two charts from the result files (matplotlib, PNG): recall latency against history size, in-process and
per-process (log y), and hit@k against k at the largest history for each leg (long questions)."""

from __future__ import annotations

from pathlib import Path

from .quality import hit_at_k_curve

CHART_DIR = Path(__file__).parent / "charts"


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _ticker():
    import matplotlib.ticker

    return matplotlib.ticker


def latency_chart(latency: dict, path: Path) -> Path | None:
    rows = sorted(latency.get("rows", []), key=lambda r: r["n"])
    if not rows:
        return None
    plt = _plt()
    ns = [r["n"] for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for key, label, style in (("in_process_ms", "in-process (warm engine)", "-o"),
                              ("per_process_ms", "process per call (funes-py recall)", "-s")):  # fmt: skip
        ax.plot(ns, [r[key]["p50"] for r in rows], style, label=f"{label}, p50")
        ax.plot(ns, [r[key]["p99"] for r in rows], style.replace("-", ":"), alpha=0.6, label=f"{label}, p99")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(_ticker().FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(_ticker().FuncFormatter(lambda v, _: f"{v:g}" if str(v)[0] in "25" else ""))
    ax.set_xticks(ns, [f"{n:,}" for n in ns])
    ax.set_xlabel("conversations in the history")
    ax.set_ylabel("recall latency, ms (log)")
    ax.set_title("funes_py recall latency")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def hit_at_k_chart(quality: dict, path: Path, style: str = "long") -> Path | None:
    rows = [r for r in quality.get("rows", []) if r["style"] == style]
    if not rows:
        return None
    n = max(r["n"] for r in rows)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    ks = list(range(1, 9))
    for r in rows:
        if r["n"] != n:
            continue
        dashed = "--" if r["config"] == "hybrid+recency" else "-"
        ax.plot(ks, [100 * x for x in hit_at_k_curve(r["ranks"], ks)], dashed + "o", label=r["config"])
    ax.set_xlabel("k (passages returned)")
    ax.set_ylabel("hit@k, % of questions")
    ax.set_title(f"hit@k, {n:,} conversations, {style} questions")
    ax.set_ylim(top=100.5)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def run(results: dict, out_dir: Path) -> dict:
    made = {}
    if results.get("latency"):
        made["latency"] = latency_chart(results["latency"], out_dir / "latency.png")
    if results.get("quality"):
        made["hit_at_k"] = hit_at_k_chart(results["quality"], out_dir / "hit_at_k.png")
    return {k: str(v) for k, v in made.items() if v}
