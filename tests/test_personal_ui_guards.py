"""``funes-py ui`` keeps to this machine and to its own pages: a non-loopback ``--host`` is refused before
anything binds; a request whose Host is not a loopback name is refused (DNS rebinding); forgetting needs the
process's CSRF token and no foreign Origin; an unknown conversation is a 404 page. Real memory, real engine,
the app through starlette's TestClient (and the CLI as a real process for the host refusal)."""

from __future__ import annotations

import re
import socket
import subprocess
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from ui_helpers import FACT, FACT_SESSION, SESSIONS, build_memory, env, free_port, ui_command

BASE = "http://127.0.0.1:8765"
OTHER = "9c3e4a12-6d5f-4b70-8c8d-3e4f5a6b7c82"  # the lentil soup


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "example.com"])
def test_a_host_other_than_loopback_is_refused_before_anything_binds(tmp_path, host):
    port = free_port()
    r = subprocess.run(ui_command("--home", str(tmp_path / "memory"), "--host", host, "--port", str(port)),
                       env=env(), capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode != 0
    assert "loopback" in r.stderr and "error:" in r.stderr, r.stderr
    assert _port_is_free(port)
    assert not (tmp_path / "memory").exists(), "nothing is opened for a refused host"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from funes_py.personal.config import load_config
    from funes_py.personal.ui import app

    home = build_memory(tmp_path_factory.mktemp("ui-guards"))
    with TestClient(app(load_config(home)), base_url=BASE) as c:
        yield c


def _token(client: TestClient, sid: str) -> str:
    r = client.get(f"/c/{sid}/forget")
    assert r.status_code == 200, r.text
    m = re.search(r'name="csrf" value="([^"]+)"', r.text)
    assert m is not None
    return m.group(1)


def _still_there(client: TestClient, sid: str) -> None:
    r = client.get(f"/c/{sid}")
    assert r.status_code == 200
    for _role, text in SESSIONS[sid]:
        assert text.split(",")[0] in r.text


@pytest.mark.models
@pytest.mark.parametrize("form", [{}, {"csrf": ""}, {"csrf": "not-the-token"}])
def test_a_forget_without_the_token_is_refused_and_the_conversation_stays(client, form):
    r = client.post(f"/c/{FACT_SESSION}/forget", data=form, follow_redirects=False)
    assert r.status_code == 403
    assert "token" in r.text and "Traceback" not in r.text
    _still_there(client, FACT_SESSION)


@pytest.mark.models
@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://127.0.0.1:9999"])
def test_a_forget_from_another_origin_is_refused_even_with_the_token(client, origin):
    token = _token(client, FACT_SESSION)
    r = client.post(f"/c/{FACT_SESSION}/forget", data={"csrf": token}, headers={"Origin": origin}, follow_redirects=False)
    assert r.status_code == 403
    assert "another site" in r.text
    _still_there(client, FACT_SESSION)


@pytest.mark.models
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "192.168.1.20:8765", "127.0.0.1.nip.io"])
def test_a_host_header_that_is_not_loopback_is_refused(client, host):
    for path in ("/", f"/c/{FACT_SESSION}", "/healthz"):
        r = client.get(path, headers={"Host": host})
        assert r.status_code == 403, (path, host)
        assert FACT not in r.text
    r = client.post(f"/c/{FACT_SESSION}/forget", data={"csrf": _token(client, FACT_SESSION)}, headers={"Host": host})
    assert r.status_code == 403
    _still_there(client, FACT_SESSION)


@pytest.mark.models
@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "localhost"])
def test_loopback_host_headers_are_served(client, host):
    r = client.get("/", headers={"Host": host})
    assert r.status_code == 200
    assert r.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]


@pytest.mark.models
def test_an_unknown_conversation_is_a_404_page(client):
    for path in ("/c/no-such-session", "/c/no-such-session/forget", "/nowhere"):
        r = client.get(path)
        assert r.status_code == 404, path
        assert "Traceback" not in r.text and "<html" in r.text
    assert "forgotten, or never stored" in client.get("/c/no-such-session").text
    r = client.post("/c/no-such-session/forget", data={"csrf": _token(client, FACT_SESSION)})
    assert r.status_code == 404


@pytest.mark.models
def test_with_the_token_and_its_own_origin_a_forget_goes_through(client):
    token = _token(client, OTHER)
    r = client.post(f"/c/{quote(OTHER)}/forget", data={"csrf": token}, headers={"Origin": BASE}, follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == f"/?forgotten={OTHER}"
    assert OTHER in client.get(r.headers["location"]).text
    assert client.get(f"/c/{OTHER}").status_code == 404
    _still_there(client, FACT_SESSION)


def test_a_memory_not_made_yet_says_so_and_is_not_created(tmp_path):
    from funes_py.personal.config import load_config
    from funes_py.personal.ui import app

    home = tmp_path / "nothing-here"
    with TestClient(app(load_config(home)), base_url=BASE) as c:
        assert "is empty" in c.get("/", params={"q": "anything"}).text
        assert "holds no conversations" in c.get("/sessions").text
        assert c.get("/c/x").status_code == 404
    assert not home.exists()
