"""The index filters' data (web/filterdata.py): what each row of the entry tables and the verification matrix
matches is decided in Python, from the real entries and the real ledger, and checked here against readings
written out independently (a brute-force walk over patch releases, the YAML's own gpu_archs, the ledger's
records). tests/test_browser_filters.py checks that the page shows exactly these rows."""
import json
import re
from collections import Counter
from types import SimpleNamespace

import pytest

from conftest import REPO
from errbook.kb import drafts, entries, stale, verified, versions
from errbook.machine import fingerprint
from errbook.runbooks import ledger
from errbook.web import filterdata, indexpages, phrases
from errbook.web.status import BAD

# --- readings written out here, independent of filterdata -------------------------------------------------------

def line_reaches(line: str, rng: str) -> bool:
    """Brute force: a release of the line (line, line.p, line.p.q for p, q < 40) lies in the range."""
    base = tuple(int(x) for x in line.split("."))
    points = [base] + [base + (p,) for p in range(40)] + [base + (p, q) for p in range(40) for q in range(40)]
    return any(versions.in_range(p, rng) for p in points)


def rocm_ranges(e) -> list[str]:
    """The entry's ROCm ranges as its row shows them, each cut at its fixed_in; [] for any version."""
    out = []
    for rng, fixed in phrases.entry_rocm_ranges(e.data):
        if rng == "any":
            return []
        out.append(rng + (f",<{fixed}" if fixed else ""))
    return out


def expected_rocm(e, line: str) -> bool:
    ranges = rocm_ranges(e)
    return not ranges or any(line_reaches(line, r) for r in ranges)


def expected_gpu(e, gfx: str) -> bool:
    archs = (e.get("triggers") or {}).get("gpu_archs") or []
    return (not archs or "any" in archs or gfx in archs
            or any(a.endswith("-generic") and gfx.startswith(a[:-len("-generic")]) for a in archs))


def latest_per_platform(records: list[dict]) -> dict:
    """entry -> {platform key: its last record}, as the ledger's append order says."""
    out: dict = {}
    for r in records:
        out.setdefault(r["entry"], {})[fingerprint.entry_key(r["fingerprint"])] = r
    return out


def expected_verified(records_by_platform: dict, key: str) -> bool:
    """Whether the ledger's current records put the entry under a platform of the Verified filter."""
    for r in records_by_platform.values():
        if r.get("current") is not True:
            continue
        passed = {t for t, v in r["tiers"].items() if v.get("outcome") == "passed"}
        plat = r["fingerprint"].get("platform", "cpu")
        if (key == "rocm" and plat == "rocm" and passed) or (key == "cuda-gpu" and plat == "cuda" and "gpu" in passed) \
                or (key == "cpu" and plat not in ("rocm", "cuda") and passed & {"static", "toolchain"}):
            return True
    return False


def decoded(data: dict) -> dict:
    """Rows with values in place of indices: {id: {key: set of values, or "*"}}; runs as (p, t, o) tuples."""
    vals = {f["key"]: f["values"] for f in data["filters"]}
    parts = [f["key"] for f in sorted((f for f in data["filters"] if "part" in f), key=lambda f: f["part"])]
    out = {}
    for rid, row in data["rows"].items():
        out[rid] = {k: (v if v == filterdata.ANY else
                        {tuple(vals[parts[i]][x] for i, x in enumerate(run)) for run in v} if k == "runs" else
                        {vals[k][i] for i in v}) for k, v in row.items()}
    return out


class Stub:
    """An entry made up for a test: what the filters read of an entry."""
    def __init__(self, eid: str, klass: str, data: dict):
        self.id, self.klass, self.data = eid, klass, data

    def get(self, key, default=None):
        return self.data.get(key, default)

    def __getitem__(self, key):
        return self.data[key]


# --- the real knowledge base ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real():
    loaded, _ = entries.load_all(REPO)
    published = sorted((e for e in entries.active(loaded) if not drafts.is_draft(e.data)), key=lambda e: e.id)
    records, _ = ledger.read(ledger.default_path(REPO))
    records = verified.mark_current(records, {e.id: verified.digest(e, REPO) for e in published})
    lines = filterdata.rocm_lines(stale.load_releases(REPO))
    return SimpleNamespace(entries=published, records=records, lines=lines,
                           latest=ledger.latest_by_entry_platform(records))


@pytest.fixture(scope="module")
def table(real):
    return filterdata.entry_table(real.entries, real.latest, real.lines)


LINE_ROWS = [  # (line, range, some release of the line lies in the range)
    ("7.2", ">=6.0", True), ("5.7", ">=6.0", False), ("6.0", ">=6.0", True),
    ("7.2", ">=7.2.1,<7.13", True), ("7.12", ">=7.2.1,<7.13", True), ("7.13", ">=7.2.1,<7.13", False),
    ("6.4", ">=6.4.1", True), ("6.3", ">=6.4.1", False), ("6.2", "<6.2", False), ("6.1", "<6.2", True),
    ("7.0", ">7", True), ("7.0", ">7.0", True), ("7.2", "!=7.2", False), ("7.2", ">=7.2,!=7.2.0,!=7.2.1", True),
    ("7.2", "<=7.2", True), ("7.3", "<=7.2", False), ("7.2", "==7.2.3", True), ("7.3", "==7.2.3", False),
    ("7.2", "~=7.2.1", True), ("7.3", "~=7.2.1", False), ("7.2", ">7.2.4", True), ("10.2", "any", True),
    ("7.10", ">=7.9", True), ("7.9", ">=7.10", False), ("7.1", ">=6.1, <7.0", False),
]


@pytest.mark.parametrize("line,rng,want", LINE_ROWS)
def test_line_in_range_truth_table(line, rng, want):
    assert versions.line_in_range(line, rng) is want
    assert line_reaches(line, rng) is want          # the brute force agrees with the table, too


def test_line_in_range_agrees_with_brute_force_on_every_real_range(real):
    ranges = {r for e in real.entries for r in rocm_ranges(e)}
    assert ranges
    wrong = [(x, r) for r in sorted(ranges) for x in real.lines if versions.line_in_range(x, r) != line_reaches(x, r)]
    assert not wrong


def test_rocm_lines_come_from_releases_yaml_in_version_order(real):
    rel = stale.load_releases(REPO)["rocm"]
    assert set(real.lines) >= {str(x) for x in rel["lines"]}
    assert [versions.parse(x) for x in real.lines] == sorted(versions.parse(x) for x in real.lines)  # 7.9 < 7.10
    newest = versions.parse(rel["newest"])
    assert any(versions.parse(x) == newest[:2] for x in real.lines)
    # a newest release whose line is not listed yet is offered anyway
    assert filterdata.rocm_lines({"rocm": {"newest": "11.0.1", "lines": ["7.2"]}}) == ["7.2", "11.0"]


def test_rocm_filter_compares_version_numbers_on_the_real_entries(real, table):
    rows = decoded(table)
    from6 = [e for e in real.entries if rocm_ranges(e) == [">=6.0"]]
    assert from6, "an entry for ROCm >=6.0 is the example this test reads"
    for e in from6:
        assert "7.2" in rows[e.id]["rocm"] and "10.2" in rows[e.id]["rocm"] and "5.7" not in rows[e.id]["rocm"]
    for e in real.entries:
        want = {x for x in real.lines if expected_rocm(e, x)}
        got = set(real.lines) if rows[e.id]["rocm"] == filterdata.ANY else rows[e.id]["rocm"]
        assert got == want, e.id
        assert (rows[e.id]["rocm"] == filterdata.ANY) == (not rocm_ranges(e)), e.id


def test_any_gpu_entries_stay_under_every_gpu(real, table):
    rows = decoded(table)
    gpus = next(f for f in table["filters"] if f["key"] == "gpu")["values"]
    named = {a for e in real.entries for a in (e.get("triggers") or {}).get("gpu_archs") or []}
    assert set(gpus) == {a for a in named if re.fullmatch(r"gfx[0-9a-f]{3,4}", a)}
    anyg = [e.id for e in real.entries if rows[e.id]["gpu"] == filterdata.ANY]
    assert len(anyg) == sum(1 for e in real.entries if not (e.get("triggers") or {}).get("gpu_archs")
                            or "any" in e["triggers"]["gpu_archs"])
    for g in gpus:
        listed = {e.id for e in real.entries if rows[e.id]["gpu"] == filterdata.ANY or g in rows[e.id]["gpu"]}
        assert listed == {e.id for e in real.entries if expected_gpu(e, g)}, g
        assert set(anyg) <= listed, g


def test_a_gpu_family_lists_its_members():
    e = Stub("RMN-9999", "runtime", {"tags": [], "triggers": {"gpu_archs": ["gfx11-generic"]}})
    assert filterdata.entry_gpus(e, ["gfx90a", "gfx1100", "gfx1151", "gfx1201"]) == ["gfx1100", "gfx1151"]


def test_verified_names_each_platform_as_the_ledger_records_it(real, table):
    rows = decoded(table)
    own = latest_per_platform(real.records)
    seen = Counter()
    for e in real.entries:
        for key in ("rocm", "cuda-gpu", "cpu"):
            assert (key in rows[e.id]["verified"]) == expected_verified(own.get(e.id, {}), key), (e.id, key)
            seen[key] += key in rows[e.id]["verified"]
        assert rows[e.id]["verified"], e.id                      # every entry says something
    assert seen["cpu"] and seen["cuda-gpu"]                       # the real ledger has both kinds of run


def test_the_data_reaches_the_page_as_text():
    evil = Stub("RMN-0001", "compile", {"tags": ["</script><img src=x onerror=alert(1)>&amp;"], "triggers": {},
                                         "verification": {"tiers": []}})
    out = filterdata.script(filterdata.entry_table([evil], {}, ["7.2"]))
    body = out[out.index(">") + 1:out.rindex("</script>")]
    assert "<" not in body and ">" not in body and "&" not in body
    assert "</script><img" in json.dumps(json.loads(body))       # and it reads back as it was


# --- the verification matrix ------------------------------------------------------------------------------------

def fleet_of(records):
    """entry -> matrix column -> its latest record by date (later lines win ties), written out again."""
    out: dict = {}
    for r in records:
        col = out.setdefault(r["entry"], {})
        k = fingerprint.fleet_key(r["fingerprint"])
        if k not in col or r["date"] >= col[k]["date"]:
            col[k] = r
    return out


def test_matrix_runs_say_platform_tier_and_outcome_of_one_record(real):
    rows = decoded(filterdata.matrix_table(real.entries, indexpages.fleet_latest(real.records)))
    fleet = fleet_of(real.records)
    for e in real.entries:
        want = set()
        for r in fleet.get(e.id, {}).values():
            for t, v in r["tiers"].items():
                o = v["outcome"]
                group = "earlier" if r.get("current") is not True else "failed" if o in BAD else o
                want.add((fingerprint.kind(r["fingerprint"]), t, group))
        assert rows[e.id]["runs"] == want, e.id
        assert rows[e.id]["class"] == {e.klass}


def test_matrix_summary_counts_the_ledger(real):
    fleet = fleet_of(real.records)
    latest = indexpages.fleet_latest(real.records)
    cols = {k for per in fleet.values() for k in per}
    assert cols
    for k in cols:
        c = indexpages.summary_counts(real.entries, latest, k)
        recs = [fleet.get(e.id, {}).get(k) for e in real.entries]
        cur = [r for r in recs if r and r.get("current") is True]
        assert c["runs"]["none"] == recs.count(None)
        assert c["runs"]["earlier"] == sum(1 for r in recs if r and r.get("current") is not True)
        assert c["runs"]["passed"] == sum(r["outcome"] == "passed" for r in cur)
        assert c["runs"]["failed"] == sum(r["outcome"] in BAD for r in cur)
        for t, by in c["tiers"].items():
            assert by["passed"] == sum((r["tiers"].get(t) or {}).get("outcome") == "passed" for r in cur), (k, t)
            assert by["skipped"] == sum((r["tiers"].get(t) or {}).get("outcome") == "skipped" for r in cur), (k, t)
