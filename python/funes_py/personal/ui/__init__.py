"""``funes-py ui``: a local page for one person to look at and forget what their memory stores.

Server-rendered (starlette + jinja2 templates, no build step, a few lines of inline script), served by uvicorn
on a loopback address only: the page has no login, so anything that could reach it from another machine
could read and delete the memory. Three guards, each for a different way in:

* ``check_host``: ``serve`` refuses any address but 127.0.0.0/8, ::1 and ``localhost`` before it binds;
* ``guards.LoopbackHostOnly``: a request whose ``Host`` header is not a loopback name gets 403 (a web page on
  another site can point its own DNS name at 127.0.0.1 and read the answers: DNS rebinding);
* forgetting takes a POST with this process's random CSRF token, and a POST whose ``Origin`` is another site
  is refused (``guards.check_post``).

Placement: ``pages`` holds the routes and what they ask the engine; ``guards`` the three checks above and the
response headers; ``marks`` the query-word highlighting (pure, no I/O); ``templates/`` the HTML.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
import webbrowser
from typing import TYPE_CHECKING

from .pages import app

if TYPE_CHECKING:
    from ..config import PersonalConfig

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "app", "check_host", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def check_host(host: str) -> str | None:
    """Why ``host`` may not be served on (None when it may): only a loopback address or ``localhost``."""
    if host == "localhost":
        return None
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return f"--host {host!r} is not an IP address; the page binds a loopback address only (127.0.0.1, ::1, localhost)"
    if not ip.is_loopback:
        return (
            f"--host {host} would let other machines read and delete your memory (the page has no login); "
            "it binds a loopback address only (127.0.0.1, ::1, localhost)"
        )
    return None


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so a port in use is our error to word, not uvicorn's exit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(config: PersonalConfig, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, open_browser: bool = False) -> int:
    """Serves the page for ``config``'s memory until interrupted; returns an exit code (0, or 2 for a host
    that is not loopback, 1 for a port that cannot be bound). Prints the address on stderr."""
    import uvicorn

    why = check_host(host)
    if why is not None:
        print(f"error: {why}", file=sys.stderr)
        return 2
    if host == "localhost":
        host = DEFAULT_HOST  # one address, the one the printed URL names
    try:
        sock = _listen(host, port)
    except OSError as e:
        print(f"error: cannot listen on {host}:{port}: {e.strerror or e}", file=sys.stderr)
        return 1
    bound = sock.getsockname()[1]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{bound}/"
    print(f"funes-py ui: {url} (memory {config.home}; Ctrl-C stops)", file=sys.stderr, flush=True)
    server = uvicorn.Server(uvicorn.Config(app(config), log_level="warning", access_log=False, lifespan="on"))
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0
