"""The Python package's import graph keeps its layers: no cycles, the proxy never reaches into the service, the
tenancy into neither, and the converter never loads the compiled engine. Lazy imports (inside functions)
count as much as top-level ones: they run as soon as the function does. Imports under `if TYPE_CHECKING:`
do not (they never run).

The graph is read from the source with `ast`, no module is imported. `from funes_py import Engine` is an
edge to the module the package's lazy `_EXPORTS` table loads `Engine` from (`funes_py.engine`), since that
is what runs. Each rule is shown to fail on a planted violation in a copy of the tree.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "funes_py"
ROOT = "funes_py"
ENGINE = f"{ROOT}._funes"  # the compiled extension

# (from prefix, to prefix, why): no module under the first may import one under the second.
FORBIDDEN = [
    (f"{ROOT}.proxy", f"{ROOT}.server", "the proxy shares the tenancy, not the service's internals"),
    (f"{ROOT}.server", f"{ROOT}.proxy", "the service knows nothing of the proxy"),
    (f"{ROOT}.tenancy", f"{ROOT}.server", "the tenancy is below both surfaces"),
    (f"{ROOT}.tenancy", f"{ROOT}.proxy", "the tenancy is below both surfaces"),
    (f"{ROOT}.convert", f"{ROOT}.cli", "the converter is a library"),
    (f"{ROOT}.server", f"{ROOT}.personal", "the service knows nothing of the one-person mode"),
    (f"{ROOT}.proxy", f"{ROOT}.personal", "the proxy knows nothing of the one-person mode"),
    (f"{ROOT}.tenancy", f"{ROOT}.personal", "the tenancy is the many-tenant surfaces' own"),
    (f"{ROOT}.sources", f"{ROOT}.personal", "the readers are below the sync that drives them"),
]


def modules(package: Path) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, its file `__init__.py`)."""
    found: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = [ROOT, *path.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    found[ENGINE] = package / "_funes.pyi"
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: top level or lazy, not under `if TYPE_CHECKING:`."""
    out: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def _lazy_exports(init: Path) -> dict[str, str]:
    """The root package's `_EXPORTS` table: name -> the submodule `__getattr__` imports it from."""
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets):
            table = ast.literal_eval(node.value)
            return {name: f"{ROOT}.{mod}" for name, mod in table.items()}
    return {}


def import_graph(package: Path) -> dict[str, set[str]]:
    mods = modules(package)
    exports = _lazy_exports(package / "__init__.py")
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        if name == ENGINE:
            continue
        is_package = path.name == "__init__.py"
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    src = ".".join(base + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                targets = []
                for alias in node.names:
                    sub = f"{src}.{alias.name}"
                    if sub in mods:  # `from . import cache`: the submodule
                        targets.append(sub)
                    elif src == ROOT and alias.name in exports:  # `from funes_py import Engine`: what runs
                        targets.append(exports[alias.name])
                    else:
                        targets.append(src)
            for target in targets:
                if target.startswith(ROOT) and target in mods and target != name:
                    graph[name].add(target)
    if ROOT in graph:  # the root's __getattr__ imports these the first time a name is asked for
        graph[ROOT] |= set(exports.values())
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def strong(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def forbidden_edges(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{a} -> {b} ({why})"
        for frm, to, why in FORBIDDEN
        for a in sorted(graph)
        if _under(a, frm)
        for b in sorted(graph[a])
        if _under(b, to)
    ]


def reaches(graph: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """A path of imports from `start` to `goal`, or None."""
    seen, todo = {start: [start]}, [start]
    while todo:
        v = todo.pop()
        for w in sorted(graph.get(v, ())):
            if w not in seen:
                seen[w] = [*seen[v], w]
                if w == goal:
                    return seen[w]
                todo.append(w)
    return None


def converter_reaching_the_engine(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for mod in sorted(graph):
        if _under(mod, f"{ROOT}.convert"):
            path = reaches(graph, mod, ENGINE)
            if path is not None:
                out.append(" -> ".join(path))
    return out


def violations(package: Path) -> list[str]:
    graph = import_graph(package)
    return (
        [f"cycle: {' <-> '.join(c)}" for c in cycles(graph)]
        + [f"forbidden: {e}" for e in forbidden_edges(graph)]
        + [f"the converter loads the engine: {p}" for p in converter_reaching_the_engine(graph)]
    )


# --- the rules on the real tree -----------------------------------------------------------------------

def test_the_package_graph_is_read_whole():
    graph = import_graph(PACKAGE)
    # A lazy import inside a function and a `from funes_py import Name` resolved through _EXPORTS are both seen:
    assert "funes_py.engine" in graph["funes_py.tenancy.tenants"], graph["funes_py.tenancy.tenants"]
    assert "funes_py.models" in graph["funes_py.cli.models"]
    assert "funes_py.tenancy" in graph["funes_py.proxy.service"]


def test_the_package_keeps_its_layers():
    assert violations(PACKAGE) == []


# --- each rule fails on a planted violation ---------------------------------------------------------------

def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "funes_py"
    shutil.copytree(PACKAGE, dst, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return dst


def _plant(package: Path, relative: str, code: str) -> None:
    path = package / relative
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + code + "\n", encoding="utf-8")


def test_a_lazy_proxy_import_of_the_service_is_refused(tmp_path):
    pkg = _copy(tmp_path)
    _plant(pkg, "proxy/app.py", "def _planted():\n    from ..server.service import Service\n    return Service")
    found = violations(pkg)
    assert any(v.startswith("forbidden: funes_py.proxy.app -> funes_py.server.service") for v in found), found


def test_a_cycle_through_a_lazy_import_is_refused(tmp_path):
    pkg = _copy(tmp_path)
    # render is imported by the service; a lazy import back closes a cycle
    _plant(pkg, "render.py", "def _planted():\n    from .server import service\n    return service")
    found = violations(pkg)
    assert any(v.startswith("cycle:") and "funes_py.render" in v and "funes_py.server.service" in v for v in found), found


def test_the_converter_reaching_the_engine_through_the_package_is_refused(tmp_path):
    pkg = _copy(tmp_path)
    _plant(pkg, "convert/thesaurus.py", "def _planted():\n    from funes_py import Models\n    return Models")
    found = violations(pkg)
    assert any(v.startswith("the converter loads the engine: funes_py.convert.thesaurus -> funes_py.models") for v in found), found


def test_type_checking_imports_do_not_count(tmp_path):
    pkg = _copy(tmp_path)
    _plant(pkg, "proxy/app.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..server.service import Service")
    assert violations(pkg) == []
