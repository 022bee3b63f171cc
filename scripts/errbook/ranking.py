"""From a finished scan to the answer: signature matches re-ranked by the log's environment evidence, or — when
no signature matched — the second stage's likely entries. One function for the CLI, `errbook eval` and the
tests; engine.js's rank() follows it step by step."""
from __future__ import annotations

from typing import Callable

from . import logfacts, matcher, retrieval


class Knowledge:
    """What ranking needs besides the scan: each entry's trigger profile, the second-stage index (built on
    first use, or given) and the calibrated thresholds."""

    def __init__(self, entries, index: retrieval.Index | Callable[[], retrieval.Index] | None = None,
                 cal: dict | None = None):
        self.profiles = {e.id: logfacts.profile(e) for e in entries if not e.withdrawn}
        self._index = index
        self.cal = cal or retrieval.calibration()

    @property
    def index(self) -> retrieval.Index | None:
        if callable(self._index):
            self._index = self._index()
        return self._index


def prepare(scan: matcher.Scan, know: Knowledge, head: str | bytes = "", machine_facts: dict | None = None,
            machine_bonus: dict | None = None):
    """Everything that does not depend on the second stage's thresholds: (signature results re-ranked by the
    environment evidence, the second stage's adjusted ranking or None when signatures matched, facts).
    machine_bonus: {entry id: (points, reasons)} for entries whose checks hold on the machine the log came
    from (checks.machine_bonus, from `errbook triage --facts`)."""
    facts = logfacts.from_notes(scan.notes)
    for k, v in (machine_facts or {}).items():
        facts.setdefault(k, v)
    bonus = machine_bonus or {}
    results = scan.results()
    if results:
        for r in results:
            delta, why = logfacts.adjust(know.profiles.get(r["id"], {}), facts)
            if r["id"] in bonus:
                delta, why = delta + bonus[r["id"]][0], why + bonus[r["id"]][1]
            if delta or why:
                r["score"] += delta
                r["environment"] = why
        results.sort(key=lambda r: (r["standing"], -r["score"], r["id"]))
        return results, None, facts
    if know.index is None:
        return [], None, facts
    lines = scan.notes.get(retrieval.SAMPLE_NAME) or []
    query = "\n".join(lines) if lines else retrieval.head_text(head)
    adjusted = []
    for s, i in know.index.scores(retrieval.tokens(query)):
        if not i.startswith("benign:"):
            delta, _ = logfacts.adjust(know.profiles.get(i, {}), facts)
            s = s * (1 + (delta + bonus.get(i, (0, []))[0]) / 100)
        adjusted.append((s, i))
    adjusted.sort(key=lambda x: (-x[0], x[1]))
    if bonus:
        facts = dict(facts, _machine_bonus=bonus)
    return [], adjusted, facts


def decide(prepared, know: Knowledge, cal: dict | None = None) -> list[dict]:
    results, adjusted, facts = prepared
    if adjusted is None:
        return results
    bonus = facts.get("_machine_bonus", {}) if isinstance(facts, dict) else {}
    out = retrieval.decide(adjusted, cal or know.cal)
    for r in out:
        r["standing"] = 0
        _, why = logfacts.adjust(know.profiles.get(r["id"], {}), facts)
        why = why + bonus.get(r["id"], (0, []))[1]
        if why:
            r["environment"] = why
    return out


def rank(scan: matcher.Scan, know: Knowledge, head: str | bytes = "", machine_facts: dict | None = None,
         machine_bonus: dict | None = None) -> list[dict]:
    """Ranked results; each carries "confidence": "match" (a signature matched) or "likely" (second stage)."""
    return decide(prepare(scan, know, head, machine_facts, machine_bonus), know)


def prepare_text(m: matcher.Matcher, know: Knowledge, text: str, source: str = ""):
    scan = m.new_scan()
    m.feed_text(scan, text, source)
    return prepare(scan, know, head=text)


def match_text(m: matcher.Matcher, know: Knowledge, text: str, source: str = "") -> list[dict]:
    """Both stages over an in-memory text (a pasted log, an evaluation log)."""
    return decide(prepare_text(m, know, text, source), know)
