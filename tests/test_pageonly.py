"""A page's message that no entry's signature names (triage/pageonly.py): with no diagnosis and no result carrying
the page, the page's causes are likely answers ranked by their log evidence, at most three; a diagnosis adds
nothing. The rule on hand-made results, then the CLI on a bare message (both engines: tests/twins/multicause.yaml)."""
import json

from conftest import errbook
from errbook.cli.exitcodes import ExitCode
from errbook.triage import multicause, pageonly

MESSAGE = "RuntimeError: HIP error: invalid device ordinal"
PAGE = {"id": "ido", "title": "'invalid device ordinal': a test page", "title_zh": "测试页",
        "signatures": [{"id": "m", "pattern": "invalid device ordinal"}],
        "causes": [{"entry": c, "evidence": [{"id": f"{c}-line", "says": f"cause {c}'s line",
                                              "says_zh": f"原因{c}的行", "pattern": f"only {c} prints this"}]}
                   for c in "ABCD"],
        "other_causes": [{"says": "reported once"}]}


def notes(*evidence: str) -> dict:
    out = {pageonly.note_name("ido", 0): [MESSAGE]}
    out.update({multicause.note_name("ido", f"{c}-line"): ["a line"] for c in evidence})
    return out


def levels(results: list[dict]) -> list[tuple[str, str]]:
    return [(r["id"], r["level"]) for r in results]


def test_the_message_alone_gives_the_first_three_causes_in_page_order():
    rs = pageonly.add([], [PAGE], notes())
    assert levels(rs) == [("A", "likely"), ("B", "likely"), ("C", "likely")]
    assert rs[0]["note"] == pageonly.WHY.format(message=MESSAGE, n=5, shows=pageonly.NONE_SHOWN, page="ido")
    assert all(r["message_page"] == "ido" and r["message_only"] for r in rs)


def test_a_causes_evidence_ranks_it_first_and_the_note_says_what_it_shows():
    rs = pageonly.add([], [PAGE], notes("D"))
    assert [r["id"] for r in rs] == ["D", "A", "B"]
    assert "this log shows cause D's line (" in rs[0]["note"]     # what the evidence says, not its pattern
    assert pageonly.NONE_SHOWN not in rs[0]["note"] and pageonly.NONE_SHOWN in rs[1]["note"]


def test_a_diagnosis_adds_nothing():
    diag = {"id": "X", "score": 150, "standing": 0, "level": "diagnosis", "evidence": []}
    assert levels(pageonly.add([diag], [PAGE], notes())) == [("X", "diagnosis")]


def test_no_message_line_adds_nothing():
    assert pageonly.add([], [PAGE], {multicause.note_name("ido", "A-line"): ["a line"]}) == []


def test_a_result_carrying_the_page_adds_nothing():
    demoted = {"id": "A", "score": 150, "standing": 0, "level": "likely", "message_page": "ido", "evidence": []}
    assert levels(pageonly.add([demoted], [PAGE], notes())) == [("A", "likely")]
    shown = {"id": "Z", "score": 10, "standing": 1, "level": "observation",
             "evidence": [{"signature": "s", "lines": [{"line": 1, "text": MESSAGE}]}]}
    assert levels(pageonly.add([shown], [PAGE], notes())) == [("Z", "observation")]


def test_an_observed_cause_becomes_likely_and_goes_before_the_observations():
    obs = [{"id": e, "score": 10, "standing": 1, "level": "observation", "evidence": []} for e in ("Y", "B")]
    rs = pageonly.add(obs, [PAGE], notes("B"))
    assert levels(rs) == [("B", "likely"), ("A", "likely"), ("C", "likely"), ("Y", "observation")]


def test_the_cli_answers_a_bare_message_as_likely_with_its_block(tmp_path):
    log = tmp_path / "bare.log"
    log.write_text(MESSAGE + "\n", encoding="utf-8")
    p = errbook("triage", "--json", str(log))
    assert p.returncode == ExitCode.FINDINGS          # likely answers: no diagnosis
    out = json.loads(p.stdout)
    rs = out["matches"]
    assert rs and len(rs) <= pageonly.MAX_ADDED and all(r["level"] == "likely" and r["message_only"] for r in rs)
    assert out["message"]["id"] == rs[0]["message_page"] and out["message"]["line"]["text"] == MESSAGE
    assert [c["entry"] for c in out["message"]["causes"]][:len(rs)] == [r["id"] for r in rs]
