"""Triage quality, measured honestly: regression floors on logs from threads no entry cites (the unseen *test*
split), and on benign logs. Training-set (seen) figures are printed by `errbook eval`, not guarded here.

The floors are the figures measured on 2026-12-01 (test split: top-1 66.7 %, top-3 74.6 %; benign false positives
1.8 %), rounded down: they catch regressions. Issue 9's targets (evaluate.TARGETS: 70 %, 85 %, 1 %) are not met
yet; raising a floor is the way to record progress."""
import pytest

from errbook import entries, evaluate, retrieval
from conftest import REPO

FLOORS = {"top1": 0.65, "top3": 0.72, "false_positive_rate": 0.02}


@pytest.fixture(scope="module")
def report():
    return evaluate.evaluate(REPO)


def test_unseen_test_split_meets_the_floors(report):
    t = report["unseen_test"]
    assert t["logs"] >= 50, t
    assert t["top1"] >= FLOORS["top1"], report["unseen_test"]
    assert t["top3"] >= FLOORS["top3"], report["unseen_test"]


def test_benign_false_positives_stay_under_the_floor(report):
    b = report["benign"]
    assert b["logs"] >= 300, b
    assert b["false_positive_rate"] <= FLOORS["false_positive_rate"], report["false_positives"]
    assert b["confident_false_positives"] == 0, report["false_positives"]      # no signature matches normal output


def test_unseen_logs_are_really_unseen_and_labelled():
    loaded, _ = entries.load_all(REPO)
    ids = {e.id for e in loaded}
    cited = evaluate.cited_threads(loaded)
    labelled, benign = evaluate.load_set(REPO)
    unseen = [c for c in labelled if c["folder"] == "unseen"]
    assert len(unseen) >= 100
    for c in labelled:
        assert c.get("expect") in ids or c.get("expect") == "none", c["name"]
        assert str(c.get("source", "")).startswith(("https://", "captured: ")), c["name"]
    fresh = [c for c in unseen if retrieval.thread_of(c.get("thread") or c["source"]) not in cited]
    assert len(fresh) >= 100, "unseen logs became seen: an entry now cites their threads"
    for c in benign:
        assert str(c.get("source", "")).startswith(("https://", "captured: ")), c["name"]


def test_split_is_deterministic_and_balanced():
    keys = [f"github.com/o/r/{i}" for i in range(1000)]
    assert [evaluate.split_of(k) for k in keys] == [evaluate.split_of(k) for k in keys]
    assert 400 < sum(evaluate.split_of(k) == "dev" for k in keys) < 600


def test_second_stage_is_scored_leave_one_thread_out(tmp_path):
    """A log whose only similar text is an example from its own thread must not be found through that example."""
    ev = evaluate.Evaluator(REPO)
    e = next(x for x in ev.active if any(s.get("examples") for s in x["signatures"]))
    ex = next(x for s in e["signatures"] for x in s["examples"] if x["source"].startswith("https://"))
    thread = retrieval.thread_of(ex["source"])
    full = ev.index_for("")
    loto = ev.index_for(thread)
    q = retrieval.tokens(ex["text"])
    s_full = dict((i, s) for s, i in full.scores(q)[0]).get(e.id, 0)
    s_loto = dict((i, s) for s, i in loto.scores(q)[0]).get(e.id, 0)
    assert s_loto < s_full
