"""`errbook mcp` (issue 30): the MCP SDK's own client spawns the server over stdio and calls every tool; each answer
names its entry id and page URL, and a triage answer its level. Without the SDK the command is one line, exit 2."""
import asyncio
import json
import os
import sys

import pytest

from conftest import REPO
from errbook.cli import app
from errbook.cli.formats import base as fbase
from errbook.cli.formats import context as fcontext
from errbook.cli.mcptools import Tools
from errbook.kb import fixsteps
from errbook.web import addresses

SITE = "https://errbook.example.org/team/"
TOOLS = {"triage", "show", "search", "find", "doctor"}


def _url(eid: str) -> str:
    _conf, directory_urls = fcontext.site_config(REPO)
    return fbase.entry_url(fbase.Context(site_url=SITE, directory_urls=directory_urls), eid)


async def _session(calls: list[tuple[str, dict]]) -> tuple[list, list]:
    mcp = pytest.importorskip("mcp", reason="the mcp extra (pip install -e '.[mcp]') is not installed")
    params = mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "errbook.cli", "--root", str(REPO), "mcp", "--site-url", SITE],
        env={"PYTHONPATH": str(REPO / "scripts"), **{k: os.environ[k] for k in ("ERRBOOK_CACHE",) if k in os.environ}},
        cwd=str(REPO))
    async with mcp.Client(params, read_timeout_seconds=120) as client:
        listed = (await client.list_tools()).tools
        results = [await client.call_tool(name, args) for name, args in calls]
    return listed, results


def _data(result) -> dict:
    assert not result.is_error, result.content
    text = json.loads(result.content[0].text)
    assert result.structured_content in (text, {"result": text})       # the same answer in both forms
    return text


@pytest.mark.slow
def test_the_sdks_client_lists_and_calls_every_tool_over_stdio():
    log = (REPO / "errata" / "corpus" / "real" / "RMN-0090-1.log").read_text(encoding="utf-8")
    facts = (REPO / "tests" / "doctor_machines" / "radeon-bad-override.json").read_text(encoding="utf-8")
    slow = (REPO / "errata" / "corpus" / "unseen" / "none-r9700-pytorch-4x-slower-than-7900xtx.log").read_text(
        encoding="utf-8")
    listed, (tri, shown, found, doc, missing, bad_facts, ask, narrowed, bad_answer) = asyncio.run(_session([
        ("triage", {"log": log}),
        ("show", {"entry": "RMN-0090"}),
        ("search", {"query": "invalid device function", "top": 3}),
        ("doctor", {"facts": facts}),
        ("show", {"entry": "RMN-9999"}),
        ("doctor", {"facts": "{}"}),
        ("find", {}),
        ("find", {"answers": {"component": "pytorch", "happened": "slow", "gpu": "radeon-rdna"}, "log": slow}),
        ("find", {"answers": {"component": "no-such-part"}}),
    ]))
    assert {t.name for t in listed} == TOOLS
    assert all(t.annotations.read_only_hint and t.annotations.open_world_hint is False for t in listed)
    assert "log" in next(t for t in listed if t.name == "triage").input_schema["properties"]

    t = _data(tri)
    first = t["answers"][0]
    assert (first["id"], first["level"], first["url"]) == ("RMN-0090", "diagnosis", _url("RMN-0090"))
    assert first["evidence"] and first["first_fix"] and first["runbook"] == "errbook run RMN-0090"
    assert all(a["url"] == _url(a["id"]) and a["level"] in fbase.LEVELS for a in t["answers"])
    assert t["stats"]["lines"] == len(log.splitlines())

    s = _data(shown)
    assert (s["id"], s["url"], s["entry"]["id"]) == ("RMN-0090", _url("RMN-0090"), "RMN-0090")
    check, change = (" ".join(st[0]["step"].split()[:4]) for st in fixsteps.split(s["entry"]["fix"]))
    text = " ".join(s["text"].split())                 # confirm, then fix, first
    assert text.index("Confirm") < text.index(check) < text.index("Fix") < text.index(change) < text.index("Summary")
    assert first["first_fix"].startswith(change)                                  # the first change, not the check

    f = _data(found)
    assert f["results"] and len(f["results"]) <= 3
    assert "RMN-0090" in [r["id"] for r in f["results"]]
    assert all(r["url"] == _url(r["id"]) for r in f["results"])

    d = _data(doc)
    assert {a["id"] for a in d["applies"]} == {"RMN-0020", "RMN-0023", "RMN-0026", "RMN-0093"}
    for a in d["applies"]:
        assert a["url"] == _url(a["id"]) and a["first_fix"] and a["runbook"] == f"errbook run {a['id']}"
        assert a["checks"] and all(c["holds"] is True and c["conditions"] for c in a["checks"])   # the evidence

    q = _data(ask)                    # no answers yet: the first question, "don't know" among its choices
    assert q["question"]["number"] == 1 and q["question"]["choices"][-1]["value"] == "unknown"
    assert q["question"]["choices"][-1]["count"] == q["candidates"] > 5
    n = _data(narrowed)               # three answers: the list, each entry with its page and confirming check
    assert "question" not in n and 1 <= len(n["results"]) <= 5
    assert all(r["url"] == _url(r["id"]) and r["check"]["step"] for r in n["results"])
    assert n["candidates"] < q["candidates"]
    assert bad_answer.is_error and "no-such-part" in bad_answer.content[0].text

    assert missing.is_error and "RMN-9999" in missing.content[0].text
    assert bad_facts.is_error and "not an errbook facts file" in bad_facts.content[0].text


def test_without_the_sdk_it_is_one_line_and_exit_2(monkeypatch, capsys):
    for name in [m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "errbook.cli.mcpserver"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)          # import mcp now raises ImportError
    assert app.main(["--root", str(REPO), "mcp"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'errbook[mcp]'" in err


def test_relative_links_say_so_and_a_benign_log_gets_no_answer():
    tools = Tools(REPO, site_url="")
    benign = (REPO / "errata" / "corpus" / "benign" / "A-hipconfig-amd.log").read_text(encoding="utf-8")
    t = tools.triage(benign)
    assert t["answers"] == [] and t["verdict"] == "no entry matched" and t["links_note"]
    s = tools.search("hipErrorNoBinaryForGpu", top=1)
    assert [r["id"] for r in s["results"]] == ["RMN-0090"]
    url = s["results"][0]["url"]
    assert url == fbase.page_url(addresses.entry_src("RMN-0090")) and "://" not in url


def test_triage_gives_the_message_block_the_cli_gives():
    """One message, several causes: the MCP triage answer carries the same block (causes, evidence, pages) as
    `errbook triage --json`, and a log without such a message has none."""
    import subprocess

    log = REPO / "errata" / "corpus" / "real" / "RMN-0097-1.log"
    tools = Tools(REPO, site_url="https://team.example/errbook/")
    t = tools.triage(log.read_text(encoding="utf-8"))
    cli = subprocess.run([sys.executable, "-m", "errbook", "--root", str(REPO), "triage", "--json",
                          "--site-url", "https://team.example/errbook/", str(log)],
                         capture_output=True, text=True, timeout=600, cwd=REPO)
    want = json.loads(cli.stdout)["message"]
    assert t["message"]["id"] == want["id"] and t["message"]["url"] == want["url"]
    assert [(c["entry"], c["url"]) for c in t["message"]["causes"]] == [(c["entry"], c["url"]) for c in want["causes"]]
    assert t["message"]["url"].startswith("https://team.example/errbook/")
    plain = tools.triage((REPO / "errata" / "corpus" / "real" / "RMN-0001-1.log").read_text(encoding="utf-8"))
    assert "message" not in plain
