"""DELETE /funes/conversations/{conv}: the archive file, the memory's rows, the decisions and the slot files
of that conversation are all gone; another conversation of the same tenant is untouched."""

from __future__ import annotations

import time

import pytest
from proxy_helpers import SYSTEM, TOOLS, Proxy, filler, tool_turn

from funes_py.tenancy.auth import tenant_id
from proxy_double import Reply, ScriptedEngine

pytestmark = pytest.mark.models


def test_forget_removes_lines_rows_decisions_and_slot_files(tmp_path, models):
    from funes_py import Engine

    slots = tmp_path / "slots"
    slots.mkdir()
    env = {"FUNES_PROXY_SLOT_DIR": str(slots), "FUNES_PROXY_AUTOSAVE_IDLE_S": "0.3", "FUNES_PROXY_AUTOSAVE_MIN_TOKENS": "10"}
    root = tmp_path / "d" / tenant_id("local")
    with ScriptedEngine(16384, script=lambda b, n: Reply(text="ok"), slot_dir=slots) as engine, \
            Proxy(tmp_path / "d", engine.url, env=env) as proxy:  # fmt: skip
        convs = []
        for name in ("alpha", "beta"):
            history = [SYSTEM, {"role": "user", "content": f"Work on project {name}."},
                       *tool_turn(0, "read", {"path": f"{name}.py"}, filler(len(name), 3000))]  # fmt: skip
            resp = proxy.chat(history, tools=TOOLS)
            assert resp.status_code == 200
            convs.append(resp.headers["x-funes-conversation"])
            deadline = time.monotonic() + 30
            while not list(slots.glob(f"funes-*-{convs[-1]}-auto.bin")):
                assert time.monotonic() < deadline, "no autosave"
                time.sleep(0.1)
        proxy.wait_indexed()
        gone, kept = convs
        eng = Engine(root / "memory", models, resident=False)
        assert {s.session_id for s in eng.sessions()} == {gone, kept}
        assert (root / "state" / f"{gone}.jsonl").exists()

        resp = proxy.client.delete(f"/funes/conversations/{gone}")
        assert resp.status_code == 200, resp.text
        assert resp.json()["rows_removed"] > 0 and resp.json()["slot_files_removed"] == 1
        assert not (root / "src" / f"{gone}.funes.jsonl").exists()
        assert not (root / "state" / f"{gone}.jsonl").exists()
        assert not list(slots.glob(f"funes-*-{gone}-*"))
        assert {s.session_id for s in Engine(root / "memory", models, resident=False).sessions()} == {kept}
        assert (root / "src" / f"{kept}.funes.jsonl").exists() and list(slots.glob(f"funes-*-{kept}-*"))
        assert proxy.client.delete(f"/funes/conversations/{gone}").status_code == 404
