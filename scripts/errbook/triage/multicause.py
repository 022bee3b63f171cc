"""One message, several causes: the answer level of an entry that only a multi-cause message names (issue 24).

A signature result is a *diagnosis* when a line of the log names its problem. Some messages are printed by
several problems (an errata/messages page with more than one cause, its `other_causes` counted). An entry is
demoted to *likely*, with a note that says why, when

  (a) every line that made it a diagnosis (the evidence of its non-observation signatures) is that page's message,
  (b) the page names more than one cause, and
  (c) none of this entry's evidence patterns on that page (`causes[].evidence` for this entry) matched the log.

Its own evidence in the log, or a diagnosing line of its own that is not the page's message, keeps it a diagnosis.

A message no page lists can be generic too: a signature of priority 1 is, by the schema, "generic, only supporting
evidence" (hipErrorOutOfMemory, Too many open files, a CMake cache warning, libdrm's missing amdgpu.ids). An
entry all of whose diagnosing signatures are generic is demoted the same way when no page decides it, with its own
note: alone, such a line seldom names the problem the log is about.
The level is all that changes: the entry keeps its place among the answers, after the diagnoses
(ranking.prepare), and the message block (triage/messages.py) still ranks the page's causes.

Pure: the first pass finds the evidence as notes (`extras`: one note per log evidence of each page, its first line
only), so no second read of the log is needed. A page is used only when the scan's matcher carries all of its
notes (`carried`): a matcher built without them never demotes for want of evidence it did not look for.
assets/engine.js's `demote` runs the same rule with JS_SPEC.
"""
from __future__ import annotations

from collections.abc import Iterable

from errbook.triage import messages

NOTE_PREFIX = "message:"
WHY = "this message has {n} known causes; no line of this log says which (see the message page: {title})"
GENERIC_WHY = "a generic line: alone it seldom names the problem, and no other line of this log names this one"
GENERIC_PRIORITY = 1      # the schema's "generic, only supporting evidence"
# What assets/engine.js ports this module with (tests/test_engines.py and tests/test_twins.py hold both to it).
JS_SPEC = {"note_prefix": NOTE_PREFIX, "why": WHY, "generic_why": GENERIC_WHY, "generic_priority": GENERIC_PRIORITY}


def note_name(page_id: str, evidence_id: str) -> str:
    return f"{NOTE_PREFIX}{page_id}/{evidence_id}"


def extras(pages: Iterable[dict]) -> list[tuple[str, str, bool, int]]:
    """The matcher's extra patterns (name, pattern, ignore_case, lines kept) that find every log evidence of the
    pages in the first pass."""
    return [(note_name(p["id"], ev["id"]), ev["pattern"], bool(ev.get("ignore_case")), 1)
            for p in pages for c in p["causes"] for ev in c["evidence"] if "pattern" in ev]


def carried(page: dict, note_caps: dict) -> bool:
    """Whether a matcher with these notes (Matcher.note_caps) looks for every log evidence of the page."""
    return all(name in note_caps for name, _, _, _ in extras([page]))


def causes(page: dict) -> int:
    """How many causes the page names: its entries and the other reported causes."""
    return len(page["causes"]) + len(page.get("other_causes") or [])


def _diagnosing_lines(r: dict, observing: set[str]) -> list[dict]:
    """The lines that made r a diagnosis: its evidence, less that of observation signatures (all of it when a line
    is shown only under an observation signature)."""
    lines = [ln for ev in r.get("evidence", []) if ev["signature"] not in observing for ln in ev["lines"]]
    return lines or [ln for ev in r.get("evidence", []) for ln in ev["lines"]]


def _message_only(r: dict, pages: list[dict], observing: set[str]) -> dict | None:
    """The first multi-cause page whose message is every line that made r a diagnosis, or None."""
    lines = _diagnosing_lines(r, observing)
    if not lines:
        return None
    for page in pages:
        if causes(page) > 1 and all(messages.is_message(page, ln["text"]) for ln in lines):
            return page
    return None


def _has_evidence(page: dict, entry: str, notes: dict) -> bool:
    return any(notes.get(note_name(page["id"], ev["id"]))
               for c in page["causes"] if c["entry"] == entry for ev in c["evidence"] if "pattern" in ev)


def generic_only(r: dict, observing: set[str], generic: set[str]) -> bool:
    """Whether every signature that made r a diagnosis is generic (priority 1)."""
    sigs = {ev["signature"] for ev in r.get("evidence", []) if ev["signature"] not in observing}
    return bool(sigs) and sigs <= generic


def demote(results: list[dict], pages: list[dict], notes: dict, observing: dict[str, set[str]],
           generic: dict[str, set[str]] | None = None) -> list[dict]:
    """results (a scan's, matcher.Scan.results) with the rule applied, diagnoses first. pages: the message pages
    the matcher carries; notes: the scan's notes; observing: entry id -> its observation signatures' ids; generic:
    entry id -> its generic signatures' ids. A demoted result gets level "likely" and a note saying why; one
    demoted for a page also gets "message_page" (the page's id), one demoted for a generic line "generic": True."""
    for r in results:
        if r.get("level") != "diagnosis":
            continue
        obs = observing.get(r["id"], set())
        page = _message_only(r, pages, obs)
        if page is not None:                  # the page's evidence decides: the entry's own keeps the diagnosis
            if not _has_evidence(page, r["id"], notes):
                r.update(level="likely", note=WHY.format(n=causes(page), title=page["title"]),
                         message_page=page["id"])
        elif generic is not None and generic_only(r, obs, generic.get(r["id"], set())):
            r.update(level="likely", note=GENERIC_WHY, generic=True)
    results.sort(key=lambda r: (r["standing"], r.get("level") != "diagnosis", -r["score"], r["id"]))
    return results
