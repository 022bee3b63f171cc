"""errbook stale: entries not reviewed for 180 days, or whose range ends before the newest known release."""
import datetime as dt
import json

import yaml

from conftest import errbook
from errbook.kb import stale


class E:
    def __init__(self, eid, **d):
        self.data = {"id": eid, **d}
        self.id, self.rel, self.withdrawn = eid, f"errata/x/{eid}.yaml", bool(d.get("withdrawn"))

    def get(self, k, default=None):
        return self.data.get(k, default)


REL = {"rocm": {"newest": "10.0.0"}}
TODAY = dt.date(2026, 12, 1)


def test_review_age_and_open_or_fixed_ranges():
    rows = stale.due([
        E("RMN-0001", reviewed="2026-11-30", applies_to=[{"component": "rocm", "versions": ">=6.0"}]),
        E("RMN-0002", reviewed="2026-01-01"),
        E("RMN-0003"),
        E("RMN-0004", reviewed="2026-11-30", applies_to=[{"component": "rocm", "versions": ">=6.0,<7.0"}]),
        E("RMN-0005", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": ">=6.0,<7.0", "fixed_in": "7.0"}]),
        E("RMN-0006", reviewed="2020-01-01", withdrawn="2024-01-01T00:00:00Z"),
        E("RMN-0007", reviewed="2026-11-30", applies_to=[{"component": "vllm", "versions": "<0.6"}]),
    ], REL, TODAY)
    got = {r["id"]: r["reasons"] for r in rows}
    assert sorted(got) == ["RMN-0002", "RMN-0003", "RMN-0004"]
    assert "334 days ago" in got["RMN-0002"][0] and got["RMN-0003"] == ["never reviewed"]
    assert "ends before the newest release 10.0.0" in got["RMN-0004"][0]


def test_cli_json_and_exit_code(mini_root):
    (mini_root / "errata" / "releases.yaml").write_text(yaml.safe_dump({"rocm": {"newest": "10.0.0"}}))
    r = errbook("stale", "--json", "--today", "2030-01-01", root=mini_root)
    assert r.returncode == 1 and json.loads(r.stdout)["due"][0]["id"] == "RMN-0001"
    r = errbook("validate", root=mini_root)
    assert b"releases.yaml" not in r.stdout          # the release data is not read as an entry


def test_the_knowledge_base_was_clean_on_its_review_date():
    """Issue 11's bar, pinned to the date of the wave-2 review: every active entry reviewed within 180 days and
    every range either open, ended by a recorded change (fixed_in), or reaching the newest release. The check
    is dated so the suite does not start failing as the calendar moves; `errbook stale` says what is due now."""
    from pathlib import Path

    from errbook.kb import entries
    root = Path(__file__).resolve().parents[1]
    loaded, _ = entries.load_all(root)
    assert stale.due(loaded, stale.load_releases(root), TODAY) == []
