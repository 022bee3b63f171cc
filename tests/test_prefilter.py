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


def test_repeated_lines_count_the_same_as_in_memory(active, monkeypatch):
    """The line memo (linescan.feed_line) and the per-line plans: a log that repeats its hit lines, with the
    memo forced to start over often, counts hits, evidence, sequences and notes exactly as the in-memory path."""
    ex = [x["text"] for e in active for s in e["signatures"] for x in s["examples"]][:120]
    text = "\n".join(ex * 7) + "\nwarning: gfx90a here\n" * 30
    monkeypatch.setattr(linescan, "MEMO_LINES", 50)
    for engine in (["hyperscan"] if _has_hyperscan() else []) + ["re2"]:
        monkeypatch.setenv("ERRBOOK_PREFILTER", engine)
        m = triage.build_matcher(active)
        mem = m.new_scan()
        m.feed_text(mem, text)
        got = _stream(m, text.encode("utf-8"))
        assert got == (mem.results(), mem.notes), engine
        assert m.line_memo and len(m.line_memo) <= 50
        assert max(r["hits"] for r in got[0]) >= 7


def _has_hyperscan() -> bool:
    try:
        import hyperscan  # noqa: F401
        return True
    except ImportError:
        return False


def test_compiled_database_is_cached_and_a_corrupt_cache_is_recompiled(tmp_path, monkeypatch):
    pytest.importorskip("hyperscan")
    monkeypatch.setenv("ERRBOOK_CACHE", str(tmp_path))
    pats = [(r"local memory \(\d+\) exceeds limit", False, []), (r"hipErrorNoBinaryForGpu", False, [])]
    probe = b"ok\nerror: local memory (80000) exceeds limit (65536)\nx\nhipErrorNoBinaryForGpu: y\n"
    first = prefilter.Prefilter(pats, "hyperscan").lines(probe)
    (db,) = tmp_path.glob("hs-*.db")
    assert sorted(first) == [1, 3] and first[1][0] == {0} and first[3][0] == {1}
    assert prefilter.Prefilter(pats, "hyperscan").lines(probe) == first        # loaded from the cache
    db.write_bytes(b"\0garbage")
    assert prefilter.Prefilter(pats, "hyperscan").lines(probe) == first        # recompiled, cache rewritten
    assert db.read_bytes() != b"\0garbage"
    monkeypatch.setenv("ERRBOOK_CACHE", str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a directory")
    assert prefilter.Prefilter(pats, "hyperscan").lines(probe) == first        # an unusable cache is ignored
