"""What the filters of the index pages know about each entry, decided here and shipped to the page as data
(`tables.js` only intersects sets): a ROCm release line is in an entry's range by kb/versions.line_in_range, a
GPU is one of an entry's targets by triage/environment.arch_matches ("gfx11-generic" covers gfx1100), and a
verification is what the ledger's records at the entry's current digest say, per platform. No range, GPU or
ledger rule is written a second time in JavaScript.

Table data is {"filters": [{key, label, values, words?, any?, part?}], "rows": {id: {key: [i, ...]}}}, each i
an index into that filter's values (words: what the select shows, when not the values themselves); a row whose
value for a key is ANY matches every choice of that filter (an entry for any GPU stays listed when a GPU is
picked, and the page says how many such rows it kept). The matrix's rows carry "runs": one [platform, tier,
outcome] (indices into the filters with part 0, 1, 2) per tier of each latest record; those three filters
match together (one record must say all three), and the outcome "none" matches a row with no such run."""
from __future__ import annotations

import json
import re

from errbook.kb import versions
from errbook.machine import fingerprint
from errbook.triage.environment import arch_matches
from errbook.web.phrases import CLASSES, entry_rocm_ranges
from errbook.web.status import BAD, TIER_ORDER, tier_summary

ANY = "*"
# Verified: where the entry's current version passed, as the ledger records the platform of each run:
# key -> (the table cell's words, the filter's words).
VERIFIED = {
    "rocm": ("AMD GPU", "passed on an AMD GPU (ROCm)"),
    "cuda-gpu": ("CUDA gpu tier", "gpu tier passed on CUDA"),
    "cpu": ("CPU only", "passed on CPU only (static, toolchain)"),
    "failing": ("failing", "failing"),
    "earlier": ("earlier version", "verified an earlier version only"),
    "none": ("not verified", "not verified yet"),
}
PLATFORMS = {"rocm": "ROCm (AMD GPU)", "cuda": "CUDA GPU", "cpu": "CPU only"}
OUTCOMES = {"passed": "passed", "failed": "failed, crashed or timed out", "skipped": "skipped",
            "earlier": "earlier version", "none": "no run"}


def rocm_lines(releases: dict) -> list[str]:
    """The ROCm release lines the filter offers: releases.yaml's rocm `lines`, plus the newest's line."""
    rocm = releases.get("rocm") or {}
    lines = [str(x) for x in rocm.get("lines") or [] if versions.parse(str(x))]
    newest = versions.parse(str(rocm.get("newest", "")))
    if newest and not any(versions.compare(versions.parse(x) or (), newest[:2]) == 0 for x in lines):
        lines.append(".".join(map(str, newest[:2])))
    return sorted(set(lines), key=lambda x: versions.parse(x) or ())


def _gfx_key(a: str) -> tuple:
    m = re.fullmatch(r"gfx([0-9a-f]+?)([0-9a-f]{2})", a)
    return (int(m.group(1)), m.group(2)) if m else (9999, a)


def gpu_options(entries: list) -> list[str]:
    """Every GPU target an entry names (families such as gfx11-generic are matched, not offered)."""
    found = {a for e in entries for a in (e.get("triggers") or {}).get("gpu_archs") or []}
    return sorted((a for a in found if re.fullmatch(r"gfx[0-9a-f]{3,4}", a)), key=_gfx_key)


def entry_gpus(e, options: list[str]) -> list[str] | str:
    archs = (e.get("triggers") or {}).get("gpu_archs") or []
    if not archs or "any" in archs:
        return ANY
    return [g for g in options if arch_matches(g, archs)]


def entry_rocm(e, lines: list[str]) -> list[str] | str:
    """The release lines an entry's ROCm ranges reach (a fixed_in ends its range); ANY for any version."""
    ranges = [r + (f",<{fixed}" if fixed else "") for r, fixed in entry_rocm_ranges(e.data) if r != "any"]
    if len(ranges) < len(entry_rocm_ranges(e.data)) or not ranges:
        return ANY
    return [x for x in lines if any(versions.line_in_range(x, r) for r in ranges)]


def entry_verified(e, records_by_platform: dict) -> list[str]:
    """VERIFIED keys for one entry: the platforms its current version passed on (each as its runs record it),
    failing, or the reason it has none."""
    out = []
    cur = [r for r in records_by_platform.values() if r.get("current") is True]
    for r in cur:
        tiers = r.get("tiers") if isinstance(r.get("tiers"), dict) else {}
        passed = {t for t, v in tiers.items() if isinstance(v, dict) and v.get("outcome") == "passed"}
        plat = fingerprint.kind(r.get("fingerprint"))
        if plat == "rocm" and passed:
            out.append("rocm")
        elif plat == "cuda" and "gpu" in passed:
            out.append("cuda-gpu")
        elif plat == "cpu" and passed & {"static", "toolchain"}:
            out.append("cpu")
    summ = tier_summary(e, records_by_platform)
    if any(cls in BAD for _, cls, _ in summ):
        out.append("failing")
    if not out:
        out.append("earlier" if any("earlier version" in words for _, _, words in summ) else "none")
    return [k for k in VERIFIED if k in out]


def _compact(filters: list[dict], rows: dict) -> dict:
    """Values in rows become indices into their filter's values (the page carries each word once)."""
    index = {f["key"]: {v: i for i, (v, _) in enumerate(f["options"])} for f in filters}
    parts = sorted((f["part"], f["key"]) for f in filters if "part" in f)
    out_rows = {}
    for rid, row in rows.items():
        out: dict = {}
        for key, vals in row.items():
            if key == "runs":
                out[key] = [[index[k][x[p]] for p, k in parts] for x in vals]
            else:
                out[key] = vals if vals == ANY else [index[key][v] for v in vals]
        out_rows[rid] = out
    out_filters = []
    for f in filters:
        g = {k: v for k, v in f.items() if k != "options"}
        g["values"] = [v for v, _ in f["options"]]
        if any(v != w for v, w in f["options"]):
            g["words"] = [w for _, w in f["options"]]
        out_filters.append(g)
    return {"filters": out_filters, "rows": out_rows}


def entry_table(entries: list, latest: dict, lines: list[str]) -> dict:
    gpus = gpu_options(entries)
    tags = sorted({t for e in entries for t in e.data["tags"]})
    filters = [{"key": "class", "label": "Class", "options": [[k, CLASSES[k][0]] for k in CLASSES]},
               {"key": "tags", "label": "Tags", "options": [[t, t] for t in tags]},
               {"key": "gpu", "label": "GPU", "options": [[g, g] for g in gpus], "any": "any GPU"},
               {"key": "rocm", "label": "ROCm", "options": [[x, f"ROCm {x}"] for x in lines],
                "any": "any ROCm version"},
               {"key": "verified", "label": "Verified", "options": [[k, v[1]] for k, v in VERIFIED.items()]}]
    rows = {e.id: {"class": [e.klass], "tags": list(e.data["tags"]), "gpu": entry_gpus(e, gpus),
                   "rocm": entry_rocm(e, lines), "verified": entry_verified(e, latest.get(e.id, {}))}
            for e in entries}
    return _compact(filters, rows)


def outcome_group(rec: dict, outcome) -> str | None:
    """A tier's outcome as the matrix filter groups it: a run of an earlier version is "earlier"; None for an
    outcome the ledger check would not have let in."""
    if rec.get("current") is not True:
        return "earlier"
    return "failed" if outcome in BAD else outcome if outcome in ("passed", "skipped") else None


def entry_runs(per_column: dict) -> list[list[str]]:
    """[platform, tier, outcome] for every tier of each latest record of one entry (per matrix column)."""
    out: set[tuple[str, str, str]] = set()
    for rec in per_column.values():
        tiers = rec.get("tiers") if isinstance(rec.get("tiers"), dict) else {}
        for t, v in tiers.items():
            group = outcome_group(rec, v.get("outcome")) if isinstance(v, dict) else None
            if t in TIER_ORDER and group:
                out.add((fingerprint.kind(rec.get("fingerprint")), t, group))
    return [list(x) for x in sorted(out)]


def matrix_table(entries: list, fleet: dict) -> dict:
    kinds = {k[0] for per in fleet.values() for k in per}
    filters: list[dict] = [{"key": "class", "label": "Class", "options": [[k, CLASSES[k][0]] for k in CLASSES]},
               {"key": "platform", "label": "Platform", "part": 0,
                "options": [[k, v] for k, v in PLATFORMS.items() if k in kinds]},
               {"key": "tier", "label": "Tier", "part": 1, "options": [[t, f"{t} tier"] for t in TIER_ORDER]},
               {"key": "outcome", "label": "Outcome", "part": 2, "options": [[k, v] for k, v in OUTCOMES.items()]}]
    rows = {e.id: {"class": [e.klass], "runs": entry_runs(fleet.get(e.id, {}))} for e in entries}
    return _compact(filters, rows)


def script(data: dict) -> str:
    """The data as a JSON script block beside the filter's mount; no '<', '>' or '&' reaches the HTML."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" class="eb-filter-data">{text}</script>'
