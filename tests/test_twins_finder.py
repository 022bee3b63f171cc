"""The guided finder's twins: triage/finder.py and its port for the paste page (scripts/errbook/web/assets/finder.js)
give the same questions, choices, counts and short lists: row for row on a shared truth table (tests/twins/
finder.yaml), and on the real bundle (every active entry's facets, the shipped index) for the corpus's symptom-only
logs. finder.js reads every key of finder.JS_SPEC that the bundle ships, and no key the bundle does not declare."""
import json
import subprocess

import pytest
import yaml

from conftest import NODE, REPO
from errbook.kb import confirm, facets, yamlpos
from errbook.kb import entries as entries_mod
from errbook.triage import corpus, finder
from errbook.web import bundle

TABLE = yaml.safe_load((REPO / "tests" / "twins" / "finder.yaml").read_text(encoding="utf-8"))


def node(req: dict):
    r = subprocess.run([NODE, str(REPO / "tests" / "js" / "finder.cjs")], input=json.dumps(req), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def table_book() -> tuple[facets.Vocabulary, list[finder.Entry]]:
    vocab = facets.parse(yamlpos.Located(TABLE["vocabulary"], {}), "tests/twins/finder.yaml")
    out = []
    for eid, row in TABLE["entries"].items():
        comp, hap, *gpu = row
        fac = {"component": tuple(comp), "happened": tuple(hap), "gpu": tuple(gpu[0] if gpu else ["any"])}
        out.append(finder.Entry(eid, f"title {eid}", f"标题 {eid}", "runtime", fac,
                                confirm.confirm_check({"fix": [{"step": f"fix {eid}"}]})))
    return vocab, out


def data_of(vocab, ents) -> dict:
    return json.loads(json.dumps(dict(finder.bundle_data(ents, vocab), **finder.JS_SPEC)))


def row_of(res: dict) -> dict:
    """The parts of a result the table states, from either engine's JSON form."""
    q = res["question"]
    return {"question": q["facet"] if q else None,
            "choices": [[c["value"], c["count"]] for c in q["choices"]] if q else None,
            "candidates": res["candidates"], "list": [it["id"] for it in res["shortlist"]],
            "inferred": {k: v[0] for k, v in res["inferred"].items()}}


def py_result(ents, vocab, case: dict) -> dict:
    res = finder.find(ents, vocab, case.get("answers") or {}, case.get("log"), case.get("scores"), case.get("machine"))
    return _as_dict(res)


def expected(case: dict) -> dict:
    return {"question": case["question"], "choices": case.get("choices"), "candidates": case["candidates"],
            "list": case["list"], "inferred": case.get("inferred", {})}


@pytest.mark.parametrize("case", [c for c in TABLE["cases"] if "error" not in c], ids=lambda c: c["name"])
def test_python_gives_the_table(case):
    vocab, ents = table_book()
    assert row_of(py_result(ents, vocab, case)) == expected(case)


def test_python_refuses_what_the_table_refuses():
    vocab, ents = table_book()
    for case in (c for c in TABLE["cases"] if "error" in c):
        with pytest.raises(finder.FinderError, match=case["error"].replace("(", r"\(").replace(")", r"\)")):
            finder.find(ents, vocab, case["answers"])


@pytest.mark.node
def test_javascript_gives_the_table_and_reads_the_whole_spec():
    vocab, ents = table_book()
    cases = [{k: c.get(k) for k in ("answers", "log", "scores", "machine") if c.get(k) is not None}
             for c in TABLE["cases"]]
    got = node({"data": data_of(vocab, ents), "cases": cases, "trace": True})
    for case, res in zip(TABLE["cases"], got["results"], strict=True):
        if "error" in case:
            assert case["error"] in res["error"], case["name"]
        else:
            assert row_of(res) == expected(case), case["name"]
    spec = set(finder.JS_SPEC)
    declared = spec | set(bundle.DATA_KEYS[("finder",)])
    assert set(got["read"]) <= declared, set(got["read"]) - declared       # nothing the bundle does not declare
    assert spec <= set(got["read"]), spec - set(got["read"])                # no JS_SPEC key left unread


@pytest.fixture(scope="module")
def real():
    loaded, _ = entries_mod.load_all(REPO)
    active = list(entries_mod.active(loaded))
    return active, bundle.build(REPO, active)


@pytest.mark.node
@pytest.mark.slow
def test_both_engines_agree_on_the_real_bundle_and_the_symptom_only_logs(real):
    active, b = real
    vocab = facets.load(REPO)
    ents = finder.from_entries(active, vocab)
    index = corpus.shipped_index(REPO, active)
    logs = []
    for meta in sorted((REPO / "errata" / "corpus").glob("*/*.yaml")):
        label = yaml.safe_load(meta.read_text(encoding="utf-8")) or {}
        if label.get("kind") == "symptom-only" and meta.with_suffix(".log").is_file():
            logs.append(meta.with_suffix(".log").read_text(encoding="utf-8", errors="replace"))
    assert len(logs) >= 100
    answer_sets = [{}, {"component": "pytorch"}, {"component": "pytorch", "happened": "slow"},
                   {"component": "unknown", "happened": "crash", "gpu": "radeon-rdna"}, {"happened": "build-fails"}]
    cases = [{"answers": answer_sets[i % len(answer_sets)], "log": text} for i, text in enumerate(logs)]
    cases += [{"answers": a} for a in answer_sets]                    # no log: the stable order
    cases += [{"answers": {"component": "hip-runtime"}, "machine": {"gpu.runtime_gfx": ["gfx1100"]}}]
    got = node({"bundle": json.loads(json.dumps(b)), "cases": cases})
    for case, js in zip(cases, got, strict=True):
        scores = finder.log_scores(index, case["log"]) if case.get("log") else None
        py = finder.find(ents, vocab, case["answers"], case.get("log"), scores, case.get("machine"))
        assert row_of(js) == row_of(_as_dict(py)), case["answers"]
        if scores is not None:
            assert [it["score"] for it in js["shortlist"]] == pytest.approx([it.score for it in py.shortlist], abs=2e-4)


def _as_dict(res: finder.Result) -> dict:
    """A Python result in the JSON form both engines' rows are read from."""
    q = res.question
    return {"question": None if q is None else
            {"facet": q.facet, "choices": [{"value": c.value, "count": c.count} for c in q.choices]},
            "candidates": res.candidates, "shortlist": [{"id": it.id} for it in res.shortlist],
            "inferred": {k: list(v) for k, v in res.inferred.items()}}
