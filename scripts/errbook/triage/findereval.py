"""The guided finder measured on the labelled symptom-only logs (`errbook eval`, issue 24's done-when table).

A simulated user answers each question the finder asks (triage/finder.py), the log's text orders the list, and a
log counts as found when its expected entry is in the short list (the top 5). Two answer sources, both reported:
- "label": the log's own `finder:` mapping (component / happened / gpu), written from the log text and its
  thread's title only, never from the expected entry; a question the mapping does not answer, or whose choices
  do not include its answer, gets "unknown" (the user's "Don't know").
  Only logs whose label has the mapping are counted (the test split's symptom-only logs carry one).
- "entry": the expected entry's own facets, answering each question with the value that fits the entry and
  keeps the fewest candidates: an optimistic upper bound (a real user does not know which entry is right).
Logs labelled `none` have no entry to find; they are counted apart. Scoring is leave-one-thread-out like the
rest of eval: the index a log is scored with holds no document of its own thread (Evaluator.index_for).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

from errbook.kb import facets
from errbook.triage import finder, retrieval

SOURCES = ("label", "entry")
GROUPS = ("seen", "dev", "test")


def _answer_from_label(label: Mapping, q: finder.Question) -> str:
    """The label's answer when the question offers it; else "unknown", as a user picks "Don't know" when their
    answer is not among the choices (the finder offers only choices that keep an entry)."""
    value = str(label.get(q.facet) or "")
    return value if value in {c.value for c in q.choices} else finder.UNKNOWN


def _answer_from_entry(entry: finder.Entry | None, q: finder.Question, *, vocab: facets.Vocabulary) -> str:
    if entry is None:
        return finder.UNKNOWN
    have = set(entry.facets.get(q.facet, ()))
    wildcard = vocab.facets[q.facet].wildcard
    fitting = [c for c in q.choices if c.value != finder.UNKNOWN and (c.value in have or wildcard in have)]
    return min(fitting, key=lambda c: c.count).value if fitting else finder.UNKNOWN


def simulate(entries: list[finder.Entry], vocab: facets.Vocabulary, expect: str, text: str,
             scores: Mapping[str, float] | None, answer: Callable[[finder.Question], str]) -> dict:
    """One log through the finder: the answers given, the short list and whether the expected entry is in it."""
    answers: dict[str, str] = {}
    res = finder.find(entries, vocab, answers, text, scores)
    while res.question is not None:
        answers[res.question.facet] = answer(res.question)
        res = finder.find(entries, vocab, answers, text, scores)
    got = [it.id for it in res.shortlist]
    return {"answers": answers, "inferred": {k: v for k, (v, _w) in res.inferred.items()}, "got": got,
            "candidates": res.candidates, "top5": expect in got, "top1": bool(got) and got[0] == expect}


def _rate(n: int, d: int) -> float | None:
    return round(n / d, 4) if d else None


def summarize(rows: list[dict]) -> dict:
    return {"logs": len(rows), "top5": _rate(sum(r["top5"] for r in rows), len(rows)),
            "top1": _rate(sum(r["top1"] for r in rows), len(rows)),
            "questions": _rate(sum(len(r["answers"]) for r in rows), len(rows))}


def run(logs: list[dict], entries: list[finder.Entry], vocab: facets.Vocabulary,
        index_for: Callable[[str], retrieval.Index]) -> dict:
    """logs: the symptom-only labelled logs, each {name, path, expect, group, thread, finder (optional)};
    index_for(thread): the index without that thread. Figures per answer source and group."""
    by_id = {e.id: e for e in entries}
    rows = []
    for c in logs:
        text = Path(c["path"]).read_text(encoding="utf-8", errors="replace")
        scores = finder.log_scores(index_for(c["thread"]), text)
        label = c.get("finder") if isinstance(c.get("finder"), dict) else None
        askers: dict[str, Callable[[finder.Question], str]] = {
            "entry": partial(_answer_from_entry, by_id.get(c["expect"]), vocab=vocab)}
        if label is not None:
            askers["label"] = partial(_answer_from_label, label)
        for source in (s for s in SOURCES if s in askers):
            row = simulate(entries, vocab, c["expect"], text, scores, askers[source])
            rows.append(dict(row, name=c["name"], expect=c["expect"], group=c["group"], source=source))
    out: dict = {src: {g: summarize([r for r in rows if r["source"] == src and r["group"] == g])
                       for g in GROUPS if any(r["source"] == src and r["group"] == g for r in rows)}
                 for src in SOURCES}
    out["misses"] = [r for r in rows if not r["top5"]]
    out["rows"] = rows
    return out


def symptom_logs(labelled: list[dict], group_of: Callable[[dict], tuple[str, str]],
                 vocab: facets.Vocabulary) -> tuple[list[dict], dict]:
    """The symptom-only logs with an expected entry, each with its group and thread; and the count of those
    labelled `none` per group (nothing to find). A `finder:` mapping with a value the vocabulary lacks is an
    error naming the label (figures are never computed without it)."""
    out: list[dict] = []
    none: dict[str, int] = {}
    for c in labelled:
        if c.get("kind") != "symptom-only":
            continue
        if c.get("finder") is not None:
            try:
                if not isinstance(c["finder"], dict):
                    raise finder.FinderError("a mapping of component, happened, gpu")
                finder.check_answers(vocab, {str(k): str(v) for k, v in c["finder"].items()})
            except finder.FinderError as e:
                raise finder.FinderError(f"{c['name']} (label finder:): {e}") from None
        thread, group = group_of(c)
        exp = str(c.get("expect", "none"))
        if exp == "none":
            none[group] = none.get(group, 0) + 1
            continue
        out.append({"name": c["name"], "path": c["path"], "expect": exp, "group": group, "thread": thread,
                    "finder": c.get("finder")})
    return out, none
