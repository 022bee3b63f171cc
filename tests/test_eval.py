"""Triage quality on real logs from public issues and on benign logs. These floors guard against regressions;
the current figures are printed by `errbook eval`."""
from errbook import evaluate
from conftest import REPO

TOP1_FLOOR = 0.85
TOP3_FLOOR = 0.95
FP_CEILING = 0.0


def test_triage_quality_does_not_regress():
    res = evaluate.evaluate(REPO)
    assert res["real_logs"] >= 40 and res["benign_logs"] >= 5
    assert res["top1"] >= TOP1_FLOOR, res["misses"]
    assert res["top3"] >= TOP3_FLOOR, res["misses"]
    assert res["false_positive_rate"] <= FP_CEILING, res["false_positives"]


def test_every_eval_log_names_an_existing_entry_and_a_source():
    from errbook import entries
    loaded, _ = entries.load_all(REPO)
    ids = {e.id for e in loaded}
    real, benign = evaluate.load_set(REPO)
    for case in real:
        assert case.get("expect") in ids, case["name"]
        assert str(case.get("source", "")).startswith(("https://", "captured: ")), case["name"]
    for case in benign:
        assert str(case.get("source", "")).startswith(("https://", "captured: ")), case["name"]
