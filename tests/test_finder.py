"""The guided finder's core (triage/finder.py), its confirm-step contract (kb/confirm.py) and the eval simulation
(triage/findereval.py), on a small vocabulary and synthetic entries, so each rule is seen on its own; and the real
knowledge base's facets through the same code."""
from pathlib import Path

import pytest

from conftest import REPO
from errbook.kb import confirm, facets, yamlpos
from errbook.kb import entries as entries_mod
from errbook.triage import finder, findereval

VOCAB_YAML = """
component:
  question: "Which part?"
  values:
    - {id: build, label: "Building"}
    - {id: torch, label: "PyTorch"}
    - {id: rccl, label: "RCCL"}
happened:
  question: "What happens?"
  values:
    - id: build-fails
      label: "The build fails"
      log: ['^\\S+\\.cpp:[0-9]+:[0-9]+: (?:fatal )?error: ']
    - {id: crash, label: "It crashes"}
    - {id: slow, label: "Slow"}
    - id: import-fails
      label: "Import fails"
      log: ['^(?:ImportError|ModuleNotFoundError): ']
gpu:
  question: "Which GPU?"
  wildcard: any
  values:
    - {id: cdna, label: "Instinct", gfx: '^gfx9(?:0a|4[0-9a-f])$'}
    - {id: rdna, label: "Radeon", gfx: '^gfx1[0-2][0-9a-f]{2}$'}
    - {id: any, label: "Any"}
"""


@pytest.fixture(scope="module")
def vocab() -> facets.Vocabulary:
    return facets.parse(yamlpos.load(VOCAB_YAML, "a vocabulary"), "test")


def entry(eid, component, happened, gpu=("any",), fix=None, title=None) -> finder.Entry:
    data = {"fix": fix or [{"step": f"fix {eid}"}]}
    return finder.Entry(eid, title or f"title {eid}", f"标题 {eid}", "runtime",
                        {"component": tuple(component), "happened": tuple(happened), "gpu": tuple(gpu)},
                        confirm.confirm_check(data))


def book() -> list[finder.Entry]:
    """Twelve entries: components split 6 build / 4 torch / 2 rccl; happened split 6 / 4 / 2 across them."""
    out = [entry(f"RMN-00{i:02d}", ["build"], ["build-fails"]) for i in range(1, 7)]
    out += [entry("RMN-0007", ["torch"], ["crash"], ["cdna"]), entry("RMN-0008", ["torch"], ["crash"], ["rdna"]),
            entry("RMN-0009", ["torch"], ["slow"]), entry("RMN-0010", ["torch"], ["crash"])]
    out += [entry("RMN-0011", ["rccl"], ["slow"]), entry("RMN-0012", ["rccl"], ["crash"], ["cdna"])]
    return out


def test_first_question_is_the_facet_that_splits_best_with_dont_know_last(vocab):
    res = finder.find(book(), vocab)
    q = res.question
    assert q is not None and q.number == 1 and res.candidates == 12
    # component (6/4/2) and happened (6/5/... ) both split; the expected candidates left decide
    counts = {c.value: c.count for c in q.choices}
    assert counts["unknown"] == 12 and q.choices[-1].value == "unknown"
    expected = {f: finder._expected_left(finder._choices(book(), f, vocab)) for f in ("component", "happened")}
    assert q.facet == min(expected, key=lambda f: (expected[f], facets.FACETS.index(f)))


def test_an_answer_narrows_to_the_entries_that_fit_and_the_wildcard_fits_every_gpu(vocab):
    res = finder.find(book(), vocab, {"component": "torch", "happened": "crash", "gpu": "cdna"})
    assert res.done and {it.id for it in res.shortlist} == {"RMN-0007", "RMN-0010"}   # 0010 is gpu: any
    assert res.candidates == 2 and res.answers == {"component": "torch", "happened": "crash", "gpu": "cdna"}


def test_choices_offer_only_answers_that_keep_an_entry(vocab):
    res = finder.find(book(), vocab, {"component": "rccl", "happened": "unknown"})
    assert res.done                                          # two candidates: no more questions
    seven = [entry(f"RMN-01{i:02d}", ["build"], ["build-fails"]) for i in range(4)]
    seven += [entry(f"RMN-02{i:02d}", ["torch"], ["crash"]) for i in range(3)]
    q = finder.find(seven, vocab).question
    assert q is not None and [(c.value, c.count) for c in q.choices] == [("build", 4), ("torch", 3), ("unknown", 7)]


def test_a_facet_that_narrows_nothing_is_never_asked(vocab):
    same = [entry(f"RMN-01{i:02d}", ["build"], ["build-fails"]) for i in range(10)]
    assert finder.find(same, vocab).question is None        # every entry alike: nothing to ask, the list


def test_dont_know_narrows_nothing_but_counts_as_a_question(vocab):
    res = finder.find(book(), vocab, {"component": "unknown"})
    assert res.candidates == 12 and res.question is not None and res.question.number == 2
    assert res.question.facet != "component"


def test_at_most_three_questions(vocab):
    res = finder.find(book(), vocab, {"component": "unknown", "happened": "unknown", "gpu": "unknown"})
    assert res.done and res.candidates == 12 and len(res.shortlist) == finder.SHORT_LIST


def test_a_facts_file_answers_the_gpu_and_the_question_is_skipped(vocab):
    machine = {"gpu.runtime_gfx": ["gfx942", "gfx942"]}
    res = finder.find(book(), vocab, {"component": "torch", "happened": "crash"}, machine=machine)
    assert res.inferred["gpu"][0] == "cdna" and "gpu.runtime_gfx" in res.inferred["gpu"][1]
    assert res.done and {it.id for it in res.shortlist} == {"RMN-0007", "RMN-0010"}
    mixed = {"gpu.runtime_gfx": ["gfx942", "gfx1100"]}           # two families: the facts do not answer
    assert "gpu" not in finder.find(book(), vocab, machine=mixed).inferred


def test_a_compiler_log_answers_what_happened(vocab):
    log = "[ 50%] Building HIP object\nsrc/k.cpp:12:5: error: use of undeclared identifier '__shfl_sync'\n"
    res = finder.find(book(), vocab, {}, log=log)
    assert res.inferred["happened"][0] == "build-fails"
    assert res.question is None or res.question.facet != "happened"
    both = log + "ModuleNotFoundError: No module named 'torch'\n"        # two answers: the log says neither
    assert "happened" not in finder.find(book(), vocab, log=both).inferred
    prose = "the build fails with an error: in k.cpp line 12"
    assert "happened" not in finder.find(book(), vocab, log=prose).inferred


def test_an_explicit_answer_wins_over_the_log(vocab):
    log = "src/k.cpp:12:5: error: no\n"
    res = finder.find(book(), vocab, {"happened": "crash"}, log=log)
    assert "happened" not in res.inferred and res.answers["happened"] == "crash"


def test_the_list_follows_the_logs_scores_else_a_stable_order(vocab):
    ans = {"component": "build"}
    plain = finder.find(book(), vocab, ans)
    assert [it.id for it in plain.shortlist] == [f"RMN-00{i:02d}" for i in range(1, 6)]
    scored = finder.find(book(), vocab, ans, scores={"RMN-0006": 3.0, "RMN-0004": 1.5})
    assert [it.id for it in scored.shortlist][:2] == ["RMN-0006", "RMN-0004"]
    assert scored.shortlist[0].score == 3.0 and plain.shortlist[0].score is None
    specific = [entry("RMN-0002", ["build", "torch"], ["build-fails"]), entry("RMN-0003", ["build"], ["build-fails"])]
    assert [it.id for it in finder.find(specific, vocab).shortlist] == ["RMN-0003", "RMN-0002"]


def test_unknown_questions_and_answers_are_refused_with_the_choices(vocab):
    with pytest.raises(finder.FinderError, match="one of: build, torch, rccl, unknown"):
        finder.find(book(), vocab, {"component": "jax"})
    with pytest.raises(finder.FinderError, match="no question 'colour'"):
        finder.find(book(), vocab, {"colour": "red"})
    with pytest.raises(finder.FinderError, match="is not an answer to gpu"):     # the wildcard is not a choice
        finder.find(book(), vocab, {"gpu": "any"})
    assert finder.parse_answer("happened=slow") == ("happened", "slow")
    with pytest.raises(finder.FinderError):
        finder.parse_answer("happened")


def test_the_check_is_the_first_confirm_step_else_the_first_step():
    steps = [{"step": "Rebuild with the target.", "code": {"lang": "bash", "before": "a", "after": "b"}},
             {"step": "Confirm: rocminfo names the target.", "step_zh": "确认", "kind": "confirm",
              "code": {"lang": "bash", "snippet": "rocminfo | grep gfx"}, "expect": "gfx1100", "expect_zh": "gfx1100"},
             {"step": "Another check.", "kind": "confirm"}]
    c = confirm.confirm_check({"fix": steps})
    assert c is not None and (c.kind, c.step, c.code, c.expect) == ("confirm", "Confirm: rocminfo names the target.",
                                                                    "rocminfo | grep gfx", "gfx1100")
    first = confirm.confirm_check({"fix": [steps[0]]})
    assert first is not None and (first.kind, first.step, first.code, first.expect) == (
        "fix", "Rebuild with the target.", "b", "")
    assert first.step_zh == first.step                        # no Chinese text: the English one
    assert confirm.confirm_check({"fix": []}) is None


def test_the_real_book_every_active_entry_is_filed_and_reachable():
    vocab = facets.load(REPO)
    assert vocab is not None
    loaded, _ = entries_mod.load_all(REPO)
    active = [e for e in entries_mod.active(loaded)]
    ents = finder.from_entries(active, vocab)
    assert len(ents) == len([e for e in active if not e.withdrawn])
    for e in ents:
        assert e.facets["component"] and e.facets["happened"] and e.facets["gpu"] and e.check is not None
        # the answers an entry names lead to it: it is among the candidates they leave
        ans = {"component": e.facets["component"][0], "happened": e.facets["happened"][0]}
        fits = [x for x in ents if all(finder._fits(x, k, v, vocab) for k, v in ans.items())]
        assert e in fits
    res = finder.find(ents, vocab)
    assert res.question is not None and len(res.question.choices) > 3


def test_the_simulation_counts_a_log_found_when_its_entry_is_in_the_top_5(vocab, tmp_path):
    logs = []
    for name, exp, label in (("a", "RMN-0007", {"component": "torch", "happened": "crash", "gpu": "cdna"}),
                             ("b", "RMN-0011", {"component": "rccl"}),
                             ("c", "RMN-0001", {"component": "torch", "happened": "crash"})):    # a wrong label
        p = tmp_path / f"{name}.log"
        p.write_text(f"log {name}\n", encoding="utf-8")
        logs.append({"name": name, "path": p, "expect": exp, "group": "test", "thread": name, "finder": label})
    out = findereval.run(logs, book(), vocab, index_for=lambda thread: _EmptyIndex())
    by = {(r["name"], r["source"]): r for r in out["rows"]}
    assert by[("a", "label")]["top5"] and by[("b", "label")]["top5"] and not by[("c", "label")]["top5"]
    assert out["label"]["test"] == {"logs": 3, "top5": round(2 / 3, 4),
                                    "top1": findereval._rate(sum(by[(n, "label")]["top1"] for n in "abc"), 3),
                                    "questions": findereval._rate(sum(len(by[(n, "label")]["answers"])
                                                                      for n in "abc"), 3)}
    assert all(by[(n, "entry")]["top5"] for n in "abc")            # the entry's own facets always lead to it here
    assert [m["name"] for m in out["misses"]] == ["c"]
    # a label value that the question does not offer is answered "unknown", as a user would
    q = finder.find(book(), vocab, {"component": "rccl"}).question or finder.Question(
        "happened", "", "", 2, (finder.Choice("slow", "", "", 1), finder.Choice("unknown", "", "", 2)))
    assert findereval._answer_from_label({"happened": "build-fails"}, q) == "unknown"


class _EmptyIndex:
    """An index that scores nothing: the simulation's list falls back to the stable order."""

    def scores(self, _tokens):
        return [], 0.0, {}


def test_a_label_with_a_value_outside_the_vocabulary_is_an_error(vocab):
    labelled = [{"name": "unseen/x.log", "path": Path("x.log"), "kind": "symptom-only", "expect": "RMN-0001",
                 "finder": {"component": "kernel-driver"}}]
    with pytest.raises(finder.FinderError, match="unseen/x.log"):
        findereval.symptom_logs(labelled, lambda c: ("t", "test"), vocab)
