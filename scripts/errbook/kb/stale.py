"""`errbook stale`: entries due for review.

An entry is due when it was not reviewed in the last REVIEW_DAYS days (or never), or when one of its
applies_to ranges may no longer say what the newest release does. Each range records `checked_at`: the newest
release of its component that the range's statements were checked against. errata/releases.yaml names each
component's newest release. The rule, per range:

- A range that ends at a fix (`fixed_in` at or below the newest release) is settled: its upper bound is a
  recorded change, and a newer release changes nothing about the versions before it. It is never due for a
  newer release.
- Every other range is due when the component's newest release is newer than `checked_at`: an open-ended or
  'any' range claims the newer release too, and a range that ends without a fix (an upper bound nobody
  explained) or at a fix not yet released may be overtaken by it. Re-check on the newer release's notes, then
  raise `checked_at` (and `reviewed`).
- A range without `checked_at`, or whose component releases.yaml does not track (or tracks with a `newest` that
  is not a version number), is due too: freshness that cannot be compared is not assumed.

`errbook validate` reports the same gaps as findings (a missing `checked_at`, an untracked component, a
`checked_at` newer than releases.yaml) and requires releases.yaml to track the components that machine checks
compare versions of (FACT_COMPONENTS maps a fact to its component).
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from errbook.kb import versions, yamlpos

REVIEW_DAYS = 180

# The component of every fact that machine checks compare with a `version` condition (errbook doctor
# --list-facts), so releases.yaml tracks what checks name too. None: a version outside what the book tracks
# (the NVIDIA driver, glibc, Python, GCC, CUDA). pkg.<name> facts not listed here map to <name> with '_' as '-'.
FACT_COMPONENTS = {
    "rocm.default_version": "rocm", "rocm.versions": "rocm",
    "tools.hip_version": "hip", "torch.hip": "hip",          # torch.version.hip: the HIP a wheel was built with
    "torch.version": "pytorch", "os.kernel": "linux",
    "triton.version": "triton", "pkg.triton": "triton", "pkg.pytorch_triton_rocm": "triton",
    "pkg.flash_attn": "flash-attention", "pkg.jaxlib": "jax", "pkg.jax_rocm60_plugin": "jax",
    "pkg.jax_rocm7_plugin": "jax", "pkg.onnxruntime_gpu": "onnxruntime", "pkg.onnxruntime_rocm": "onnxruntime",
    "pkg.onnxruntime_migraphx": "onnxruntime",
    "pkg.hip": None,                                          # PyPI 'hip' is an unrelated HTTP client (RMN-0007)
    "nvidia.driver": None, "os.glibc": None, "python.version": None, "torch.cuda": None,
    "gcc.newest_without_cxx_headers": None,
}
_UNMAPPED = object()


def fact_component(fact: str):
    """The releases.yaml component a version condition on `fact` compares against; None for a version the book
    does not track; _UNMAPPED when nobody decided (validate reports it)."""
    if fact in FACT_COMPONENTS:
        return FACT_COMPONENTS[fact]
    if fact.startswith("pkg."):
        return fact[4:].replace("_", "-")
    return _UNMAPPED


def releases_path(root: Path) -> Path:
    return root / "errata" / "releases.yaml"


def load_releases(root: Path, located: bool = False):
    """{component: {newest, checked, source, ...}} from errata/releases.yaml ({} when it is absent); with
    located, the yamlpos.Located document too (for line numbers)."""
    p = releases_path(root)
    if not p.is_file():
        return ({}, None) if located else {}
    try:            # the entries' YAML rules: no aliases (an alias bomb), bounded depth and integers
        doc = yamlpos.load(p.read_text(encoding="utf-8"), "releases.yaml")
    except yamlpos.YamlError as e:
        raise ValueError(f"{p}:{e.line}: {e.message}") from None
    data = doc.data or {}
    if not isinstance(data, dict):
        raise ValueError(f"{p}:1: releases are a mapping of component to its newest release")
    rel = {k: v for k, v in data.items() if isinstance(v, dict) and isinstance(v.get("newest"), str)}
    return (rel, doc) if located else rel


def range_due(a: dict, releases: dict) -> str | None:
    """Why one applies_to range is due for a newer release (None: it is not). Raises versions.RangeError for a
    range that cannot be read."""
    comp = a.get("component")
    rel = releases.get(comp)
    rng = a.get("versions", "")
    if rel is None:
        return (f"{comp} range '{rng}': errata/releases.yaml does not track {comp}, so a newer release cannot "
                f"be seen: add it")
    newest = versions.parse(rel["newest"])
    if newest is None:
        return (f"{comp} range '{rng}': releases.yaml's newest {comp} '{rel['newest']}' is not a version "
                f"number errbook stale can compare")
    versions.parse_range(rng)       # an unreadable range is reported by the caller
    fixed = versions.parse(a["fixed_in"]) if a.get("fixed_in") else None
    if fixed is not None and versions.compare(fixed, newest) <= 0:
        return None                 # ends at a released fix: settled
    checked = versions.parse(a["checked_at"]) if a.get("checked_at") else None
    if checked is None:
        return (f"{comp} range '{rng}' records no checked_at: the release it was checked against is unknown "
                f"(newest {comp}: {rel['newest']})")
    if versions.compare(checked, newest) < 0:
        return (f"{comp} range '{rng}' was checked at {a['checked_at']}; {comp} {rel['newest']} is newer: "
                f"re-check on the newer releases, then raise checked_at")
    return None


def due(entries, releases: dict, today: dt.date) -> list[dict]:
    out = []
    for e in entries:
        if e.withdrawn:
            continue
        reasons = []
        rev = e.get("reviewed")
        try:
            rdate = dt.date.fromisoformat(str(rev)) if rev else None
        except ValueError:
            rdate = None
        if rdate is None:
            reasons.append("never reviewed")
        elif (today - rdate).days > REVIEW_DAYS:
            reasons.append(f"last reviewed {rdate} ({(today - rdate).days} days ago)")
        for i, a in enumerate(e.get("applies_to") or []):
            if not isinstance(a, dict):
                continue
            try:
                why = range_due(a, releases)
            except versions.RangeError as ex:   # this entry is due (its range needs fixing); the others go on
                line = e.line_of(("applies_to", i, "versions")) if hasattr(e, "line_of") else 1
                reasons.append(f"{e.rel}:{line}: applies_to[{i}].versions: {ex} (run errbook validate)")
                continue
            if why:
                reasons.append(why)
        if reasons:
            out.append({"id": e.id, "file": e.rel, "reviewed": rev, "reasons": reasons})
    return out
