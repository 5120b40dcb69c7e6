"""funes_py.gc_freeze: what start-up built leaves the collector's full passes; what comes later does not. In a
fresh interpreter (the freeze is process-wide)."""

import json
import subprocess
import sys

CHECK = """
import gc, json
from funes_py.gc_freeze import freeze_startup
startup = [{"k": [i]} for i in range(50_000)]  # what a server keeps from start-up: modules, routes, models
freeze_startup()
frozen = gc.get_freeze_count()
later = [{"k": [i]} for i in range(1_000)]  # a request's objects
gc.collect()
print(json.dumps({"frozen": frozen, "scanned": len(gc.get_objects(generation=2))}))
"""


def test_startup_objects_leave_full_collections_and_later_ones_stay() -> None:
    out = json.loads(subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True).stdout)
    assert out["frozen"] >= 100_000  # the 50,000 dicts and their lists, and the interpreter's own objects
    assert 2_000 <= out["scanned"] < 20_000  # the 1,000 later dicts and lists are still collected
