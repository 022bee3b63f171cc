"""The verification ledger: one JSON record per runbook run, appended to a JSONL file committed in the repo.

Appends are whole lines written with O_APPEND under an exclusive flock, so concurrent runs never interleave.
Reading reports a corrupt line with its number instead of dropping it silently.
"""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from . import paths

REQUIRED = ("entry", "runbook", "outcome", "tiers", "fingerprint", "date", "commit")


def default_path(root: Path) -> Path:
    return paths.ledger_path(root)


def append(path: Path, record: dict) -> None:
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise ValueError(f"ledger record lacks {missing}")
    line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        # A previous writer killed mid-line would leave no newline: start ours on a fresh line.
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":
                    line = b"\n" + line
        os.write(fd, line)
        os.fsync(fd)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def read(path: Path) -> tuple[list[dict], list[str]]:
    records, problems = [], []
    if not path.is_file():
        return records, problems
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError as e:
                problems.append(f"{path.name}:{n}: corrupt record ({e.msg})")
                continue
            if not isinstance(rec, dict) or any(k not in rec for k in REQUIRED):
                problems.append(f"{path.name}:{n}: record lacks required fields {list(REQUIRED)}")
                continue
            records.append(rec)
    return records, problems


def latest_by_entry_platform(records: list[dict]) -> dict[str, dict[str, dict]]:
    """entry id -> platform key -> newest record (the ledger is append-only, so later lines win)."""
    out: dict[str, dict[str, dict]] = {}
    for r in records:
        out.setdefault(r["entry"], {})[platform_key(r["fingerprint"])] = r
    return out


def platform_key(fp: dict) -> str:
    plat = fp.get("platform", "cpu")
    if plat == "cuda":
        return f"cuda:{fp.get('gpu')}"
    if plat == "rocm":
        return f"rocm:{fp.get('arch') or fp.get('gpu')}"
    return "cpu"
