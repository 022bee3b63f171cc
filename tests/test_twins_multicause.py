"""The answer level of a multi-cause message's twins: triage/multicause.py (through ranking) and engine.js `demote`
give the levels of tests/twins/multicause.yaml and the same answers, note and message_page included."""
import json

import pytest
import yaml

from conftest import REPO
from errbook.kb import entries
from errbook.triage import pipeline, ranking
from errbook.web import bundle
from test_twins import node

ROWS = yaml.safe_load((REPO / "tests" / "twins" / "multicause.yaml").read_text(encoding="utf-8"))
CORPUS = REPO / "errata" / "corpus"


@pytest.fixture(scope="module")
def kb():
    active = list(entries.active(entries.load_all(REPO)[0]))
    know = pipeline.knowledge(REPO, active)
    return pipeline.build_matcher(active, pages=know.pages), know, bundle.build(REPO, active)


def text_of(row: dict) -> str:
    return (CORPUS / row["log"]).read_text(encoding="utf-8") if "log" in row else row["text"]


def levels(results: list[dict], row: dict) -> list[list[str]]:
    """(id, level) of the row's first results, or of all of them when the row is `exact`."""
    return [[r["id"], r["level"]] for r in (results if row.get("exact") else results[:len(row["levels"])])]


def test_python_gives_the_table(kb):
    m, know, _ = kb
    got = [levels(ranking.match_text(m, know, text_of(r)), r) for r in ROWS]
    assert got == [r["levels"] for r in ROWS]


@pytest.mark.node
def test_javascript_gives_the_table_and_the_same_answers(kb):
    m, know, b = kb
    cases = [{"name": str(i), "text": text_of(r)} for i, r in enumerate(ROWS)]
    js = node("engine.cjs", {"bundle": b, "cases": cases})
    assert [levels(js[c["name"]], r) for c, r in zip(cases, ROWS, strict=True)] == \
        [r["levels"] for r in ROWS]
    py = {c["name"]: json.loads(json.dumps(ranking.match_text(m, know, c["text"]))) for c in cases}
    assert {c["name"]: js[c["name"]] for c in cases} == py
    assert any("message_page" in r for rs in py.values() for r in rs)
    assert any(r.get("message_only") for rs in py.values() for r in rs)      # pageonly.py's rows are answered
