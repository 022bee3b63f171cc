"""The opt-in local tally of `errbook triage --tally`: which entries matched, one line per triage, never any log
text. A FIFO or device at the tally's path must not block or take the ids (common.regfile)."""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from errbook.common import regfile

MAX_TALLY_BYTES = 256 << 20     # about 4 million triages


def tally_path(arg: str) -> Path:
    if arg:
        return Path(arg)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "errbook" / "tally.jsonl"


def record_tally(arg: str, results: list[dict]) -> str | None:
    """Append the matched ids (never any log text) to the tally; returns a message when that is impossible."""
    p = tally_path(arg)
    try:
        if p.is_dir():
            raise IsADirectoryError(21, "is a directory")
        p.parent.mkdir(parents=True, exist_ok=True)
        with os.fdopen(regfile.open_regular(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "a", encoding="utf-8") as f:
            f.write(json.dumps({"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                                "top": results[0]["id"], "matched": [r["id"] for r in results]}) + "\n")
    except OSError as e:
        return f"could not record the tally in {p}: {e.strerror or e}"
    return None


def read_tally(path: Path) -> tuple[dict[str, int], int]:
    """(matches per top entry, lines that are not tally records: corrupt, not UTF-8). Raises OSError."""
    counts: dict[str, int] = {}
    bad = 0
    raw = regfile.read_regular(path, MAX_TALLY_BYTES) if path.exists() else b""
    for line in raw.splitlines():
        try:
            rec = json.loads(line.decode("utf-8"))
            top = rec.get("top") if isinstance(rec, dict) else None
        except (UnicodeDecodeError, ValueError):
            top = None
        if isinstance(top, str) and top:
            counts[top] = counts.get(top, 0) + 1
        elif line.strip():
            bad += 1
    return counts, bad
