"""From a finished scan to the answer: signature matches re-ranked by the log's environment evidence, or — when
no signature matched — the second stage's likely entries. One function for the CLI, `errbook eval` and the
tests; engine.js's rank() follows it step by step."""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from errbook.triage import corpus, environment, matcher, multicause, pageonly, retrieval


class Knowledge:
    """What ranking needs besides the scan: each entry's trigger profile, the second-stage index (built on
    first use, or given), the calibrated thresholds and the message pages (errata/messages/: a diagnosis whose only
    line is a multi-cause message is likely, triage/multicause.py; the matcher must be built with their notes,
    pipeline.build_matcher(..., pages=))."""

    def __init__(self, entries, index: retrieval.Index | Callable[[], retrieval.Index] | None = None,
                 cal: dict | None = None, pages: list[dict] | None = None):
        self.profiles = {e.id: environment.profile(e) for e in entries if not e.withdrawn}
        self.pages = list(pages or [])
        self.observing = {e.id: {s["id"] for s in e.get("signatures") or [] if s.get("level") == "observation"}
                          for e in entries if not e.withdrawn}
        self.generic = {e.id: {s["id"] for s in e.get("signatures") or []
                               if int(s.get("priority", 1)) <= multicause.GENERIC_PRIORITY}
                        for e in entries if not e.withdrawn}
        self.related = retrieval.related_map(entries)
        self._index = index
        self.cal = cal or corpus.calibration()

    @property
    def index(self) -> retrieval.Index | None:
        if callable(self._index):
            self._index = self._index()
        return self._index


class Prepared(NamedTuple):
    results: list            # signature results, re-ranked (empty when none matched)
    # (second-stage ranking adjusted by evidence, query weight, distinct terms) or None
    stage2: tuple[list[tuple[float, str]], float, dict[str, int]] | None
    facts: dict              # the environment facts used
    bonus: dict              # {entry id: (points, reasons)} from the machine's checks


def prepare(scan: matcher.Scan, know: Knowledge, machine_facts: dict | None = None,
            machine_bonus: dict | None = None) -> Prepared:
    """Everything that does not depend on the second stage's thresholds. machine_facts / machine_bonus come
    from `errbook triage --facts` (checks.to_log_facts, checks.machine_bonus): facts of the machine the log
    came from, and points for entries whose checks hold there."""
    facts = environment.from_notes(scan.notes)
    for k, v in (machine_facts or {}).items():
        if k not in facts:                    # the log's own facts win; remember which came from the machine
            facts[k] = v
            facts.setdefault("from_machine", []).append(k)
    bonus = machine_bonus or {}
    results = scan.results()
    if results:
        for r in results:
            delta, why = environment.adjust(know.profiles.get(r["id"], {}), facts)
            if r["id"] in bonus:
                delta, why = delta + bonus[r["id"]][0], why + bonus[r["id"]][1]
            if delta or why:
                r["score"] += delta
                r["environment"] = why
        # a diagnosis whose only line is a message several causes print is likely (multicause.py): diagnoses first
        pages = [p for p in know.pages if multicause.carried(p, scan.m.note_caps)]
        multicause.demote(results, pages, scan.notes, know.observing, know.generic)
    # a page's message that no result carries, and no diagnosis: the page's causes are likely (pageonly.py)
    pageonly.add(results, [p for p in know.pages if pageonly.carried(p, scan.m.note_caps)], scan.notes)
    if any(r["standing"] == 0 for r in results):           # a diagnosis (or a message's likely cause): the answer
        return Prepared(results, None, facts, bonus)
    # No diagnosis (observations are worth knowing, not an answer): the second stage may still answer.
    lines = scan.notes.get(retrieval.SAMPLE_NAME) or []
    if know.index is None or not retrieval.reports_trouble(beyond_observations(scan.m, results, lines)):
        return Prepared(results, None, facts, bonus)                # nothing reports trouble: no guess
    ranked, qnorm, distinct = know.index.scores(retrieval.tokens("\n".join(lines)))
    adjusted = []
    for s, i in ranked:
        if not i.startswith("benign:"):
            delta, _ = environment.adjust(know.profiles.get(i, {}), facts)
            s = s * (1 + (delta + bonus.get(i, (0, []))[0]) / 100)
        adjusted.append((s, i))
    adjusted.sort(key=lambda x: (-x[0], x[1]))
    return Prepared(results, (adjusted, qnorm, distinct), facts, bonus)


def beyond_observations(m: matcher.Matcher, results: list[dict], lines: list[str]) -> list[str]:
    """The query lines that no observation of this log accounts for. A line an observation signature (or a cosmetic
    entry's signature) matched shows a condition the entry says is not a problem, so it does not open the second
    stage: a healthy AMD_LOG_LEVEL=4 log is thousands of such lines ("Cannot find CO in the bundle", RMN-0427)."""
    ids = {r["id"] for r in results if r.get("level") == "observation"}
    if not ids:
        return lines
    rx = [s.compiled[0] for s in m.sigs
          if s.entry_id in ids and len(s.steps) == 1 and (s.observation or s.entry_id in m.cosmetic)]
    return [ln for ln in lines if not any(c.search(ln) for c in rx)]


def decide(prep: Prepared, know: Knowledge, cal: dict | None = None) -> list[dict]:
    """The answer: the signature results when one is a diagnosis; else the second stage's likely entries, then
    the observations. An entry both likely and observed is listed once, as the observation: its matched lines are
    evidence, the similarity only a guess."""
    if prep.stage2 is None:
        return prep.results
    out = retrieval.decide(*prep.stage2, cal or know.cal, related=know.related)
    for r in out:
        r["standing"] = 0
        r["level"] = "likely"
        _, why = environment.adjust(know.profiles.get(r["id"], {}), prep.facts)
        why = why + prep.bonus.get(r["id"], (0, []))[1]
        if why:
            r["environment"] = why
    observed = {r["id"] for r in prep.results}
    return [r for r in out if r["id"] not in observed] + prep.results


def answered(results: list[dict]) -> bool:
    """Whether the results answer the log: a diagnosis or a likely entry; observations alone are not an answer
    (matcher.py, answer levels)."""
    return any(r.get("level") in ("diagnosis", "likely") for r in results)


def rank(scan: matcher.Scan, know: Knowledge, machine_facts: dict | None = None,
         machine_bonus: dict | None = None) -> list[dict]:
    """Ranked results; each carries "confidence": "match" (a signature matched) or "likely" (second stage), and
    "level": "diagnosis", "observation" (matcher.py) or "likely" (the second stage, or a signature match whose only
    line is a multi-cause message: multicause.py)."""
    return decide(prepare(scan, know, machine_facts, machine_bonus), know)


def prepare_text(m: matcher.Matcher, know: Knowledge, text: str, source: str = ""):
    scan = m.new_scan()
    m.feed_text(scan, text, source)
    return prepare(scan, know)


def match_text(m: matcher.Matcher, know: Knowledge, text: str, source: str = "") -> list[dict]:
    """Both stages over an in-memory text (a pasted log, an evaluation log)."""
    return decide(prepare_text(m, know, text, source), know)
