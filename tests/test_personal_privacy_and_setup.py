"""What the one-person mode never stores, and `funes-py setup` (issue 38): private spans are cut, a turn
left empty is dropped, the memory's own recall results are not stored again; each agent's MCP configuration
gets the stdio server, the rest of the file kept, a backup written, a second run changes nothing, and a
file the agent could not read is refused untouched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from funes_py.personal import clients
from funes_py.personal.config import load_config
from funes_py.personal.privacy import Privacy

P = Privacy("funes:skip", "private")


def _line(role: str, *blocks: tuple[str, str, str | None]) -> str:
    return json.dumps({"session_id": "s", "turn_uuid": "t", "seq": 0, "ts": "2026-11-02T09:00:00Z", "role": role,
                       "blocks": [{"block_type": b, "text": t, **({"tool_name": n} if n else {})} for b, t, n in blocks]})  # fmt: skip


def test_private_spans_are_cut_and_an_emptied_turn_is_not_stored():
    kept = P.keep(_line("user", ("text", "the door code is <private>4711</private> for site N-11", None)))
    assert kept is not None and "4711" not in kept and "site N-11" in kept
    unclosed = P.keep(_line("user", ("text", "see below <PRIVATE>password hunter2 and the rest", None)))
    assert unclosed is not None and "hunter2" not in unclosed
    assert P.keep(_line("user", ("text", "<private>only this</private>", None))) is None


def test_the_memory_own_recall_results_are_not_stored_again():
    line = _line("assistant", ("tool_use", '{"query":"N-11"}', "mcp__funes__recall"),
                 ("text", "Here is what we decided.", None))  # fmt: skip
    kept = json.loads(P.keep(line) or "{}")
    assert [b["block_type"] for b in kept["blocks"]] == ["text"]
    assert P.keep(_line("tool", ("tool_result", "Earlier conversations, quoted verbatim", "mcp__funes__recall"))) is None
    assert P.keep(_line("tool", ("tool_result", "build passed", "Bash"))) is not None


def test_the_skip_marker_is_seen_anywhere_in_a_turn():
    assert P.marked(_line("user", ("text", "scratch session, funes:skip please", None)))
    assert not P.marked(_line("user", ("text", "funes skip", None)))


def test_personal_toml_is_read_and_a_wrong_key_is_named(tmp_path: Path):
    (tmp_path / "personal.toml").write_text('exclude = ["*/scheduled/*"]\nskip_marker = "NOFUNES"\nsources = ["~/notes"]\n')
    cfg = load_config(tmp_path, sources=["/x"])
    assert cfg.exclude == ("*/scheduled/*",) and cfg.skip_marker == "NOFUNES"
    assert [str(p) for p in cfg.sources] == [os.path.expanduser("~/notes"), "/x"]
    assert cfg.excluded("/home/u/.claude/projects/p/scheduled/a.jsonl") == "*/scheduled/*"
    assert load_config(tmp_path / "nothing").excluded("/a/s1/subagents/agent-1.jsonl") == "**/subagents/**"
    (tmp_path / "personal.toml").write_text("exclde = []\n")
    with pytest.raises(ValueError, match="exclde"):
        load_config(tmp_path)


@pytest.mark.parametrize("client", clients.CLIENTS)
def test_setup_registers_the_server_keeps_the_rest_and_is_idempotent(tmp_path: Path, client: str):
    home = tmp_path / "memory"
    user = tmp_path / "user"
    file = clients.config_file(client, user)
    file.parent.mkdir(parents=True)
    if client == "codex":
        file.write_text('model = "o4"\n\n[mcp_servers.other]\ncommand = "other-server"\n')
    else:
        file.write_text(json.dumps({"theme": "dark", "mcpServers": {"other": {"command": "other-server"}}}))
    change = clients.plan(client, home, user)
    assert change.needed and change.before is None
    assert "funes" not in file.read_text(), "plan writes nothing"
    backup = clients.apply(change)
    assert backup is not None and "other-server" in backup.read_text()
    if client == "codex":
        data = tomllib.loads(file.read_text())
        entry = data["mcp_servers"]["funes"]
        assert data["model"] == "o4" and data["mcp_servers"]["other"]["command"] == "other-server"
    else:
        data = json.loads(file.read_text())
        entry = data["mcpServers"]["funes"]
        assert data["theme"] == "dark" and data["mcpServers"]["other"] == {"command": "other-server"}
    assert entry["command"] == sys.executable and entry["args"][-3:] == ["mcp", "--home", str(home)]
    again = clients.plan(client, home, user)
    assert not again.needed and clients.apply(again) is None


def test_setup_refuses_a_file_the_agent_could_not_read_and_writes_nothing(tmp_path: Path):
    env = {**os.environ, "HOME": str(tmp_path)}
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").write_text("{broken")
    r = subprocess.run([sys.executable, "-m", "funes_py.cli", "setup", "cursor", "--write", "--home", str(tmp_path / "m")],
                       env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode != 0 and "not valid JSON" in r.stderr
    assert (tmp_path / ".cursor" / "mcp.json").read_text() == "{broken"
    r = subprocess.run([sys.executable, "-m", "funes_py.cli", "setup", "claude-code", "--home", str(tmp_path / "m")],
                       env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0 and "--write" in r.stdout and not (tmp_path / ".claude.json").exists()
