"""Triage quality, measured honestly: regression floors on logs from threads no entry cites (the unseen *test*
split), and on benign logs. Training-set (seen) figures are printed by `errbook eval`, not guarded here.

The floors are the figures measured on 2026-12-02 (test split: 199 logs of rounds 1, 2, 4, 6 and the test halves
of rounds 8 to 11, real/ logs counting as seen, thresholds re-calibrated on the dev split after rounds 7 and 8:
top-1 66.9 %, top-3 71.2 %; 390 benign logs: 2 false positives, 0.51 %), rounded down: they catch regressions.
(The fresh test halves of rounds 8 to 11 lowered them from 73.4 / 77.7 % on 109 logs; the re-calibration, which
answers fewer logs, too; `errbook eval --by-round` shows each round's half.) Issue 9's targets (evaluate.TARGETS:
70 %, 85 %, 1 %) are not all met; raising a floor is the way to record progress."""
import gc
import weakref

import pytest

from conftest import REPO
from errbook.kb import entries
from errbook.triage import evaluate, retrieval

FLOORS = {"top1": 0.66, "top3": 0.71, "false_positive_rate": 0.01}


@pytest.fixture(scope="module")
def report():
    return evaluate.evaluate(REPO)


@pytest.mark.slow
def test_unseen_test_split_meets_the_floors(report):
    t = report["unseen_test"]
    assert t["logs"] >= 80, t
    assert t["top1"] >= FLOORS["top1"], report["unseen_test"]
    assert t["top3"] >= FLOORS["top3"], report["unseen_test"]


@pytest.mark.slow
def test_figures_per_collection_round_add_up(report):
    """errbook eval --by-round: each round's dev and test halves; together exactly the unseen logs, and a round's
    test half only where the round was split by thread (round 3 was declared dev before it was studied)."""
    by = report["unseen_by_round"]
    assert sum(r["logs"] for halves in by.values() for r in halves.values()) == report["unseen"]["logs"]
    assert sum(h["test"]["logs"] for h in by.values() if "test" in h) == report["unseen_test"]["logs"]
    assert "test" not in by["3"] and "test" in by["1"]


@pytest.mark.slow
def test_benign_false_positives_stay_under_the_floor(report):
    b = report["benign"]
    assert b["logs"] >= 300, b
    assert b["false_positive_rate"] <= FLOORS["false_positive_rate"], report["false_positives"]
    assert b["confident_false_positives"] == 0, report["false_positives"]      # no signature matches normal output


@pytest.mark.slow
def test_a_symptom_only_log_is_never_given_a_wrong_diagnosis(report):
    """issue 24 wants no symptom-only log given a diagnosis. On 2026-12-07 seven of 123 were, each with its own
    entry: a signature matched a line that shows the state (`libxml2.so.2 => not found`, a torch version line).
    Six of those did name their problem and were re-read as `diagnostic` (2026-12-07, second pass); one remains, a
    systemd-coredump frame inside ROCr answered by RMN-0223 (the right entry). Guarded here: none wrong, and no
    more of them. Since that frame's signature became priority 1 (its comment: supporting evidence only) it makes the
    entry likely, not a diagnosis (triage/multicause.py's generic rule), and none remains."""
    assert report["symptom_only_diagnosed"] == []


# The guided finder on the test split's symptom-only logs, answers from each log's own `finder:` label: issue 24's
# target (the right entry in the top 5 for 80 %); measured 83.3 % (30 of 36) on 2026-12-07.
FINDER_FLOOR = 0.80


@pytest.mark.slow
def test_the_guided_finder_meets_its_target_on_the_test_split():
    res = evaluate.Evaluator(REPO).finder()
    label, entry = res["label"]["test"], res["entry"]["test"]
    assert label["logs"] >= 30 and label["top5"] >= FINDER_FLOOR, res["misses"]
    assert entry["top5"] >= label["top5"]           # the entry's own facets are the optimistic bound
    assert set(res["entry"]) >= {"dev", "test"} and res["none_logs"]["test"] >= 1


def test_the_authors_own_logs_are_never_scored_as_unseen():
    """real/ holds the logs the authors collected while writing the signatures: seen even where no entry cites
    their thread (two such logs were once counted in the test split)."""
    ev = evaluate.Evaluator(REPO)
    real = [c for c in ev.labelled if c["folder"] == "real"]
    assert real and any(ev.group_of(c)[0] not in ev.cited for c in real)     # the case this guards exists
    assert {ev.group_of(c)[1] for c in real} == {"seen"}


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
    # a log declared dev (studied before it joined) never lands in the test split; nothing can declare itself test
    assert all(evaluate.split_of(k, "dev") == "dev" for k in keys)
    assert [evaluate.split_of(k, "test") for k in keys] == [evaluate.split_of(k) for k in keys]


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


def test_eval_holds_no_index_once_a_log_is_prepared(monkeypatch):
    """Each log is scored with an index of its own (leave one thread out, about 14 MB); keeping them all took 13 GB
    and got `errbook eval` killed beside the test suite. A second run (calibration) re-decides and builds none."""
    ev = evaluate.Evaluator(REPO)
    ev.labelled = [c for c in ev.labelled if ev.group_of(c)[1] == "dev"][:5]
    ev.benign = [c for c in ev.benign if c["split"] == "dev"][:3]
    built, real = [], retrieval.build

    def build(*a, **k):
        index = real(*a, **k)
        built.append(weakref.ref(index))
        return index

    monkeypatch.setattr(evaluate.retrieval, "build", build)
    first = ev.run()
    gc.collect()
    assert len(built) == 8 and all(r() is None for r in built)
    assert ev.run()["rows"] == first["rows"] and len(built) == 8


def test_the_evaluation_index_never_holds_a_test_split_log():
    """Labelled logs are examples in the index (seen and dev ones in eval, all of them in the shipped index); a test
    log in eval's index would turn the figures to believe into training-set figures."""
    ev = evaluate.Evaluator(REPO)
    indexed = {t for d in ev.docs.values() for t, _ in d["examples"]}
    groups = [(c, *ev.group_of(c)) for c in ev.labelled if c["folder"] == "unseen"]
    test_threads = {t for c, t, g in groups if g == "test"}
    dev_threads = {t for c, t, g in groups if g == "dev" and c.get("expect") != "none"}
    assert test_threads and not (indexed & test_threads)
    assert dev_threads <= indexed                     # and the dev logs are there


@pytest.mark.parametrize("lines,expected", [
    (["INFO 08-21 19:42:39 [cuda.py:492] Using TRITON_MLA attention backend out of potential backends: "
      "['TRITON_MLA']."],
     False),
    (["Checking GPU(s) for support of peer to peer memory access..."], False),
    (["WARNING 03-28 [config.py:1] Casting torch.bfloat16 to torch.float16 because it is the only type this model was "
      "built with here"],
     False),
    (["hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"], True),
    (["reading tuning results from ./tunableop_resultsTestBench0.csv"], False),      # tunableop is not "unable"
    (["Why is my MI250 so slow with vLLM?"], True),
    (["Recently when generating a prompt a warning pops up saying that the model was not compiled with flash "
      "attention"],
     True),
    # a logger's INFO line is normal output even when it says "Failed" (every healthy NCCL/RCCL start)
    (["host:2744870:2744870 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v7 symbol."], False),
    (["host:1:1 [0] NCCL WARN NET/IB : Failed to open libibverbs.so"], True),
    # PyTorch's collect_env fills absent fields with "Could not collect"
    (["CUDA runtime version: Could not collect", "cuDNN version: Could not collect"], False),
    (["RuntimeError: Could not collect the device list"], True),
    # a tool's sentence: Python's warnings format, and "does not" in a CMake deprecation text
    (["<frozen runpy>:128: RuntimeWarning: 'torch.utils.collect_env' found in sys.modules after import of package "
      "'torch.utils', but prior to execution of 'torch.utils.collect_env'; this may result in unpredictable behaviour"],
     False),
    (["  CMake that the project does not need compatibility with older versions."], False),
    (["ollama does not work on my RX 6600"], True),
    # a zero count of failures is not a failure
    (["build finished: 0 errors, nothing failed to link"], False),
    (["===== 12 passed, 0 failed in 3.1s ====="], False),
    (["make[2]: *** [CMakeFiles/app.dir/build.make:76: app] Error 1"], True),
    (["errors found: 0", "summary: failed=0 ok=12"], False),
    (["errors found: 3"], True),
    (["Ran 40 tests, failures: 0.5 per run"], True),             # not a zero count
    # a component the tool calls optional, absent, is normal output; a failure on the same line is not
    (["amdgpu 0000:05:00.0: amdgpu: RAS: optional ras ta ucode is not available"], False),
    (["RuntimeError: optional hipBLASLt backend not available on gfx1030"], True),
    (["ImportError: Missing optional dependency 'tabulate'."], True),
    # a tool addressing its reader (a prompt, advice) is not a person; a failure word on such a line still is
    (["Proceed (Y/n)?"], False),
    (["Using sub quadratic optimization for attention, if you have memory or speed issues try using: "
      "--use-split-cross-attention"], False),
    (["Why does my MI300X hang when I run this?"], True),
    (["Failed to load amdhip64_6.dll. If you have an older driver, update it."], True),
    # a tool's "Note:" sentence is a notice, not a person writing
    (['Note: NumExpr detected 24 cores but "NUMEXPR_MAX_THREADS" not set, so enforcing safe limit of 16.'], False),
    (["Note: the build failed because hipcc could not find the HIP runtime"], True),
])
def test_second_stage_answers_only_a_failure_or_a_person(lines, expected):
    assert retrieval.reports_trouble(lines) is expected


def test_a_declared_neighbour_close_behind_is_listed_not_a_reason_to_abstain():
    cal = {"min_score": 0.0, "min_margin": 0.2, "benign_margin": 0.5, "min_distinct": 1}
    ranked = [(10.0, "RMN-A"), (9.5, "RMN-B"), (5.0, "RMN-C"), (1.0, "benign:x")]
    distinct = {"RMN-A": 3}
    assert retrieval.decide(ranked, 20.0, distinct, cal) == []              # a close runner-up: silent
    got = retrieval.decide(ranked, 20.0, distinct, cal, related={"RMN-A": ["RMN-B"]})
    assert [r["id"] for r in got] == ["RMN-A", "RMN-B", "RMN-C"]
    # an unrelated entry close behind the neighbour still holds the answer back
    ranked[2] = (9.0, "RMN-C")
    assert retrieval.decide(ranked, 20.0, distinct, cal, related={"RMN-A": ["RMN-B"]}) == []


def test_related_map_is_symmetric_and_skips_withdrawn():
    class E:
        def __init__(self, id, related, withdrawn=False):
            self.id, self.data, self.withdrawn = id, {"related": related}, withdrawn
        def get(self, k, d=None):
            return self.data.get(k, d)
    m = retrieval.related_map([E("RMN-1", ["RMN-2"]), E("RMN-3", ["RMN-1"]), E("RMN-9", ["RMN-1"], withdrawn=True)])
    assert m == {"RMN-1": ["RMN-2", "RMN-3"], "RMN-2": ["RMN-1"], "RMN-3": ["RMN-1"]}


def test_the_frozen_test_split_stays_unseen():
    """A citation added to an entry must not move a test log into the training set unnoticed (it happened once:
    a counter-example's thread was a test log's)."""
    frozen = {ln.strip() for ln in (REPO / "errata" / "corpus" / "unseen" / "TEST_SPLIT").read_text().splitlines()
              if ln.strip() and not ln.startswith("#")}
    ev = evaluate.Evaluator(REPO)
    groups = {ev.group_of(c) for c in ev.labelled if c["folder"] == "unseen"}
    assert not frozen & ev.cited, sorted(frozen & ev.cited)          # cited since they were frozen
    assert frozen <= {t for t, _ in groups}                             # and still labelled
    current = {t for t, g in groups if g == "test"}
    assert current <= frozen, sorted(current - frozen)                  # new test data is registered on purpose
