"""benches/README.md names every module under benches/ (by its path inside benches/, in backticks), so a module
added without a line saying its job and its command fails here. Pure: reads files only."""
from pathlib import Path

BENCHES = Path(__file__).resolve().parents[1] / "benches"


def modules() -> list[str]:
    """Every module of the benches package, as its path inside benches/ (package `__init__` files aside: their
    folder is described by its heading); benches/out/ is generated data."""
    return sorted(str(p.relative_to(BENCHES)) for p in BENCHES.rglob("*.py")
                  if p.name != "__init__.py" and "out" not in p.relative_to(BENCHES).parts)  # fmt: skip


def test_the_package_has_modules_to_list():
    found = modules()
    assert "run.py" in found and "lab/fusion_lab.py" in found and "probes/soak.py" in found


def test_readme_names_every_module():
    readme = (BENCHES / "README.md").read_text(encoding="utf-8")
    missing = [m for m in modules() if f"`{m}`" not in readme]
    assert not missing, f"benches/README.md does not list: {', '.join(missing)}"


def test_readme_names_no_module_that_is_gone():
    import re

    readme = (BENCHES / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:[a-z_0-9]+/)*[a-z_0-9]+\.py)`", readme))
    gone = sorted(n for n in named if not ((BENCHES / n).exists() or (BENCHES.parent / n).exists()))
    assert not gone, f"benches/README.md lists modules that do not exist: {', '.join(gone)}"
