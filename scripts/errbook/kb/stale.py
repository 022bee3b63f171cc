"""`errbook stale`: entries due for review.

An entry is due when it was not reviewed in the last REVIEW_DAYS days (or never), or when one of its
applies_to ranges ends before the newest release of that component recorded in errata/releases.yaml and the
range does not end at a fix (fixed_in): the statements were only checked up to an older release.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from errbook.kb import versions, yamlpos

REVIEW_DAYS = 180


def releases_path(root: Path) -> Path:
    return root / "errata" / "releases.yaml"


def load_releases(root: Path) -> dict:
    p = releases_path(root)
    if not p.is_file():
        return {}
    try:            # the entries' YAML rules: no aliases (an alias bomb), bounded depth and integers
        data = yamlpos.load(p.read_text(encoding="utf-8"), "releases.yaml").data or {}
    except yamlpos.YamlError as e:
        raise ValueError(f"{p}:{e.line}: {e.message}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{p}:1: releases are a mapping of component to its newest release")
    return {k: v for k, v in data.items() if isinstance(v, dict) and isinstance(v.get("newest"), str)}


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
            rel = releases.get(a.get("component"))
            if not rel or a.get("fixed_in"):
                continue
            try:
                ub = versions.upper_bound(a.get("versions", ""))
            except versions.RangeError as ex:   # this entry is due (its range needs fixing); the others go on
                line = e.line_of(("applies_to", i, "versions")) if hasattr(e, "line_of") else 1
                reasons.append(f"{e.rel}:{line}: applies_to[{i}].versions: {ex} (run errbook validate)")
                continue
            newest = versions.parse(rel["newest"])
            if ub is not None and newest is not None and ub <= newest:
                reasons.append(f"{a['component']} range '{a['versions']}' ends before the newest release "
                               f"{rel['newest']} and no fix ends it: re-check on the newer releases")
        if reasons:
            out.append({"id": e.id, "file": e.rel, "reviewed": rev, "reasons": reasons})
    return out
