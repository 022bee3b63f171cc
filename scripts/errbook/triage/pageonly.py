"""One message, several causes, and no entry's signature for it: the page's causes as likely answers (issue 24).

A message page (errata/messages/) names a message and the entries that cause it. When a line of the log is the
page's message (one of the page's signatures matches it), the results contain no diagnosis, and no result carries
the page (none was demoted for it by triage/multicause.py, none shows the message among its lines), the page's
causes are added as *likely* answers (a cause already observed, its condition in the log, becomes one with its lines
kept; one already likely stays as it is): at most MAX_ADDED in all, ranked as the message block ranks them (how many of
each cause's log evidence the log shows, then the page's order), after the results' likely answers and before the
observations. Each says why (WHY). A diagnosis in the results adds nothing: the message is then only context.

Pure: the first pass finds the message as a note per page signature (`extras`, its first line's text), and the
causes' evidence as multicause.py's notes. A page is used only when the matcher carries both (`carried`).
assets/engine.js's `pageOnly` runs the same rule with JS_SPEC.
"""
from __future__ import annotations

from collections.abc import Iterable

from errbook.triage import messages, multicause

NOTE_PREFIX = "message-line:"
MAX_ADDED = 3
WHY = "the message '{message}' has {n} known causes; this log shows {shows} (see the message page: {page})"
NONE_SHOWN = "none of their evidence"
# What assets/engine.js ports this module with (tests/twins/multicause.yaml holds both engines to it).
JS_SPEC = {"note_prefix": NOTE_PREFIX, "max_added": MAX_ADDED, "why": WHY, "none_shown": NONE_SHOWN}


def note_name(page_id: str, index: int) -> str:
    return f"{NOTE_PREFIX}{page_id}/{index}"


def extras(pages: Iterable[dict]) -> list[tuple[str, str, bool, int]]:
    """The matcher's extra patterns (name, pattern, ignore_case, lines kept): each page signature's first line."""
    return [(note_name(p["id"], i), s["pattern"], bool(s.get("ignore_case")), 1)
            for p in pages for i, s in enumerate(p["signatures"])]


def carried(page: dict, note_caps: dict) -> bool:
    """Whether a matcher with these notes looks for the page's message and every log evidence of its causes."""
    return multicause.carried(page, note_caps) and all(n in note_caps for n, _, _, _ in extras([page]))


def _message_line(page: dict, notes: dict) -> str | None:
    for i in range(len(page["signatures"])):
        lines = notes.get(note_name(page["id"], i))
        if lines:
            return lines[0]
    return None


def _carries(r: dict, page: dict) -> bool:
    return r.get("message_page") == page["id"] or any(
        messages.is_message(page, ln["text"]) for ev in r.get("evidence", []) for ln in ev["lines"])


def _ranked(page: dict, notes: dict) -> list[tuple[str, list[str]]]:
    """(entry, what its found log evidence says) of each cause, in messages.rank's order over the log alone (no
    facts at this point)."""
    found = {ev["id"]: notes.get(multicause.note_name(page["id"], ev["id"])) or []
             for c in page["causes"] for ev in c["evidence"] if "pattern" in ev}
    block = messages.rank(page, found, None, {})
    return [(c["entry"], [i["says"] for i in c["evidence"] if i["kind"] == "log" and i["state"] == "found"])
            for c in block["causes"]]


def add(results: list[dict], pages: list[dict], notes: dict) -> list[dict]:
    """results (ranked, multicause.demote applied) with the causes of each page whose message alone is in the log.
    pages: the pages the matcher carries (`carried`); notes: the scan's notes."""
    if any(r.get("level") == "diagnosis" for r in results):
        return results
    added: list[dict] = []
    by_id = {r["id"]: r for r in results}
    for page in pages:
        line = _message_line(page, notes)
        if line is None or any(_carries(r, page) for r in results):
            continue
        for entry, says in _ranked(page, notes):
            if len(added) >= MAX_ADDED:
                break
            r = by_id.get(entry)
            if r is not None and (r["level"] == "likely" or any(r is a for a in added)):
                continue
            # an observation of a cause (its condition is in the log) becomes this likely answer, its lines kept
            r = r if r is not None else {"id": entry, "confidence": "likely"}
            why = WHY.format(message=line, n=multicause.causes(page), shows="; ".join(says) or NONE_SHOWN,
                             page=page["id"])
            r.update(score=len(says), standing=0, level="likely", note=why, message_page=page["id"], message_only=True)
            added.append(r)
    results[:] = [r for r in results if not any(r is a for a in added)]
    at = next((i for i, r in enumerate(results) if r["standing"] != 0), len(results))
    results[at:at] = added
    return results
