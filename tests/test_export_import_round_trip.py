"""`funes-py export` then `funes-py import` into a fresh memory recalls the same turns: with the same model
(the export's, chosen for the new memory), with another model named for the new memory (the multilingual e5,
which re-embeds the text), and into a memory already built with another model (its own model embeds the
imported text). The file is one gzip of JSON lines, a header with the model stamp first, written atomically;
a file that is not an export is refused by name."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from conftest import write_conversation
from funes_py import Engine, Models
from funes_py.choice import MULTILINGUAL
from funes_py.cli import main
from funes_py.portable import NotAnExport, read_header

pytestmark = pytest.mark.models

FACTS = {
    "kiln": ("user", "The Quarrymoor kiln KX-4471 fired at 1,240 degrees on Tuesday."),
    "boat": ("user", "Our sailboat Wendaline needs new halyards before the regatta in May."),
    "tax": ("user", "The accountant Ottoline Breck filed the VAT return number VR-20931."),
}
QUERIES = {"kiln": "what temperature did the Quarrymoor kiln KX-4471 reach",
           "boat": "what does the Wendaline sailboat need before the regatta",
           "tax": "who filed VAT return VR-20931"}  # fmt: skip


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    capsys.readouterr()  # what earlier commands printed
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def top(home: Path, models: Models, query: str) -> str:
    hits = Engine(home, models, resident=False).recall(query, k=1)
    assert hits, query
    return hits[0].turn_uuid


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    work = tmp_path_factory.mktemp("export")
    for name, (role, text) in FACTS.items():
        write_conversation(work / "src" / f"{name}.funes.jsonl", f"conv-{name}",
                           [(role, text), ("assistant", f"Noted about {name}.")])  # fmt: skip
    # a turn of two blocks (text and a tool call) comes back as two blocks
    line = {"session_id": "conv-tool", "turn_uuid": "tool-0", "seq": 0, "ts": "2026-10-09T10:00:00Z",
            "role": "assistant", "harness": "test", "blocks": [
                {"block_type": "text", "text": "Checking the Halvergate sluice gauge."},
                {"block_type": "tool_use", "text": '{"cmd": "gauge --site halvergate"}', "tool_name": "Bash"}]}  # fmt: skip
    (work / "src" / "tool.funes.jsonl").write_text(json.dumps(line) + "\n")
    home = work / "a"
    assert main(["index", "--home", str(home), str(work / "src")]) == 0
    out = work / "a.funes-export.gz"
    assert main(["export", "--home", str(home), str(out)]) == 0
    return home, out


def test_the_export_is_one_gzip_with_the_model_stamp_first(exported: tuple[Path, Path]) -> None:
    home, out = exported
    lines = gzip.decompress(out.read_bytes()).decode().splitlines()
    header = json.loads(lines[0])
    assert header["funes_export"] == 1 and header["source"] == "memory"
    assert header["model"] == Models.load().embedder_stamp and header["dim"] == 384
    records = [json.loads(x) for x in lines[1:]]
    assert len(records) == 7
    assert {r["turn_uuid"] for r in records} >= {"conv-kiln-t0", "conv-boat-t1", "tool-0"}
    (tool,) = [r for r in records if r["turn_uuid"] == "tool-0"]
    assert [b["block_type"] for b in tool["blocks"]] == ["text", "tool_use"]
    assert tool["blocks"][1] == {"block_type": "tool_use", "text": '{"cmd": "gauge --site halvergate"}', "tool_name": "Bash"}
    assert FACTS["kiln"][1] in {b["text"] for r in records for b in r["blocks"]}, "verbatim"
    assert not list(out.parent.glob(".*.tmp")), "the temporary file is renamed into place"


def test_import_into_a_fresh_home_recalls_the_same_turns(exported: tuple[Path, Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    home, out = exported
    fresh = tmp_path / "b"
    result = cli(capsys, "import", "--home", str(fresh), str(out))
    assert result["turns"] == 7 and result["bad_lines"] == 0 and not result["re_embedded"], result
    assert result["model"] == Models.load().embedder_stamp and result["memory_was_new"]
    minilm = Models.load()
    for name, q in QUERIES.items():
        assert top(fresh, minilm, q) == top(home, minilm, q) == f"conv-{name}-t0"
    # importing again adds nothing: turns are stored by id
    assert cli(capsys, "import", "--home", str(fresh), str(out))["chunks_added"] == 0


def test_import_with_another_model_re_embeds_and_recalls_the_same_turns(exported: tuple[Path, Path], tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    _, out = exported
    e5 = Models.load(MULTILINGUAL)
    # a new memory with the e5 model named
    named = tmp_path / "e5-named"
    result = cli(capsys, "import", "--home", str(named), "--embedder", MULTILINGUAL, str(out))
    assert result["re_embedded"] and result["model"] == e5.embedder_stamp, result
    # a memory already built with e5: its own model embeds the imported text
    built = tmp_path / "e5-built"
    write_conversation(tmp_path / "other" / "x.funes.jsonl", "conv-other", [("user", "Unrelated: the moth trap count was 14.")])
    assert main(["index", "--home", str(built), "--embedder", MULTILINGUAL, str(tmp_path / "other")]) == 0
    result = cli(capsys, "import", "--home", str(built), str(out))
    assert result["re_embedded"] and result["model"] == e5.embedder_stamp and not result["memory_was_new"], result
    for home in (named, built):
        for name, q in QUERIES.items():
            assert top(home, e5, q) == f"conv-{name}-t0", (home.name, name)


def test_a_file_that_is_not_an_export_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "x.gz"
    plain.write_bytes(gzip.compress(b'{"session_id": "s"}\n'))
    with pytest.raises(NotAnExport):
        read_header(plain)
    assert main(["import", "--home", str(tmp_path / "h"), str(plain)]) == 2
    junk = tmp_path / "junk"
    junk.write_bytes(b"not gzip at all")
    assert main(["import", "--home", str(tmp_path / "h"), str(junk)]) == 2
    assert not (tmp_path / "h").exists(), "nothing was created for a refused file"
