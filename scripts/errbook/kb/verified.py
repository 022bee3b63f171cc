"""What a verification record vouches for: a digest of the content that a runbook run verified.

A ledger record is evidence about an entry *as it was when the runbook ran*. The digest covers exactly what a
run's verdict depends on:
- the entry's `signatures` (checks call `expect_signature` / `expect_no_signature` against them), less each
  signature's `level` (how triage presents a match; no check reads it),
- its machine checks (`triggers.checks`), its `fix` steps (less each step's `kind`, `expect` and `expect_zh`,
  see below), and `verification` (runbook path, tiers, parameters),
- the runbook's code cells, source only (outputs, metadata and Markdown prose do not change what runs).
Titles, prose, references, review dates and `facets` (how the guided finder files the entry: no check reads
them, like a signature's `level`) can change without un-verifying the entry. A record without a
digest predates this rule and counts as verifying an earlier version, as does one whose digest differs.

A fix step's `kind: confirm` and its expected output (`expect`, `expect_zh`) say how the page presents the step
(under Confirm, with the output a reader should see): no runbook reads them, each runbook reproduces the problem
and applies the fix in its own code cells (digested above), and marking a step as a check changes neither its text
nor its code. So adding or editing them leaves the digest as it was; a step's text, its code or the order of the
steps still changes it (moving a step to make it a confirm step is a change a runbook may not have seen).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

VERSION = "v1"                # ledgerrec.DIGEST_RE accepts this version's digests
PRESENTATION = ("kind", "expect", "expect_zh")   # fix-step keys left out of the digest (see above)
MAX_NOTEBOOK = 16 << 20      # bytes; a larger runbook is not read (validate reports it), and digests as unreadable


def _code_cells(path: Path) -> list[str] | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_NOTEBOOK:
            return None
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return None
    out = []
    for c in cells:
        if isinstance(c, dict) and c.get("cell_type") == "code":
            src = c.get("source", "")
            out.append("".join(src) if isinstance(src, list) else str(src))
    return out


def payload(entry, root: Path) -> dict:
    """The inputs of the digest, as one JSON-able object (documented above; `errbook ledger --explain` shows it)."""
    d = entry.data
    ver = d.get("verification") or {}
    runbook = ver.get("runbook")
    sigs = d.get("signatures")
    if isinstance(sigs, list):     # a signature's `level` only decides how triage presents a match: no check reads it
        sigs = [{k: v for k, v in s.items() if k != "level"} if isinstance(s, dict) else s for s in sigs]
    fix = d.get("fix")
    if isinstance(fix, list):      # how a step is presented (confirm, expected output) is no part of what ran
        fix = [{k: v for k, v in s.items() if k not in PRESENTATION} if isinstance(s, dict) else s for s in fix]
    return {"signatures": sigs, "checks": (d.get("triggers") or {}).get("checks"),
            "fix": fix, "verification": ver,
            "runbook": _code_cells(root / runbook) if isinstance(runbook, str) else None}


def digest(entry, root: Path) -> str:
    blob = json.dumps(payload(entry, root), sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return f"{VERSION}:{hashlib.sha256(blob.encode('utf-8')).hexdigest()}"


def is_current(record: dict, current: str) -> bool:
    return bool(current) and isinstance(record, dict) and record.get("digest") == current


def mark_current(records: list[dict], digests: dict) -> list[dict]:
    """Copies of the records, each with `current` set from its entry's digest (overriding anything it held)."""
    return [dict(r, current=is_current(r, digests.get(r.get("entry"), ""))) for r in records]


def unverified_tiers(entry, records: list[dict], current: str, key: str, runnable: list[str]) -> list[str]:
    """The tiers among `runnable` (those asked for that this machine can run) that no record of this machine
    (platform key `key`) vouches for at the current digest: a record counts for a tier when the run asked for
    it and the tier did not fail. `records` are the entry's valid ledger records, with `key_of` applied."""
    declared = [t for t in runnable if t in (entry.data.get("verification") or {}).get("tiers", [])]
    ok: set[str] = set()
    for r in records:
        if r.get("_key") != key or not is_current(r, current):
            continue
        asked = {t.strip() for t in str(r.get("requested_tiers", "")).split(",")}
        for t in declared:
            tr = (r.get("tiers") or {}).get(t)
            if t in asked and isinstance(tr, dict) and tr.get("outcome") in ("passed", "skipped"):
                ok.add(t)
    return [t for t in declared if t not in ok]
