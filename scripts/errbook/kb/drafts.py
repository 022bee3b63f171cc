"""Drafts: an entry marked `draft: true`, or one still holding a placeholder of `errbook new` (a text that starts
with TODO). A draft is previewed by `errbook serve` under a Draft banner, left out of the publication build, the
paste page's bundle and triage, and `errbook validate` reports what is unfinished in it as draft notes (findings
only with --strict)."""
from __future__ import annotations

from typing import Any

PLACEHOLDER = "TODO"       # every placeholder text of the scaffold (kb/scaffold.py) starts with it


def placeholders(data: Any, path: tuple = ()) -> list[tuple]:
    """The paths of the string values that still start with the placeholder mark."""
    out: list[tuple] = []
    if isinstance(data, dict):
        for k, v in data.items():
            out += placeholders(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += placeholders(v, path + (i,))
    elif isinstance(data, str) and data.lstrip().startswith(PLACEHOLDER):
        out.append(path)
    return out


def draft_reason(data: Any) -> str | None:
    """Why an entry's data is a draft (None: it is not one)."""
    if not isinstance(data, dict):
        return None
    if data.get("draft") is True:
        return "marked draft: true"
    n = len(placeholders(data))
    return f"{n} placeholder{'s' if n != 1 else ''} of errbook new still to fill in (TODO)" if n else None


def is_draft(data: Any) -> bool:
    return draft_reason(data) is not None
