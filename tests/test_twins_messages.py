"""The message block's twins: triage/messages.py (+ msgscan.py) and engine.js `messageBlock` give the same block on
the rows of tests/twins/messages.yaml (real corpus logs, with and without doctor facts) and on every labelled corpus
log that holds one of the messages."""
import json

import pytest
import yaml

from conftest import REPO
from errbook.kb import entries
from errbook.triage import messages as msg
from errbook.triage import msgscan, pipeline, ranking
from errbook.web import bundle
from test_twins import node

ROWS = yaml.safe_load((REPO / "tests" / "twins" / "messages.yaml").read_text(encoding="utf-8"))
CORPUS = REPO / "errata" / "corpus"


@pytest.fixture(scope="module")
def kb():
    loaded, _ = entries.load_all(REPO)
    active = list(entries.active(loaded))
    know = ranking.Knowledge(active, index=None, cal={}, pages=pipeline.message_pages(REPO, active))
    m = pipeline.build_matcher(active, skipped=[], pages=know.pages)
    return m, know, msgscan.usable_pages(REPO), bundle.build(REPO, active)


def text_of(row: dict) -> str:
    return (CORPUS / row["log"]).read_text(encoding="utf-8") if "log" in row else row["text"]


def python_block(kb, text: str, values):
    m, know, pages, _ = kb
    hit = msg.deciding_page(pages, ranking.match_text(m, know, text))
    if hit is None:
        return None
    return msgscan.block_of_text(hit[0], hit[1], text, values)


def summary(b):
    if b is None:
        return {"page": None}
    return {"page": b["id"], "order": [c["entry"] for c in b["causes"]],
            "found": [e["id"] for c in b["causes"] for e in c["evidence"] if e["state"] == "found"]}


def want(row):
    return {k: row[k] for k in ("page", "order", "found") if k in row}


def test_python_gives_the_table(kb):
    wrong = [(r.get("log") or r["text"][:40], summary(python_block(kb, text_of(r), r.get("facts"))), want(r))
             for r in ROWS if summary(python_block(kb, text_of(r), r.get("facts"))) != want(r)]
    assert not wrong, wrong


@pytest.mark.node
def test_javascript_gives_the_same_blocks_as_python(kb):
    cases = [{"text": text_of(r), "values": r.get("facts")} for r in ROWS]
    js = node("engine.cjs", {"bundle": kb[3], "messages": cases})
    py = [json.loads(json.dumps(python_block(kb, c["text"], c["values"]))) for c in cases]
    assert [summary(b) for b in js] == [want(r) for r in ROWS]
    assert js == py


@pytest.mark.node
def test_both_engines_agree_on_every_corpus_log_with_a_message(kb):
    pages = kb[2]
    sigs = [s["pattern"] for p in pages for s in p["signatures"]]
    import re2
    rx = re2.compile("|".join(f"(?:{s})" for s in sigs))
    texts = [p.read_text(encoding="utf-8", errors="replace") for d in ("real", "unseen")
             for p in sorted((CORPUS / d).glob("*.log"))]
    texts = [t for t in texts if rx.search(t)]
    assert len(texts) >= 25
    js = node("engine.cjs", {"bundle": kb[3], "messages": [{"text": t} for t in texts]})
    py = [json.loads(json.dumps(python_block(kb, t, None))) for t in texts]
    assert sum(b is not None for b in py) >= 25
    assert js == py
