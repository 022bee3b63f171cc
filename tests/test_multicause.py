"""One message, several causes: the answer level (triage/multicause.py). A diagnosis whose only line is a message
several causes print, with none of its own evidence in the log, is likely; its evidence, or a line of its own,
keeps it a diagnosis. The rule alone on hand-made results, then the shipped pages on real texts, then the CLI."""
import json

import pytest

from conftest import REPO, errbook
from errbook.kb import entries
from errbook.triage import multicause, pipeline, ranking

MESSAGE = "RuntimeError: HIP error: invalid device function"
PAGE = {"id": "idf", "title": "'invalid device function': a test page",
        "signatures": [{"id": "m", "pattern": "HIP error: invalid device function"}],
        "causes": [{"entry": "A", "evidence": [{"id": "a-line", "pattern": r"\[Not Found\]"},
                                               {"id": "a-fact", "when": [{"fact": "gpu.gfx", "present": True}]}]},
                   {"entry": "B", "evidence": [{"id": "b-line", "pattern": "found 2 ROCm devices"}]}]}


def result(eid: str, *lines: str, score: int = 150, sig: str = "s", level: str = "diagnosis") -> dict:
    return {"id": eid, "score": score, "standing": 0 if level == "diagnosis" else 1, "level": level,
            "evidence": [{"signature": sig, "lines": [{"line": n, "text": t}]} for n, t in enumerate(lines, 1)]}


def note(evidence_id: str, page: dict = PAGE) -> dict:
    return {multicause.note_name(page["id"], evidence_id): ["a line"]}


def levels(results: list[dict]) -> list[tuple[str, str]]:
    return [(r["id"], r["level"]) for r in results]


# -- the rule -------------------------------------------------------------------------------------------------

def test_the_message_alone_is_likely_and_says_why():
    (r,) = multicause.demote([result("A", MESSAGE)], [PAGE], {}, {})
    assert r["level"] == "likely" and r["message_page"] == "idf"
    assert r["note"] == ("this message has 2 known causes; no line of this log says which "
                         "(see the message page: 'invalid device function': a test page)")


def test_the_entrys_own_evidence_keeps_it_a_diagnosis():
    (r,) = multicause.demote([result("A", MESSAGE)], [PAGE], note("a-line"), {})
    assert r["level"] == "diagnosis" and "note" not in r and "message_page" not in r


def test_another_causes_evidence_does_not_keep_it():
    assert levels(multicause.demote([result("A", MESSAGE)], [PAGE], note("b-line"), {})) == [("A", "likely")]


def test_an_entry_the_page_does_not_list_is_likely_too():
    assert levels(multicause.demote([result("C", MESSAGE)], [PAGE], note("a-line"), {})) == [("C", "likely")]


def test_a_single_cause_page_changes_nothing_and_other_causes_count():
    single = dict(PAGE, causes=PAGE["causes"][:1])
    assert levels(multicause.demote([result("A", MESSAGE)], [single], {}, {})) == [("A", "diagnosis")]
    reported = dict(single, other_causes=[{"says": "a PyTorch wheel for another ROCm", "source": "https://x/1"}])
    (r,) = multicause.demote([result("A", MESSAGE)], [reported], {}, {})
    assert r["level"] == "likely" and "2 known causes" in r["note"]


def test_a_distinctive_line_of_its_own_keeps_it_a_diagnosis():
    rs = multicause.demote([result("A", MESSAGE, "hipErrorNoBinaryForGpu: Unable to find code object")], [PAGE], {},
                           {})
    assert levels(rs) == [("A", "diagnosis")]


def test_an_observation_signatures_line_is_not_what_made_it_a_diagnosis():
    r = result("A", MESSAGE, ":3:hip_module.cpp: hipLaunchKernel ( ... )")
    r["evidence"][1]["signature"] = "trace"
    assert levels(multicause.demote([r], [PAGE], {}, {"A": {"trace"}})) == [("A", "likely")]
    r = result("A", MESSAGE, ":3:hip_module.cpp: hipLaunchKernel ( ... )")
    r["evidence"][1]["signature"] = "trace"
    assert levels(multicause.demote([r], [PAGE], {}, {})) == [("A", "diagnosis")]


def test_diagnoses_come_before_the_demoted_and_observations_are_untouched():
    rs = [result("A", MESSAGE, score=300), result("D", "fatal error: 'cuda_runtime.h' file not found", score=120),
          result("O", MESSAGE, score=500, level="observation")]
    assert levels(multicause.demote(rs, [PAGE], {}, {})) == [("D", "diagnosis"), ("A", "likely"),
                                                              ("O", "observation")]


def test_a_generic_line_alone_is_likely_with_its_own_note():
    (r,) = multicause.demote([result("G", "hipErrorOutOfMemory", sig="oom")], [PAGE], {}, {}, {"G": {"oom"}})
    assert r["level"] == "likely" and r["note"] == multicause.GENERIC_WHY and "message_page" not in r
    # without the generic map (an older caller) nothing changes
    assert levels(multicause.demote([result("G", "hipErrorOutOfMemory", sig="oom")], [PAGE], {}, {})) == \
        [("G", "diagnosis")]


def test_a_line_of_a_signature_that_is_not_generic_keeps_the_diagnosis():
    r = result("G", "hipErrorOutOfMemory", "return after hipMalloc(&d) at line 3 without hipFree", sig="oom")
    r["evidence"][1]["signature"] = "lint"
    assert levels(multicause.demote([r], [PAGE], {}, {}, {"G": {"oom"}})) == [("G", "diagnosis")]
    # ... unless that line is an observation's: then only the generic line made it a diagnosis
    r = result("G", "hipErrorOutOfMemory", ":3:hip_memory.cpp: hipMalloc ( ... )", sig="oom")
    r["evidence"][1]["signature"] = "trace"
    assert levels(multicause.demote([r], [PAGE], {}, {"G": {"trace"}}, {"G": {"oom"}})) == [("G", "likely")]


def test_a_page_decides_before_the_generic_rule():
    # the page's message through a generic signature: the page's note and id, not the generic note
    (r,) = multicause.demote([result("A", MESSAGE, sig="g")], [PAGE], {}, {}, {"A": {"g"}})
    assert r["message_page"] == "idf" and r["note"].startswith("this message has 2 known causes")
    # the entry's own evidence on the page keeps it a diagnosis, generic signature or not
    (r,) = multicause.demote([result("A", MESSAGE, sig="g")], [PAGE], note("a-line"), {}, {"A": {"g"}})
    assert r["level"] == "diagnosis"


def test_the_shipped_knowledge_marks_priority_1_signatures_generic(kb):
    _, know, _ = kb
    assert know.generic["RMN-0040"] == {"hip-out-of-memory"}
    assert know.generic["RMN-0001"] == set()


def test_extras_find_every_log_evidence_once_and_carried_needs_them_all():
    ex = multicause.extras([PAGE])
    assert [(n, p, cap) for n, p, _, cap in ex] == [(multicause.note_name("idf", "a-line"), r"\[Not Found\]", 1),
                                                   (multicause.note_name("idf", "b-line"), "found 2 ROCm devices", 1)]
    caps = {n: c for n, _, _, c in ex}
    assert multicause.carried(PAGE, caps)
    assert not multicause.carried(PAGE, dict(list(caps.items())[:1]))


# -- the shipped pages, on texts through both stages ----------------------------------------------------------

@pytest.fixture(scope="module")
def kb():
    active = list(entries.active(entries.load_all(REPO)[0]))
    know = pipeline.knowledge(REPO, active)
    return pipeline.build_matcher(active, pages=know.pages), know, pipeline.build_matcher(active)


PRESENT = "RuntimeError: HIP error: the operation cannot be performed in the present state\n"
# (the shipped pages on real texts, in both engines: tests/twins/multicause.yaml)


def test_a_matcher_without_the_pages_notes_never_demotes(kb):
    _, know, bare = kb
    assert levels(ranking.match_text(bare, know, MESSAGE + "\n"))[:1] == [("RMN-0090", "diagnosis")]


# -- the CLI --------------------------------------------------------------------------------------------------

def test_cli_json_says_likely_with_why_exits_1_and_keeps_the_block():
    r = errbook("triage", "--json", root=REPO, input=(MESSAGE + "\n").encode())
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    top = out["matches"][0]
    assert (top["id"], top["level"], top["message_page"]) == ("RMN-0090", "likely", "invalid-device-function")
    assert top["note"].startswith("this message has 3 known causes; no line of this log says which")
    assert out["message"]["id"] == "invalid-device-function"
    text = errbook("triage", root=REPO, input=(MESSAGE + "\n").encode())
    assert text.returncode == 1 and b"no line of it says which; these are LIKELY" in text.stdout


def test_cli_with_the_evidence_is_a_diagnosis_exit_0():
    log = "[    5.335110] amdgpu 0000:07:00.0: PCIE atomic ops is not supported\n" + PRESENT
    r = errbook("triage", "--json", root=REPO, input=log.encode())
    assert r.returncode == 0, r.stderr
    top = json.loads(r.stdout)["matches"][0]
    assert (top["id"], top["level"]) == ("RMN-0097", "diagnosis") and "message_page" not in top


@pytest.mark.parametrize("fmt, words", [("markdown", b"several known causes and no line says which; likely"),
                                        ("github", b"::warning"), ("junit", b'type="likely"')])
def test_ci_formats_follow_the_level(fmt, words):
    r = errbook("triage", "--format", fmt, root=REPO, input=(MESSAGE + "\n").encode())
    assert r.returncode == 1 and words in r.stdout, r.stdout[:600]
    assert b"no entry explains" not in r.stdout       # the message's line is listed with its likely cause


def test_the_mcp_triage_tool_says_likely_and_why():
    from errbook.cli import mcptools
    out = mcptools.Tools(REPO, site_url="").triage(MESSAGE + "\n")
    assert out["verdict"] == mcptools.VERDICTS["message"]
    first = out["answers"][0]
    assert (first["id"], first["level"]) == ("RMN-0090", "likely") and "3 known causes" in first["note"]
    assert out["message"]["id"] == "invalid-device-function"
