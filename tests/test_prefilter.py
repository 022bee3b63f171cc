"""The two prefilter engines (Hyperscan, RE2) and the in-memory path give the same triage answers."""
import io

import pytest

from errbook import entries, linescan, prefilter, triage
from conftest import REPO


@pytest.fixture(scope="module")
def active():
    loaded, _ = entries.load_all(REPO)
    return list(entries.active(loaded))


def _stream(m, data: bytes):
    scan = m.new_scan()
    linescan.scan_stream(m, io.BytesIO(data), scan)
    return scan.results(), scan.notes


def test_hyperscan_re2_and_in_memory_agree_on_every_labelled_log(active, monkeypatch):
    pytest.importorskip("hyperscan")
    logs = sorted((REPO / "tests" / "triage_eval").rglob("*.log"))
    texts = [p.read_bytes() for p in logs]
    for s_ in ([x for e in active for s in e["signatures"] for x in s["examples"]]):
        texts.append(s_["text"].encode("utf-8"))
    monkeypatch.setenv("ERRBOOK_PREFILTER", "hyperscan")
    hs = triage.build_matcher(active)
    assert hs.prefilter.name == hs.note_prefilter(frozenset(["s2"])).name == "hyperscan"
    monkeypatch.setenv("ERRBOOK_PREFILTER", "re2")
    r2 = triage.build_matcher(active)
    assert r2.prefilter.name == r2.note_prefilter(frozenset(["s2"])).name == "re2"
    for data in texts:
        mem = r2.new_scan()
        r2.feed_text(mem, data.decode("utf-8", "replace"))
        a, b = _stream(hs, data), _stream(r2, data)
        assert a == b == (mem.results(), mem.notes)


def test_lines_reports_candidate_lines_and_ids():
    pf = prefilter.Prefilter([(r"local memory \(\d+\) exceeds limit", False, ["exceeds limit"]),
                              (r"^cuda_runtime\.h", False, ["cuda_runtime.h"])])
    probe = b"ok\nerror: local memory (80000) exceeds limit (65536)\nall good\nx cuda_runtime.h\n"
    got = pf.lines(probe)
    assert sorted(got) == [1, 3]
    ids, s, e = got[1]
    assert probe[s:e] == b"error: local memory (80000) exceeds limit (65536)"
    assert ids is None or 0 in ids


def test_once_notes_are_full_their_patterns_leave_the_prefilter(active):
    m = triage.build_matcher(active)
    data = b"".join(b"warning: gfx90a line %d\n" % i for i in range(2000)) + b"end\n"
    scan = m.new_scan()
    linescan.scan_stream(m, io.BytesIO(data), scan)
    assert len(scan.notes["s2"]) == 300 and len(scan.notes["gfx"]) == 20
