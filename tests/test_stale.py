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


REL = {"rocm": {"newest": "10.0.0"}, "vllm": {"newest": "0.34.0"}}
TODAY = dt.date(2026, 12, 1)


def test_review_age_and_open_or_fixed_ranges():
    rows = stale.due([
        E("RMN-0001", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": ">=6.0", "checked_at": "10.0.0"}]),
        E("RMN-0002", reviewed="2026-01-01"),
        E("RMN-0003"),
        E("RMN-0004", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": ">=6.0,<7.0", "checked_at": "7.2"}]),
        E("RMN-0005", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": ">=6.0,<7.0", "fixed_in": "7.0"}]),
        E("RMN-0006", reviewed="2020-01-01", withdrawn="2024-01-01T00:00:00Z"),
        E("RMN-0007", reviewed="2026-11-30", applies_to=[{"component": "vllm", "versions": "<0.6", "fixed_in": "0.6"}]),
    ], REL, TODAY)
    got = {r["id"]: r["reasons"] for r in rows}
    assert sorted(got) == ["RMN-0002", "RMN-0003", "RMN-0004"]
    assert "334 days ago" in got["RMN-0002"][0] and got["RMN-0003"] == ["never reviewed"]
    assert "was checked at 7.2; rocm 10.0.0 is newer" in got["RMN-0004"][0]


def test_a_range_checked_before_the_newest_release_is_due():
    """Issue 25 item 3: an open-ended or 'any' range claims every newer release, so it is due as soon as
    releases.yaml names a release newer than the one it was checked against (checked_at)."""
    rows = stale.due([
        E("RMN-0010", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": ">=6.0", "checked_at": "7.2.3"}]),
        E("RMN-0011", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": "any", "checked_at": "9.9"}]),
        E("RMN-0012", reviewed="2026-11-30",
          applies_to=[{"component": "vllm", "versions": ">=0.6.3", "checked_at": "0.33.0"}]),
    ], REL, TODAY)
    got = {r["id"]: r["reasons"] for r in rows}
    assert sorted(got) == ["RMN-0010", "RMN-0011", "RMN-0012"]
    assert got["RMN-0010"] == ["rocm range '>=6.0' was checked at 7.2.3; rocm 10.0.0 is newer: re-check on the "
                               "newer releases, then raise checked_at"]
    assert "checked at 0.33.0; vllm 0.34.0 is newer" in got["RMN-0012"][0]


def test_a_range_checked_at_the_newest_release_is_not_due():
    """Checked at the newest release (also written 10.0 for 10.0.0), the range is not due, whether open, 'any'
    or closed by an upper bound nobody explained (the reviewer checked that bound on the newest release)."""
    rows = stale.due([
        E("RMN-0020", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": ">=6.0", "checked_at": "10.0.0"}]),
        E("RMN-0021", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": "any", "checked_at": "10.0"}]),
        E("RMN-0022", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": ">=6.0,<7.0", "checked_at": "10.0.0"}]),
    ], REL, TODAY)
    assert rows == []


def test_fixed_ranges_are_settled_unless_the_fix_is_not_released():
    rows = stale.due([
        E("RMN-0030", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": "<7.0", "fixed_in": "7.0", "checked_at": "7.0"}]),
        E("RMN-0031", reviewed="2026-11-30",
          applies_to=[{"component": "rocm", "versions": "<10.1", "fixed_in": "10.1", "checked_at": "9.0"}]),
    ], REL, TODAY)
    assert [r["id"] for r in rows] == ["RMN-0031"]        # 10.1 is not out: the range still claims 10.0.0


def test_untracked_component_or_missing_checked_at_is_due():
    """Freshness that cannot be compared is not assumed: a range with no checked_at, or of a component that
    releases.yaml does not track (or tracks with a newest that is no version number), is reported."""
    rows = stale.due([
        E("RMN-0040", reviewed="2026-11-30", applies_to=[{"component": "rocm", "versions": ">=6.0"}]),
        E("RMN-0041", reviewed="2026-11-30",
          applies_to=[{"component": "kokkos", "versions": "any", "checked_at": "5.2.1"}]),
        E("RMN-0042", reviewed="2026-11-30",
          applies_to=[{"component": "llama.cpp", "versions": "any", "checked_at": "11541"}]),
    ], dict(REL, **{"llama.cpp": {"newest": "b11541"}}), TODAY)
    got = {r["id"]: r["reasons"][0] for r in rows}
    assert "records no checked_at" in got["RMN-0040"]
    assert "does not track kokkos" in got["RMN-0041"]
    assert "'b11541' is not a version number" in got["RMN-0042"]


def test_cli_json_and_exit_code(mini_root):
    (mini_root / "errata" / "releases.yaml").write_text(yaml.safe_dump({"rocm": {"newest": "10.0.0"}}))
    r = errbook("stale", "--json", "--today", "2030-01-01", root=mini_root)
    assert r.returncode == 1 and json.loads(r.stdout)["due"][0]["id"] == "RMN-0001"


def test_cli_reports_a_newer_release_than_checked_at(mini_root):
    """RMN-0001 as it ships, against a releases.yaml one release ahead of its checked_at, then at it."""
    entry = yaml.safe_load((mini_root / "errata" / "compile" / "RMN-0001.yaml").read_text(encoding="utf-8"))
    at = {a["component"]: a["checked_at"] for a in entry["applies_to"]}
    newer = {c: {"newest": v + ".1" if v.count(".") < 2 else v.rsplit(".", 1)[0] + ".99", "checked": "2026-12-07",
                 "source": "test"} for c, v in at.items()}
    (mini_root / "errata" / "releases.yaml").write_text(yaml.safe_dump(newer))
    r = errbook("stale", "--today", entry["reviewed"], root=mini_root)
    assert r.returncode == 1 and b"RMN-0001" in r.stdout
    assert f"was checked at {at['rocm']}; rocm {newer['rocm']['newest']} is newer".encode() in r.stdout, r.stdout
    (mini_root / "errata" / "releases.yaml").write_text(yaml.safe_dump(
        {c: {"newest": v, "checked": "2026-12-07", "source": "test"} for c, v in at.items()}))
    r = errbook("stale", "--today", entry["reviewed"], root=mini_root)
    assert r.returncode == 0, r.stdout
    r = errbook("validate", root=mini_root)
    assert b"releases.yaml" not in r.stdout          # the release data is not read as an entry


# Entries still due after the issue-25 re-review (2026-12-07): for each, a component's newer release notes could
# not be read here (the range's evidence says which: rocBLAS 5.3-5.8, MIOpen 3.6, PyTorch 2.15's ROCm-only C++) or
# the range was not re-reviewed yet (LLVM 16-23, ROCr, TheRock, distribution and driver releases, ...). Re-review
# one against the newer release, raise its checked_at and drop it here: the test fails when an entry becomes due
# that is not listed (a new range without checked_at, a release added to releases.yaml) or a listed one is not due.
STILL_DUE = {
    "RMN-0002", "RMN-0004", "RMN-0005", "RMN-0012", "RMN-0022", "RMN-0023", "RMN-0026", "RMN-0036", "RMN-0037",
    "RMN-0050", "RMN-0051", "RMN-0052", "RMN-0053", "RMN-0054", "RMN-0055", "RMN-0057", "RMN-0058",
    "RMN-0076", "RMN-0077", "RMN-0079", "RMN-0093", "RMN-0095", "RMN-0096", "RMN-0098", "RMN-0099",
    "RMN-0110", "RMN-0111", "RMN-0112", "RMN-0113", "RMN-0114", "RMN-0115", "RMN-0118", "RMN-0119", "RMN-0130",
    "RMN-0131", "RMN-0136", "RMN-0137", "RMN-0140", "RMN-0141", "RMN-0142", "RMN-0144", "RMN-0150", "RMN-0151",
    "RMN-0153", "RMN-0156", "RMN-0161", "RMN-0162", "RMN-0163", "RMN-0164",
    "RMN-0191", "RMN-0194", "RMN-0197", "RMN-0199", "RMN-0200", "RMN-0201", "RMN-0208", "RMN-0209",
    "RMN-0210", "RMN-0212", "RMN-0214", "RMN-0215", "RMN-0218", "RMN-0232",
    "RMN-0233", "RMN-0240", "RMN-0250", "RMN-0252", "RMN-0253", "RMN-0281",
    # written 2026-12-07 with ranges checked at the newest release their authors could read: RMN-0380's pytorch
    # range at 2.11.0 (the ROCm wheels' metadata of 2.12 to 2.15 not read), RMN-0382's miopen range at 3.3.0
    "RMN-0380", "RMN-0382",
    # RMN-0433's therock range at 7.14 (2026-12-08): the launcher's stale python.exe path was read up to tag 7.14 and
    # on the release/therock-10.0 branch, not in the 10.0 or 10.1 wheels
    "RMN-0433",
    # RMN-0389's lammps range at 2024.2.7: FFT_KOKKOS's KISS default and HIP warning were read there and in a
    # later KOKKOS.cmake whose release is not known; the 22Jul2025 stable's was not read
    "RMN-0389",
    # wave-3 entries whose newest readable source is older than releases.yaml's newest: RMN-0391's hip range at
    # 6.2.2 (HIP's header now lives in rocm-systems, not stored past 2025-08), RMN-0395's rocm range at 6.2.2 (the
    # release shipping rocm-systems#6226 not identified), RMN-0396's amdgpu-dkms range at 6.16.13, RMN-0397's rocm
    # range at 6.4.3
    "RMN-0391", "RMN-0395", "RMN-0396", "RMN-0397",
    # RMN-0401's rocm range at 7.2.4 (the release carrying AMDMIGraphX#4962 not known), RMN-0402's at 10.0.0 (the
    # fault still reported on TheRock 10.0 in rocm-libraries#11714; nothing newer readable)
    "RMN-0401", "RMN-0402",
    # RMN-0410's llvm range at 15.0.6: the newest LLVM its runbook could compile with here (the message family's
    # wording was read in llvm-project issues up to 2025)
    "RMN-0410",
    # RMN-0405..0408: TheRock/ROCm ranges checked at 7.14 and PyTorch at 2.13.0, the newest releases whose notes,
    # sources or threads were readable for these TheRock, amd-smi and Windows hipcc behaviours
    "RMN-0405", "RMN-0406", "RMN-0407", "RMN-0408",
    # RMN-0417's rocm range at 6.2.2: the newest tagged hip-config.cmake.in read (ROCm/clr); later rocm-systems
    # revisions default to amd when unset, and the release that first ships that default was not identified
    "RMN-0417",
    # RMN-0418's kokkos range at 4.6.01: the newest Kokkos source readable here (snapshot 2025-06); the warning is
    # quoted from 4.7.01 in idefix#358, and 5.x's HIP sources were not read
    "RMN-0418",
    # RMN-0411's llama.cpp range at b10043: the newest tree read is the ggml-org/ggml sync of 2026-08-21 (later than
    # b10043); llama.cpp's own trees of builds up to b11541 were not read. RMN-0412's llama.cpp range likewise
    "RMN-0411", "RMN-0412",
    # RMN-0420's pytorch range at 2.14.1: torch/cuda/__init__.py read in the 2.3.1, 2.4.0 and 2.14.1 wheels; 2.15.0's
    # could not be downloaded here (the machine's pip constraints stop at torch 2.14.1)
    "RMN-0420",
    # RMN-0423's llvm range at 18.1: the compressed-bundle format was read in llvm PRs up to #152600 (Aug 2025, v3 by
    # default) and in clang's ClangOffloadBundler docs; which LLVM release first carries each default, and the
    # releases up to 23.1.6, were not read release by release
    "RMN-0423",
    # RMN-0425's llama.cpp range at b6816: the newest build whose log was read with these messages (llama.cpp#16725);
    # a stored ggml-cuda.cu of an unidentified later build has the same formats. RMN-0426's kokkos range at 5.1.0:
    # Kokkos' CHANGELOG read up to 5.1.0; 5.2.x and the error text of 5.x sources were not read
    "RMN-0425", "RMN-0426",
    # RMN-0427's rocm ranges at 6.2.2: the newest tagged clr sources read (rocm-6.0.0 to 6.2.2); the stored 2026
    # rocm-systems sources no longer print 'Cannot find CO in the bundle' and log 'Cannot find the function' at level
    # 3 (PR #6623), and the releases that first shipped those changes were not identified. RMN-0428's pytorch range at
    # 2.14.1: LoadHIP.cmake read in the 2.2.0, 2.3.x, 2.6.0 and 2.14.1 wheels; 2.15.0's could not be downloaded here
    "RMN-0427", "RMN-0428",
    # RMN-0424's llama.cpp range at b10043: GGML_NATIVE's default and the CPU backend's -march=native read in the
    # ggml-org/ggml sync of 2026-08-21 (later than b10043) and stored llama.cpp copies of unknown build; builds up to
    # b11541 were not read, as for RMN-0411
    "RMN-0424",
}


def test_the_knowledge_base_is_fresh_but_for_the_listed_entries():
    """Issue 25 item 3: every active entry reviewed within 180 days of its wave-2 review date and every applies_to
    range checked at its component's newest release (or ended by a released fix), except the entries listed above.
    The review-age part is dated so the suite does not start failing as the calendar moves; `errbook stale` says
    what is due now."""
    from pathlib import Path

    from errbook.kb import entries
    root = Path(__file__).resolve().parents[1]
    loaded, _ = entries.load_all(root)
    due = {r["id"] for r in stale.due(loaded, stale.load_releases(root), TODAY)}
    assert due - STILL_DUE == set(), "newly due: re-check them or list them with the reason"
    assert STILL_DUE - due == set(), "no longer due: remove them from STILL_DUE"
