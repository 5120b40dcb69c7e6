"""deploy/prometheus/ is valid for Prometheus itself: `promtool` (Debian's `prometheus` package; test-setup.sh
installs it) checks the scrape config and the alert rules, and runs the rules' unit tests (each alert fires on
the series that should fire it, and not before its `for`). The alerts only name metrics the service and the
proxy export (funes_py.metrics), and the compose file scrapes with them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy" / "prometheus"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (apt-get install prometheus; scripts/test-setup.sh does)")


def promtool(*args: str, cwd: Path = DEPLOY) -> str:
    assert PROMTOOL is not None
    r = subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


@needs_promtool
def test_the_scrape_config_is_valid(tmp_path: Path) -> None:
    # The token file lives in the container (a compose secret); here a stand-in, so the file check runs too.
    token = tmp_path / "token"
    token.write_text("t")
    for name in ("prometheus.yml", "funes-alerts.yml"):
        text = (DEPLOY / name).read_text()
        (tmp_path / name).write_text(text.replace("/run/secrets/funes_metrics_token", str(token)))
    assert "SUCCESS" in promtool("check", "config", "prometheus.yml", cwd=tmp_path)


@needs_promtool
def test_the_three_alerts_are_valid_and_fire_when_they_should() -> None:
    assert "SUCCESS: 3 rules found" in promtool("check", "rules", "funes-alerts.yml")
    assert "SUCCESS" in promtool("test", "rules", "funes-alerts.test.yml")


def test_the_alerts_name_only_exported_metrics() -> None:
    from prometheus_client import REGISTRY

    import funes_py.metrics  # noqa: F401  (defines them)
    from funes_py.tenancy.tenants import live_tenancy

    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}
    exported = {m.name + x for m in REGISTRY.collect() for x in suffixes.get(m.type, ("",))} | set(live_tenancy(None))
    named = set(re.findall(r"\bfunes_[a-z_]+", (DEPLOY / "funes-alerts.yml").read_text()))
    assert named and named <= exported, named - exported


def test_compose_scrapes_with_this_config() -> None:
    compose = (ROOT / "compose.yaml").read_text()
    assert "./deploy/prometheus:/etc/prometheus:ro" in compose
    assert "FUNES_METRICS_TOKEN" in compose
