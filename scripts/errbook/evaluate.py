"""`errbook eval`: triage quality on the labelled evaluation set in tests/triage_eval/.

real/<name>.log + <name>.yaml {expect: RMN-NNNN, source: URL}  — real logs from public issues
benign/<name>.log + <name>.yaml {source: ...}                   — normal output that must match nothing
"""
from __future__ import annotations

from pathlib import Path

import yaml

from . import entries as entries_mod
from . import matcher as matcher_mod
from . import triage


def load_set(root: Path) -> tuple[list[dict], list[dict]]:
    base = root / "tests" / "triage_eval"
    real, benign = [], []
    for kind, out in (("real", real), ("benign", benign)):
        for log in sorted((base / kind).glob("*.log")):
            meta_p = log.with_suffix(".yaml")
            meta = yaml.safe_load(meta_p.read_text(encoding="utf-8")) if meta_p.is_file() else {}
            out.append({"name": log.name, "path": log, **(meta or {})})
    return real, benign


def rank(m: matcher_mod.Matcher, path: Path) -> list[str]:
    scan = m.new_scan()
    with open(path, "rb") as f:
        triage.scan_stream(m, f, scan)
    return [r["id"] for r in scan.results()]


def evaluate(root: Path) -> dict:
    loaded, _ = entries_mod.load_all(root)
    active = list(entries_mod.active(loaded))
    m = matcher_mod.Matcher.from_entries(active, skipped=[])
    real, benign = load_set(root)
    rows = []
    for case in real:
        ids = rank(m, case["path"])
        rows.append({"name": case["name"], "expect": case.get("expect"), "got": ids[:3],
                     "top1": bool(ids) and ids[0] == case.get("expect"), "top3": case.get("expect") in ids[:3]})
    fps = []
    for case in benign:
        ids = rank(m, case["path"])
        if ids:
            fps.append({"name": case["name"], "got": ids[:3]})
    n = len(rows) or 1
    return {
        "real_logs": len(rows),
        "top1": round(sum(r["top1"] for r in rows) / n, 4),
        "top3": round(sum(r["top3"] for r in rows) / n, 4),
        "benign_logs": len(benign),
        "false_positive_rate": round(len(fps) / (len(benign) or 1), 4),
        "misses": [r for r in rows if not r["top1"]],
        "false_positives": fps,
        "entries_covered": len({r["expect"] for r in rows}),
    }
