"""The configuration table (docs/configuration.md, linked from the README) is the one place every FUNES_*
variable is documented: each variable the package reads has exactly one row there, and the table names no
variable the package does not read."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _read_by_the_package() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "python" / "funes_py").rglob("*.py"):
        names.update(re.findall(r'"(FUNES_[A-Z0-9_]+)"', path.read_text(encoding="utf-8")))
    return names


def _table_rows() -> list[str]:
    table = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    return re.findall(r"^\| `(FUNES_[A-Z0-9_]+)` \|", table, flags=re.M)


def test_every_variable_has_one_row_in_the_readme_table():
    rows = _table_rows()
    read = _read_by_the_package()
    assert len(read) > 20, "the scan found too few variables to be meaningful"
    assert sorted(read - set(rows)) == [], "variables the README table does not document"
    assert sorted(set(rows) - read) == [], "README rows for variables nothing reads"
    assert len(rows) == len(set(rows)), "a variable has two rows"
