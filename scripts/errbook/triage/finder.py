"""The guided finder for logs with no diagnostic line (`errbook find`, the MCP `find` tool): a few questions about
the entries' facets (kb/facets.py), then a short list, each entry with the check that confirms it.

Pure: it reads no file. Given the entries, the vocabulary, the answers so far and, optionally, the log's text, its
BM25 scores (`log_scores`, the second stage's index: one source of truth for similarity) and a machine's facts, it
returns either the next question or the short list.

- Candidates: the active entries that fit every answer (an entry fits an answer when it names that value, or the
  facet's wildcard, gpu: any). "unknown" (don't know) is always a choice and narrows nothing.
- A question the log or the facts answer is not asked: a facts file's GPU targets give the GPU family when they
  all belong to one; a log whose lines match one `happened` value's `log` patterns (a compiler's error, a Python
  import error) answers "what happened". An explicit answer always wins over an inferred one.
- The next question is the unanswered facet whose answer is expected to leave the fewest candidates (each choice
  weighted by how many candidates it keeps), ties in facets.FACETS order; a facet whose every choice keeps every
  candidate is never asked. At most MAX_QUESTIONS questions; none once SHORT_LIST or fewer candidates remain.
- The short list: the candidates by the log's BM25 score when a log is given (entries it does not score follow),
  else in a stable order: the entries that name the fewest components and happenings first (the most specific to
  the answers), then by id. At most SHORT_LIST.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from errbook.errors import ErrbookError
from errbook.kb import confirm, facets
from errbook.triage import retrieval

MAX_QUESTIONS = 3
SHORT_LIST = 5
UNKNOWN = "unknown"
UNKNOWN_LABEL = ("Don't know", "不知道")
LOG_CHARS = 4 << 20          # characters of a log read for the facts it states (the start of a huge log is enough)
QUERY_CHARS = 256 << 10      # characters of a log used as the BM25 query
GPU_FACTS = ("gpu.runtime_gfx", "gpu.gfx", "gpu.rocminfo_gfx")   # the first a facts file states is read


# What the paste page's port (web/assets/finder.js) runs with, shipped as it is in the bundle (web/bundle.py); the
# vocabulary and the entries' facets are data beside it (bundle_data).
JS_SPEC = {"max_questions": MAX_QUESTIONS, "short_list": SHORT_LIST, "unknown": UNKNOWN,
           "unknown_label": list(UNKNOWN_LABEL), "log_chars": LOG_CHARS, "query_chars": QUERY_CHARS,
           "gpu_facts": list(GPU_FACTS), "facets": list(facets.FACETS)}


class FinderError(ErrbookError, ValueError):
    """An answer the finder cannot use: an unknown facet or value (the message lists the choices)."""


@dataclass(frozen=True)
class Choice:
    value: str
    label: str
    label_zh: str
    count: int               # candidates left if this is the answer


@dataclass(frozen=True)
class Question:
    facet: str
    text: str
    text_zh: str
    number: int              # 1 for the first question asked, ...
    choices: tuple[Choice, ...]


@dataclass(frozen=True)
class Item:
    id: str
    title: str
    title_zh: str
    klass: str
    score: float | None      # the log's BM25 score, None without a log
    check: confirm.Check | None


@dataclass(frozen=True)
class Entry:
    """What the finder needs of an entry (from_entries builds them from kb.entries.Entry)."""
    id: str
    title: str
    title_zh: str
    klass: str
    facets: Mapping[str, tuple[str, ...]]
    check: confirm.Check | None


@dataclass
class Result:
    question: Question | None            # the next question, or None: the short list is the answer
    shortlist: list[Item]                # the candidates so far, best first, at most SHORT_LIST
    candidates: int                      # how many entries fit the answers
    answers: dict[str, str]              # the answers given
    inferred: dict[str, tuple[str, str]] = field(default_factory=dict)   # facet -> (value, why)

    @property
    def done(self) -> bool:
        return self.question is None


def from_entries(active, vocab: facets.Vocabulary) -> list[Entry]:
    """The finder's view of the active entries (withdrawn ones are never candidates)."""
    return [Entry(e.id, str(e.get("title", "")), str(e.get("title_zh") or e.get("title", "")), e.klass,
                  facets.of_entry(e.data, vocab), confirm.confirm_check(e.data))
            for e in active if not e.withdrawn]


def bundle_data(entries: list[Entry], vocab: facets.Vocabulary) -> dict:
    """The vocabulary (its patterns as source text: the page compiles them with the "m" flag, as Python does
    with re.MULTILINE) and the entries as the finder sees them, in this order, for the paste page."""
    def value(v: facets.Value) -> dict:
        return {"id": v.id, "label": v.label, "label_zh": v.label_zh, "log": [rx.pattern for rx in v.log],
                "gfx": v.gfx.pattern if v.gfx is not None else None}
    return {"vocabulary": {name: {"question": f.question, "question_zh": f.question_zh, "wildcard": f.wildcard,
                                  "values": [value(v) for v in f.values]} for name, f in vocab.facets.items()},
            "entries": [{"id": e.id, "title": e.title, "title_zh": e.title_zh, "class": e.klass,
                         "facets": {k: list(v) for k, v in e.facets.items()},
                         "check": e.check.as_dict() if e.check else None} for e in entries]}


def log_scores(index: retrieval.Index, text: str) -> dict[str, float]:
    """Each entry's BM25 score for the log, with the second stage's index and tokenizer. The query is the
    log's whole text (its first QUERY_CHARS), not only the lines that report trouble as in the second stage: a
    symptom-only log's words are in its description and tables (on the dev split's symptom-only logs, with no
    answers, the right entry was in the top 5 for 56 of 64 logs this way, 54 with the trouble lines only).
    Benign documents are left out."""
    ranked, _qnorm, _distinct = index.scores(retrieval.tokens(text[:QUERY_CHARS]))
    return {i: s for s, i in ranked if not i.startswith("benign:")}


def check_answers(vocab: facets.Vocabulary, answers: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for name, value in answers.items():
        f = vocab.facets.get(name)
        if f is None:
            raise FinderError(f"no question '{name}' (one of: {', '.join(facets.FACETS)})")
        if value != UNKNOWN and (value not in f.ids or value == f.wildcard):
            choices = [v for v in f.ids if v != f.wildcard] + [UNKNOWN]
            raise FinderError(f"'{value}' is not an answer to {name} (one of: {', '.join(choices)})")
        out[name] = value
    return out


def infer(vocab: facets.Vocabulary, log: str | None, machine: Mapping | None) -> dict[str, tuple[str, str]]:
    """What the log and the facts answer by themselves: facet -> (value, why)."""
    out: dict[str, tuple[str, str]] = {}
    for name in GPU_FACTS:
        gfx = (machine or {}).get(name)
        if isinstance(gfx, list) and gfx:
            fams = {vocab.family_of_gfx(str(g)) for g in gfx}
            if len(fams) == 1 and None not in fams:
                out["gpu"] = (str(fams.pop()), f"the facts file's {name}: {', '.join(map(str, gfx))}")
            break
    if log:
        text = log[:LOG_CHARS]
        hits = []
        for v in vocab.facets["happened"].values:
            m = next((m for rx in v.log if (m := rx.search(text))), None)
            if m:
                hits.append((v.id, m.group(0).strip()))
        if len(hits) == 1:
            out["happened"] = (hits[0][0], f"the log has the line: {hits[0][1][:120]}")
    return out


def _fits(e: Entry, name: str, value: str, vocab: facets.Vocabulary) -> bool:
    if value == UNKNOWN:
        return True
    have = e.facets.get(name, ())
    return value in have or (vocab.facets[name].wildcard or "\0") in have


def _choices(cands: list[Entry], name: str, vocab: facets.Vocabulary) -> tuple[Choice, ...]:
    f = vocab.facets[name]
    out = []
    for v in f.values:
        if v.id == f.wildcard:
            continue
        n = sum(_fits(e, name, v.id, vocab) for e in cands)
        if n:
            out.append(Choice(v.id, v.label, v.label_zh, n))
    return (*out, Choice(UNKNOWN, *UNKNOWN_LABEL, len(cands)))


def _expected_left(choices: tuple[Choice, ...]) -> float:
    counts = [c.count for c in choices if c.value != UNKNOWN]
    return sum(n * n for n in counts) / sum(counts) if counts else float("inf")


def next_question(cands: list[Entry], settled: set[str], vocab: facets.Vocabulary,
                  number: int) -> Question | None:
    best: tuple[float, int, tuple[Choice, ...], str] | None = None
    for rank, name in enumerate(facets.FACETS):
        if name in settled:
            continue
        choices = _choices(cands, name, vocab)
        if all(c.count == len(cands) for c in choices):       # no answer would narrow anything
            continue
        key = (_expected_left(choices), rank, choices, name)
        if best is None or key[:2] < best[:2]:
            best = key
    if best is None:
        return None
    f = vocab.facets[best[3]]
    return Question(f.name, f.question, f.question_zh, number, best[2])


def _specificity(e: Entry) -> int:
    return len(e.facets.get("component", ())) + len(e.facets.get("happened", ()))


def order(cands: list[Entry], scores: Mapping[str, float] | None) -> list[Entry]:
    if scores:
        return sorted(cands, key=lambda e: (-scores.get(e.id, 0.0), _specificity(e), e.id))
    return sorted(cands, key=lambda e: (_specificity(e), e.id))


def find(entries: list[Entry], vocab: facets.Vocabulary, answers: Mapping[str, str] | None = None,
         log: str | None = None, scores: Mapping[str, float] | None = None,
         machine: Mapping | None = None) -> Result:
    """The next question, or (question None) the short list. answers: facet -> value or "unknown"; scores: the
    log's BM25 scores (log_scores), which order the list; machine: a facts file's name -> value."""
    given = check_answers(vocab, answers or {})
    inferred = {k: v for k, v in infer(vocab, log, machine).items() if k not in given}
    settled = {**{k: v[0] for k, v in inferred.items()}, **given}
    cands = [e for e in entries if all(_fits(e, k, v, vocab) for k, v in settled.items())]
    asked = len(given)
    question = None
    if asked < MAX_QUESTIONS and len(cands) > SHORT_LIST:
        question = next_question(cands, set(settled), vocab, asked + 1)
    ranked = order(cands, scores)[:SHORT_LIST]
    items = [Item(e.id, e.title, e.title_zh, e.klass, None if scores is None else round(scores.get(e.id, 0.0), 4),
                  e.check) for e in ranked]
    return Result(question, items, len(cands), given, inferred)


def as_json(res: Result, url_of=None) -> dict:
    """The result as JSON-ready data (the CLI's --json and the MCP tool): url_of(id) adds each entry's page."""
    out: dict = {"answers": res.answers,
                 "inferred": {k: {"value": v, "why": why} for k, (v, why) in res.inferred.items()},
                 "candidates": res.candidates}
    if res.question is not None:
        q = res.question
        out["question"] = {"facet": q.facet, "text": q.text, "text_zh": q.text_zh, "number": q.number,
                           "max_questions": MAX_QUESTIONS,
                           "choices": [{"value": c.value, "label": c.label, "label_zh": c.label_zh, "count": c.count}
                                       for c in q.choices]}
    items = []
    for it in res.shortlist:
        row: dict = {"id": it.id, "title": it.title, "title_zh": it.title_zh, "class": it.klass,
               "check": it.check.as_dict() if it.check else None}
        if url_of is not None:
            row["url"] = url_of(it.id)
        if it.score is not None:
            row["score"] = it.score
        items.append(row)
    out["results" if res.question is None else "so_far"] = items
    return out


_ANSWER = re.compile(r"^([a-z]+)=([a-z0-9-]+)$")


def parse_answer(text: str) -> tuple[str, str]:
    """'facet=value' (the CLI's --answer) -> (facet, value)."""
    m = _ANSWER.match(text.strip())
    if not m:
        raise FinderError(f"an answer is facet=value (e.g. happened=slow), not {text!r}")
    return m.group(1), m.group(2)
