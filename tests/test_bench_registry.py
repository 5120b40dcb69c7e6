"""`benches.registry` is the only dispatch of `benches.run` and `benches.results`, and RESULTS.md's dashboard is
what `benches.dashboard` generates from the sections under it. Pure Python: no engine, no models (the run test
registers a part that measures nothing)."""
import dataclasses
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benches import dashboard, harness, registry, results, run  # noqa: E402

RESULTS_MD = Path(__file__).resolve().parents[1] / "benches" / "RESULTS.md"


def _meta(part: str) -> dict:
    return {"part": part, "command": f"python -m benches.run --parts {part}", "machine": "test", "quick": False,
            "date": "2026-01-02 03:04 UTC", "git": "abc1234", "engine": "0.1.0+test", "seconds": 1.0}


def test_every_part_has_a_title_a_measure_a_render_and_a_headline():
    assert registry.PARTS, "no parts registered"
    for name, part in registry.PARTS.items():
        assert part.name == name and part.title
        assert callable(part.measure) and callable(part.render) and callable(part.headline), name
    assert set(registry.DEFAULT_PARTS) | set(registry.OPTIONAL_PARTS) == set(registry.PARTS)
    assert set(registry.PARTS) <= set(registry.SECTIONS)


def test_results_renders_every_registered_part_from_its_result_file(tmp_path, monkeypatch):
    # Each part's render replaced by one that names it, plus a part no code but the registry knows: `write`
    # must render every one of them from its result file, with the registry's title, in its own section.
    monkeypatch.setattr(harness, "OUT", tmp_path / "out")
    parts = {name: dataclasses.replace(p, render=lambda data, base, name=name: f"rendered {name}: {data['x']}")
             for name, p in registry.PARTS.items()}
    parts["extra"] = dataclasses.replace(registry.PARTS["quality"], name="extra", title="An extra part",
                                         render=lambda data, base: f"rendered extra: {data['x']}")
    monkeypatch.setattr(registry, "PARTS", parts)
    monkeypatch.setattr(results, "PARTS", parts)
    for name in parts:
        harness.save_result(name, False, {"x": name.upper(), "meta": _meta(name)})
    out = results.write(path=tmp_path / "RESULTS.md")
    doc = out.read_text(encoding="utf-8")
    found = dashboard.sections(doc)
    for name, part in parts.items():
        assert name in found, f"section {name} not written"
        assert f"## {part.title}" in found[name] and f"rendered {name}: {name.upper()}" in found[name]
        assert "`python -m benches.run --parts " + name + "`" in found[name]
    assert "dashboard" in found and doc.index("bench:dashboard") < doc.index("bench:targets")


def test_run_measures_and_renders_a_part_through_the_registry(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(harness, "OUT", tmp_path / "out")
    monkeypatch.setattr(harness, "engine_stamp", lambda: "0.1.0+test")
    asked: list[list[int]] = []

    def measure(ctx):
        asked.append(sorted(ctx.histories))
        return {"x": ctx.args.n}

    probe = registry.Part("probe", "A probe", lambda body: [], measure=measure,
                          render=lambda data, base: f"probe measured {data['x']}")
    monkeypatch.setitem(registry.PARTS, "probe", probe)
    assert run.main(["--parts", "probe", "--n", "1000", "--no-results-md"]) == 0
    assert asked == [[]]                       # no history indexed: the part asked for none
    saved = json.loads((tmp_path / "out" / "run-probe.json").read_text())
    assert saved["x"] == [1000] and saved["meta"]["command"] == "python -m benches.run --parts probe --n 1000 --no-results-md"
    assert "## A probe" in capsys.readouterr().out


def test_run_refuses_a_part_the_registry_does_not_know():
    with pytest.raises(SystemExit):
        run.parse(["--parts", "nonesuch"])


def test_results_md_holds_one_section_per_registered_section_and_no_other():
    found = set(dashboard.sections(RESULTS_MD.read_text(encoding="utf-8"))) - {"dashboard"}
    assert not set(registry.SECTIONS) - found, f"registered, not in RESULTS.md: {sorted(set(registry.SECTIONS) - found)}"
    assert not found - set(registry.SECTIONS), f"in RESULTS.md, not registered: {sorted(found - set(registry.SECTIONS))}"


def test_every_section_of_results_md_gives_its_headline_figures():
    for name, body in dashboard.sections(RESULTS_MD.read_text(encoding="utf-8")).items():
        if name != "dashboard":
            figures = registry.SECTIONS[name].headline(body)
            assert figures and all(f.strip() for f in figures), name


def test_the_dashboard_of_results_md_is_the_generated_one():
    doc = RESULTS_MD.read_text(encoding="utf-8")
    assert doc.index("<!-- bench:dashboard -->") < doc.index("<!-- bench:targets -->")
    assert results.with_dashboard(doc) == doc, "RESULTS.md's dashboard differs from `python -m benches.results`'"


def test_the_dashboard_shows_the_newest_run_its_build_and_its_commands():
    doc = ("# R\n\n<!-- bench:fresh -->\n## Freshness\n\nCommand: `python -m benches.run --reindex`  \n"
           "Run: 2026-11-30 02:08 UTC, git 3023afc, engine x.\n\nN=10,000 conversations already indexed.\n\n"
           "Median 0.705 s, worst 0.836 s (target < 2 s: met).\n<!-- /bench:fresh -->\n\n"
           "<!-- bench:other -->\n## Something new\n\nRun: 2026-12-01 10:00 UTC, git 1111111.  \n"
           "Run: 2026-12-02 11:00 UTC, git 2222222.\n<!-- /bench:other -->\n")
    rows = {line.split(" | ")[0]: line for line in dashboard.build(doc, registry.SECTIONS).splitlines() if line.startswith("| ")}
    fresh = rows["| Freshness"]
    assert "0.705 s" in fresh and "2026-11-30 02:08" in fresh and "3023afc" in fresh and "`python -m benches.run --reindex`" in fresh
    other = rows["| Something new"]           # a section the registry does not know: its date, no figures
    assert "2026-12-02 11:00 (runs from 2026-12-01 10:00)" in other and "2222222" in other and "| – |" in other


def test_a_section_whose_tables_changed_shape_shows_no_figures_and_spoils_nothing_else(capsys):
    doc = ("<!-- bench:fresh -->\n## Freshness\n\nRun: 2026-11-30 02:08 UTC.\n\nno figures here\n<!-- /bench:fresh -->\n"
           "<!-- bench:floor -->\n## Floor\n\n**Recommended default: min_similarity=0.45** and so on\n<!-- /bench:floor -->\n")
    board = dashboard.build(doc, registry.SECTIONS)
    assert "| Freshness | – | 2026-11-30 02:08 |" in board and "recommended: min_similarity=0.45" in board
    assert "fresh" in capsys.readouterr().err
