"""The resident copy a warm engine recalls from stays in step with the memory on disk: its own writes are
searchable at once, another process's writes within the read-consistency interval, a forgotten session is
gone from it, and it ranks like Lance's own indexes."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models


def _conversation(src, name, fact):
    return write_conversation(
        src / f"{name}.funes.jsonl",
        name,
        [("user", f"Quick one about {name}: what did we settle?"), ("assistant", fact)],
    )


@pytest.fixture
def warm(models, tmp_path):
    """An engine whose resident copy is already built (it has answered a recall)."""
    from funes_py import Engine

    src = tmp_path / "src"
    for i in range(5):
        _conversation(src, f"base{i}", f"Line L-{i}0 rejected {i}.5% of parts at final QC on Tuesday.")
    eng = Engine(tmp_path / "memory", models=models)
    eng.index(src)
    assert eng.recall("reject rate of line L-20", k=1)[0].session_id == "base2"
    return eng, src


def test_own_writes_are_searchable_at_once(warm):
    eng, src = warm
    _conversation(src, "fresh", "Decision DR-5501: the chiller retrofit at site Q-77 goes ahead in March.")
    assert eng.index(src).chunks_added == 2
    hits = eng.recall("what was decided about the chiller retrofit at Q-77?", k=3)
    assert hits[0].session_id == "fresh"
    assert "DR-5501" in hits[0].text
    # Neighbouring turns of the new rows come from the copy too.
    assert [n.role for n in hits[0].neighbors] == ["user"]


def test_another_process_writes_are_seen(warm, tmp_path):
    eng, src = warm
    _conversation(src, "other", "Ticket MT-8812 covers the cracked weld on boiler B-4; Ada Park owns it.")
    # A separate process indexes (it takes the writer lock; this engine holds no lock between calls).
    out = subprocess.run(
        [sys.executable, "-m", "funes_py.cli", "--home", eng.home, "index", str(src)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    deadline = time.monotonic() + 10
    while True:
        hits = eng.recall("which ticket covers the boiler B-4 weld?", k=3)
        if hits and hits[0].session_id == "other":
            break
        assert time.monotonic() < deadline, "another process's write never reached the resident copy"
        time.sleep(0.2)
    assert "MT-8812" in hits[0].text


def test_forget_removes_the_session_from_the_copy(warm):
    eng, _ = warm
    assert eng.recall("reject rate of line L-30", k=1)[0].session_id == "base3"
    eng.forget("base3")
    hits = eng.recall("reject rate of line L-30", k=8)
    assert hits and all(h.session_id != "base3" for h in hits)
    assert all("L-30" not in h.text for h in hits)


def test_filters_apply_to_the_copy(warm):
    eng, _ = warm
    hits = eng.recall("reject rate of line L-20", k=8, roles=["user"])
    assert hits and all(h.role == "user" for h in hits)
    assert eng.recall("reject rate of line L-20", k=8, since="2030-01-01") == []


def test_resident_and_lance_rank_alike(warm, models):
    from funes_py import Engine

    eng, _ = warm
    cold = Engine(eng.home, models=models, resident=False)
    for i in range(5):
        q = f"what share of parts did line L-{i}0 reject?"
        a = [h.session_id for h in eng.recall(q, k=3, half_life_days=0)]
        b = [h.session_id for h in cold.recall(q, k=3, half_life_days=0)]
        assert a[0] == b[0] == f"base{i}"
        # Similarities agree to the int8 codes' precision.
        sa = eng.recall(q, k=1, half_life_days=0)[0].similarity
        sb = cold.recall(q, k=1, half_life_days=0)[0].similarity
        assert abs(sa - sb) < 5e-3
