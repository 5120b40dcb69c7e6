"""funes_py: recall over one user's earlier conversations, in process.

    from funes_py import Models, Engine, format_hits
    eng = Engine("/path/to/memory", models=Models.load())
    eng.index("/path/to/conversations")
    print(format_hits(eng.recall("what did we decide about N-11?")))

Names are imported lazily (PEP 562), so ``funes_py.convert`` and ``funes_py.config`` work without loading
the compiled engine or numpy.

Where things go (the Rust side's layers and recipes are in ``rust/src/lib.rs``):

* ``engine``, ``models``, ``options`` (``RecallOptions``), ``render`` (hits as text), ``errors``: the API.
* ``config``: the one reader of ``FUNES_*`` variables; every configuration is a dataclass of ``env_field``s.
* ``cli/``: the commands (``memory``, ``portable`` for export and import, ``models``, exit codes in ``exits``).
* ``portable``: the export file format; ``jsonbody``: request bodies to JSON within limits (service and proxy);
  ``metrics`` (+ ``metrics_setup``): the Prometheus metrics both surfaces serve at ``/metrics``.
* ``convert/``: safetensors → ONNX, the model registry and cache (no engine needed).
* ``server/``: the MCP recall service; ``sources/``: readers of other histories; ``proxy/``: the archive proxy.

Recipes: a recall option → ``options.py`` plus the three Rust places named in ``lib.rs``; an MCP tool →
``server/mcp_tool.py`` (+ ``render.py`` for its text, ``server/config.py`` for its settings); a metric →
``metrics.py``, counted where it happens; a model family →
``convert/`` (``spec``, ``graph``, ``reference``, ``registry``); an input format → one module in ``sources/``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Engine": "engine",
    "Models": "models",
    "RecallOptions": "options",
    "format_hits": "render",
    "NOTHING": "render",
    "FunesError": "errors",
    "InvalidInputError": "errors",
    "MemoryLockedError": "errors",
    "ModelError": "errors",
    "ModelMismatchError": "errors",
    "StorageError": "errors",
    "BadLine": "_funes",
    "ForgetReport": "_funes",
    "Hit": "_funes",
    "IndexReport": "_funes",
    "Neighbor": "_funes",
    "ScanMatch": "_funes",
    "SessionInfo": "_funes",
    "Sketch": "_funes",
    "Status": "_funes",
    "Turn": "_funes",
    "__version__": "_funes",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'funes_py' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from ._funes import (
        BadLine,
        ForgetReport,
        Hit,
        IndexReport,
        Neighbor,
        ScanMatch,
        SessionInfo,
        Sketch,
        Status,
        Turn,
        __version__,
    )
    from .engine import Engine
    from .errors import (
        FunesError,
        InvalidInputError,
        MemoryLockedError,
        ModelError,
        ModelMismatchError,
        StorageError,
    )
    from .models import Models
    from .options import RecallOptions
    from .render import NOTHING, format_hits
