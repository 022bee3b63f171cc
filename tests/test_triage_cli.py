"""errbook triage: streaming, hostile input, several files, JSON output, exit codes, the opt-in tally."""
import io
import json

import pytest

from conftest import REPO, errbook
from errbook.kb import entries
from errbook.triage import linescan, matcher, parallel, pipeline, ranking

ERR = b"a.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n"


def test_match_json_and_exit_code(mini_root, tmp_path):
    log = tmp_path / "build.log"
    log.write_bytes(b"[  2%] Building HIP object\n" + ERR + b"1 error generated when compiling for gfx90a.\n")
    r = errbook("triage", "--json", str(log), root=mini_root)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    top = out["matches"][0]
    assert top["id"] == "RMN-0001" and top["score"] > 0
    assert top["evidence"][0]["lines"][0] == {"line": 2, "text": ERR.decode().strip()}
    assert top["runbook"] == "errbook run RMN-0001"
    assert top["url"].endswith("/entries/RMN-0001/") and out["stats"]["found"] >= len(out["matches"])
    r = errbook("triage", "--json", "--site-url", "https://team.example/book/", str(log), root=mini_root)
    assert json.loads(r.stdout)["matches"][0]["url"] == "https://team.example/book/entries/RMN-0001/"


def test_no_match_is_exit_1_and_missing_file_exit_2(mini_root, tmp_path):
    (tmp_path / "ok.log").write_text("all fine\n")
    assert errbook("triage", str(tmp_path / "ok.log"), root=mini_root).returncode == 1
    assert errbook("triage", str(tmp_path / "missing.log"), root=mini_root).returncode == 2


@pytest.mark.slow
def test_no_match_names_the_first_failure_line_and_what_to_do(tmp_path):
    """An incident reader who gets no entry is shown the line to search for; a log with no failure line says so."""
    # a failure no entry will ever know (a real UCX line used here found its entry, RMN-0213, the day it landed)
    log = tmp_path / "quux.log"
    log.write_text("[node:1:0]  step.c:420  QUUX  INFO  starting the quux\n"
                   "[node:1:0]  step.c:421  QUUX  ERROR the quux did not zorb (code 17)\n")
    r = errbook("triage", str(log), root=REPO)
    out = r.stdout.decode()
    assert r.returncode == 1
    assert "first failure line: [node:1:0]  step.c:421  QUUX  ERROR the quux did not zorb" in out
    assert "errbook new CLASS" in out
    j = json.loads(errbook("triage", "--json", str(log), root=REPO).stdout)
    assert j["matches"] == [] and "QUUX  ERROR" in j["stats"]["first_failure_line"]
    (tmp_path / "ok.log").write_text("all fine\n")
    out = errbook("triage", str(tmp_path / "ok.log"), root=REPO).stdout.decode()
    assert "first failure line" not in out and "no line in it reports a failure" in out


def test_stdin(mini_root):
    r = errbook("triage", "--json", root=mini_root, input=b"x\n" + ERR)
    assert r.returncode == 0 and json.loads(r.stdout)["matches"][0]["evidence"][0]["lines"][0]["line"] == 2


def _scan(root, data: bytes, chunk: int, monkeypatch):
    monkeypatch.setattr(linescan, "CHUNK", chunk)
    loaded, _ = entries.load_all(root)
    m = pipeline.build_matcher(loaded)
    s = m.new_scan()
    n, b = linescan.scan_stream(m, io.BytesIO(data), s)
    return s.results(), n, b


@pytest.mark.parametrize("chunk", [7, 64, 1000, 1 << 20])
def test_chunk_boundaries_do_not_change_results(mini_root, monkeypatch, chunk):
    data = b"".join(b"line %d of build output\n" % i for i in range(300)) + ERR + b"tail\n" * 5
    res, n, b = _scan(mini_root, data, chunk, monkeypatch)
    assert n == 306 and b == len(data)
    assert res[0]["evidence"][0]["lines"][0]["line"] == 301


def test_huge_line_binary_garbage_and_invalid_utf8(mini_root, monkeypatch):
    import os
    huge = b"cuda_runtime.h " * (7 * 1024 * 1024)     # ~100 MB single line full of the anchor
    garbage = os.urandom(1 << 20).replace(b"\n", b"\x00").replace(b"\r", b"\x00")
    data = huge + b"\n" + garbage + b"\n\xff\xfe\xc3(invalid utf8\n" + ERR
    res, n, _ = _scan(mini_root, data, 8 << 20, monkeypatch)
    assert n == 4 and res[0]["evidence"][0]["lines"][-1]["line"] == 4


def test_empty_file(mini_root, tmp_path):
    (tmp_path / "empty.log").write_bytes(b"")
    r = errbook("triage", "--json", str(tmp_path / "empty.log"), root=mini_root)
    assert r.returncode == 1 and json.loads(r.stdout)["matches"] == []


def test_several_files_are_one_log_per_rank(mini_root, tmp_path):
    (tmp_path / "rank0.log").write_bytes(b"fine\n")
    (tmp_path / "rank1.log").write_bytes(b"x\ny\n" + ERR)
    r = errbook("triage", "--json", str(tmp_path / "rank0.log"), str(tmp_path / "rank1.log"), root=mini_root)
    ev = json.loads(r.stdout)["matches"][0]["evidence"][0]["lines"][0]
    assert ev["line"] == 3 and ev["source"].endswith("rank1.log")


def test_tally_is_opt_in_and_holds_no_log_text(mini_root, tmp_path):
    log = tmp_path / "b.log"
    log.write_bytes(b"SECRET-TOKEN-123\n" + ERR)
    tally = tmp_path / "tally.jsonl"
    errbook("triage", str(log), root=mini_root)
    assert not tally.exists()
    errbook("triage", "--tally", str(tally), str(log), root=mini_root)
    errbook("triage", "--tally", str(tally), str(log), root=mini_root)
    text = tally.read_text()
    assert "SECRET" not in text and "cuda_runtime" not in text
    assert [json.loads(ln)["top"] for ln in text.splitlines()] == ["RMN-0001", "RMN-0001"]
    r = errbook("triage", "--show-tally", "--tally", str(tally), root=mini_root)
    assert r.stdout.decode().split() == ["2", "RMN-0001"]


def test_prefilter_hit_spanning_lines_does_not_hide_a_later_match():
    """\\s can match a newline in the raw chunk; the line after such a hit must still be checked."""
    s = matcher.build_signature("RMN-0001", {"id": "x", "priority": 3, "pattern": r"cannot open\s+shared object"})
    m = matcher.Matcher([s])
    scan = m.new_scan()
    data = b"noise\nERROR: cannot open\ncannot open shared object file\n"
    linescan.scan_stream(m, io.BytesIO(data), scan)
    assert [ln["line"] for ev in scan.results()[0]["evidence"] for ln in ev["lines"]] == [3]
    assert m.match_text(data.decode())[0]["evidence"] == scan.results()[0]["evidence"]


def test_parallel_file_scan_equals_one_process(tmp_path, monkeypatch):
    """Workers split the file; sequences across the split and line numbers come out as in one process."""
    seq = matcher.build_signature("RMN-0001", {"id": "seq", "priority": 4, "within": 400,
                                              "sequence": [r"Memory access fault by GPU", r"Reason: Page not present"]})
    one_line = matcher.build_signature("RMN-0002", {"id": "one", "priority": 3, "pattern": r"hipErrorNoBinaryForGpu"})
    m = matcher.Matcher([seq, one_line])
    lines = [b"step %d loss 0.5\n" % i for i in range(4000)]
    lines[1990] = b"Memory access fault by GPU node-1 on address 0x7f00\n"     # before the split point
    lines[2010] = b"Reason: Page not present or supervisor privilege.\n"       # after it
    lines[2500] = b"old\rprogress\rhipErrorNoBinaryForGpu: Unable to find\r\n"  # lone CRs end lines too
    lines[3999] = b"x" * 300000 + b" Memory access fault by GPU\n"             # a long line near the end
    path = tmp_path / "big.log"
    path.write_bytes(b"".join(lines) + b"Reason: Page not present")           # no final newline
    one = m.new_scan()
    with open(path, "rb") as f:
        n1, b1 = linescan.scan_stream(m, f, one)
    many = m.new_scan()
    n2, b2 = parallel.scan_file(m, str(path), many, workers=3)
    assert (n1, b1) == (n2, b2) == (4003, path.stat().st_size)
    assert one.results() == many.results()
    by_id = {r["id"]: r for r in many.results()}
    assert [ln["line"] for ln in by_id["RMN-0001"]["evidence"][0]["lines"]] == [1991, 2011]
    assert by_id["RMN-0002"]["evidence"][0]["lines"][0]["line"] == 2503


def _example(eid: str, sig_id: str) -> str:
    loaded, _ = entries.load_all(REPO)
    e = next(x for x in loaded if x.id == eid)
    sig = next(s for s in e["signatures"] if s["id"] == sig_id)
    assert sig.get("level") == "observation"          # the case this test is about
    return sig["examples"][0]["text"]


@pytest.mark.slow
def test_an_observation_is_worth_knowing_not_an_answer(tmp_path):
    """RCCL's channel-over-socket line (RMN-0193) shows a condition, not a failure: listed with level
    "observation", exit 1 (no diagnosis), the text says "worth knowing"; next to a real error it ranks below it."""
    obs = _example("RMN-0193", "rccl-channel-via-net-socket")
    log = tmp_path / "rccl.log"
    log.write_text(obs + "\n", encoding="utf-8")
    r = errbook("triage", "--json", str(log), root=REPO)
    assert r.returncode == 1, r.stderr
    got = json.loads(r.stdout)["matches"]
    assert got and all(x["level"] in ("observation", "likely") for x in got)
    assert any(x["id"] == "RMN-0193" and x["level"] == "observation" and x["evidence"] for x in got)
    text = errbook("triage", str(log), root=REPO).stdout.decode()
    assert "worth knowing" in text and "observation" in text
    log.write_text(obs + "\n" + ERR.decode(), encoding="utf-8")
    r = errbook("triage", "--json", str(log), root=REPO)
    got = json.loads(r.stdout)["matches"]
    assert r.returncode == 0
    assert got[0]["id"] == "RMN-0001" and got[0]["level"] == "diagnosis"
    assert [x["level"] for x in got if x["id"] == "RMN-0193"] == ["observation"]


@pytest.mark.slow
def test_lines_an_observation_accounts_for_do_not_open_the_second_stage(tmp_path):
    """A healthy AMD_LOG_LEVEL log (RMN-0427's real lines, 'Cannot find CO in the bundle', 'Missing CO for these
    ISAs') holds failure words, but each line is a condition a cosmetic entry explains: no likely guess, exit 1.
    A failure line no observation explains still opens the second stage (or is a diagnosis)."""
    loaded, _ = entries.load_all(REPO)
    e = next(x for x in loaded if x.id == "RMN-0427")
    healthy = e["signatures"][0]["examples"][0]["text"]
    assert "Missing CO for these ISAs" in healthy and "Cannot find CO in the bundle" in healthy
    log = tmp_path / "amd_log_level.log"
    log.write_text(healthy, encoding="utf-8")
    r = errbook("triage", "--json", str(log), root=REPO)
    got = json.loads(r.stdout)["matches"]
    assert r.returncode == 1, [(x["id"], x["level"]) for x in got]
    assert not [x for x in got if x["level"] == "likely"]
    assert [x["level"] for x in got if x["id"] == "RMN-0427"] == ["observation"]
    active = list(entries.active(loaded))
    know = pipeline.knowledge(REPO, active)
    m = pipeline.build_matcher(active, pages=know.pages)
    assert ranking.prepare_text(m, know, healthy).stage2 is None
    other = healthy + "hipMemcpy failed after the copy engine stalled, the run cannot go on\n"
    assert ranking.prepare_text(m, know, other).stage2 is not None
