"""One message, several causes: rank a message page's causes by the evidence a log (and a machine) shows.

Pure: data in, data out. The CLI (cli/msgblock.py, through triage/msgscan.py for the reading) and the paste page
(assets/engine.js, `messageBlock`) run the same rules:

1. A page applies when the first result is a diagnosis (or an answer demoted to likely by triage/multicause.py:
   the message alone does not say which cause), the page lists it as a cause or one of its evidence lines
   is the page's message, and some result's evidence line is the page's message (`deciding_page`): the line that
   decided the answer is a message several entries explain.
2. Each cause's evidence is looked for: a log pattern is *found* when a line of the same log matches it, else
   *missing*; a fact condition (the vocabulary of triggers.checks) is *found* when all of its conditions hold on
   the facts given with --facts, *absent* when one is false, *unknown* when a fact was not collected or no facts
   were given.
   A page's cause added as likely because the page's message alone is in the log (triage/pageonly.py) applies its
   page the same way.
3. Causes are ranked by how many of their evidence items were found; in a tie, the cause with more facts of the
   machine found comes first (a fact is about this machine, a line may be about any), then the page's order (the
   cause reported most often first). A cause with nothing found is still listed: the message alone does not exclude it.
"""
from __future__ import annotations

import functools

import re2

from errbook.machine import checks

MESSAGE_ID = "(message)"   # the evidence pass's name for the page's message itself (no evidence id has parentheses)
MAX_LINES = 1        # lines kept per evidence item: the first (the one both engines see first, whatever the chunking)
# What assets/engine.js ports this module with (tests/twins/messages.yaml holds both to the same answers).
JS_SPEC = {"max_lines": MAX_LINES, "message_id": MESSAGE_ID}


@functools.lru_cache(maxsize=512)
def _rx(pattern: str, ignore_case: bool):
    return re2.compile(("(?i)" if ignore_case else "") + pattern)


def is_message(page: dict, text: str) -> bool:
    """Whether a (cleaned) line is the page's message: one of its signatures matches it."""
    return any(_rx(s["pattern"], bool(s.get("ignore_case"))).search(text) for s in page["signatures"])


def _evidence_texts(r: dict):
    for ev in r.get("evidence", []):
        yield from ev["lines"]


def answers_by_message(results: list[dict]) -> bool:
    """Whether the first result may have a message block: a diagnosis, or a signature match demoted to likely
    because its only line is a multi-cause message (triage/multicause.py)."""
    return bool(results) and (results[0].get("level") == "diagnosis" or "message_page" in results[0])


def deciding_page(pages: list[dict], results: list[dict]) -> tuple[dict, dict | None] | None:
    """(the page, the message's line as the results show it) when the answer is a multi-cause message, else None.
    The line is None when the answer is a cause added for the page's message alone (pageonly.py): no result shows
    the line, the evidence pass finds it (msgscan.find_evidence, MESSAGE_ID)."""
    if not answers_by_message(results):
        return None
    top = results[0]
    if top.get("message_only"):     # a page's cause added for its message alone (pageonly.py): the line is found later
        return next(((p, None) for p in pages if p["id"] == top["message_page"]), None)
    for page in pages:
        causes = {c["entry"] for c in page["causes"]}
        top_is_message = any(is_message(page, ln["text"]) for ln in _evidence_texts(top))
        if top["id"] not in causes and not top_is_message:
            continue
        for r in results:
            line = next((ln for ln in _evidence_texts(r) if is_message(page, ln["text"])), None)
            if line is not None:
                return page, line
    return None


def log_patterns(page: dict) -> list[tuple[str, str, bool]]:
    """(evidence id, pattern, ignore_case) of every log-line evidence of the page, in page order."""
    return [(ev["id"], ev["pattern"], bool(ev.get("ignore_case")))
            for c in page["causes"] for ev in c["evidence"] if "pattern" in ev]


def _fact_state(when: list[dict], values: dict | None) -> tuple[str, list[dict]]:
    if values is None:
        return "unknown", []
    states = [checks.holds(c, values) for c in when]
    shown = [{"fact": c["fact"], "holds": s} for c, s in zip(when, states, strict=True)]
    if any(s is False for s in states):
        return "absent", shown
    if any(s is None for s in states):
        return "unknown", shown
    return "found", shown


def rank(page: dict, found: dict[str, list[dict]], values: dict | None, line: dict) -> dict:
    """The message block: the page's causes ranked by their evidence. found: evidence id -> the log's lines that
    matched it ({line, text[, source]}); values: doctor facts (facts.values_of), or None without --facts."""
    causes = []
    for order, cause in enumerate(page["causes"]):
        items = []
        for ev in cause["evidence"]:
            item = {"id": ev["id"], "says": ev["says"], "says_zh": ev["says_zh"]}
            if "pattern" in ev:
                lines = found.get(ev["id"]) or []
                item.update(kind="log", state="found" if lines else "missing", lines=lines)
            else:
                state, facts = _fact_state(ev["when"], values)
                item.update(kind="facts", state=state, facts=facts)
            items.append(item)
        score = sum(i["state"] == "found" for i in items)
        machine = sum(i["state"] == "found" and i["kind"] == "facts" for i in items)
        causes.append({"entry": cause["entry"], "score": score, "machine": machine, "order": order,
                       "evidence": items})
    causes.sort(key=lambda c: (-c["score"], -c["machine"], c["order"]))
    for c in causes:
        del c["order"], c["machine"]
    return {"id": page["id"], "title": page["title"], "title_zh": page["title_zh"], "line": line,
            "causes": causes, "other_causes": list(page.get("other_causes") or [])}
