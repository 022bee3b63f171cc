"""The two prefilter engines (Hyperscan, RE2) and the in-memory path give the same triage answers."""
import io

import pytest

from conftest import REPO
from errbook.kb import entries
from errbook.triage import linescan, parallel, pipeline, prefilter


@pytest.fixture(scope="module")
def active():
    loaded, _ = entries.load_all(REPO)
    return list(entries.active(loaded))


def _stream(m, data: bytes):
    scan = m.new_scan()
    linescan.scan_stream(m, io.BytesIO(data), scan)
    return scan.results(), scan.notes


@pytest.mark.slow
def test_hyperscan_re2_and_in_memory_agree_on_every_labelled_log(active, monkeypatch):
    pytest.importorskip("hyperscan")
    logs = sorted((REPO / "errata" / "corpus").rglob("*.log"))
    texts = [p.read_bytes() for p in logs]
    for s_ in ([x for e in active for s in e["signatures"] for x in s["examples"]]):
        texts.append(s_["text"].encode("utf-8"))
    monkeypatch.setenv("ERRBOOK_PREFILTER", "hyperscan")
    hs = pipeline.build_matcher(active)
    assert hs.prefilter.name == hs.note_prefilter(frozenset(["s2"])).name == "hyperscan"
    monkeypatch.setenv("ERRBOOK_PREFILTER", "re2")
    r2 = pipeline.build_matcher(active)
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
    m = pipeline.build_matcher(active)
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
        m = pipeline.build_matcher(active)
        mem = m.new_scan()
        m.feed_text(mem, text)
        got = _stream(m, text.encode("utf-8"))
        assert got == (mem.results(), mem.notes), engine
        assert m.line_memo and len(m.line_memo) <= 50
        assert max(r["hits"] for r in got[0]) >= 7


def test_a_dense_log_grouped_by_distinct_line_gives_what_line_by_line_gives(active, monkeypatch, tmp_path):
    """linescan._block_grouped (a chunk that repeats few distinct hit lines): counts, evidence and its order
    across distinct lines, sequences, notes and outranked hits equal the line-by-line path and the in-memory
    path, in one process and with parallel workers (whose evidence is re-read by file offset)."""
    ex = [ln for e in active for s in e["signatures"] for x in s["examples"] for ln in x["text"].split("\n")][:60]
    extra = ["warning: gfx90a here", "HSA_OVERRIDE_GFX_VERSION=10.3.0 python x.py",
             "x" * 3000 + " hipErrorNoBinaryForGpu",
             "ok\r", "step 1 loss 0.5"]
    # the last quarter brings lines not seen before (sequences among them): their first hits, the evidence,
    # fall in grouped chunks, also in the second parallel worker
    rows = [ex[(i * 7) % 30 + (30 if i >= 4500 else 0)] if i % 5 else extra[i // 5 % len(extra)]
            for i in range(6000)]
    text = "\n".join(rows) + "\n"
    data = text.encode("utf-8")
    monkeypatch.setattr(linescan, "CHUNK", 64 << 10)
    monkeypatch.setattr(linescan, "GROUP_MIN_BYTES", 4 << 10)
    calls = []
    grouped = linescan._block_grouped
    monkeypatch.setattr(linescan, "_block_grouped", lambda *a: calls.append(1) or grouped(*a))
    path = tmp_path / "dense.log"
    path.write_bytes(data)
    for engine in (["hyperscan"] if _has_hyperscan() else []) + ["re2"]:
        monkeypatch.setenv("ERRBOOK_PREFILTER", engine)
        m = pipeline.build_matcher(active)
        mem = m.new_scan()
        m.feed_text(mem, data.decode("utf-8"))
        monkeypatch.setattr(linescan, "DENSE_CANDIDATES", 10 ** 9)        # line by line only
        line_by_line = _stream(m, data)
        assert not calls
        monkeypatch.setattr(linescan, "DENSE_CANDIDATES", 20)
        assert _stream(m, data) == line_by_line == (mem.results(), mem.notes), engine
        assert len(calls) >= 3, "the grouped path was not taken"
        par = m.new_scan()
        parallel.scan_file(m, str(path), par, workers=2)
        assert (par.results(), par.notes) == line_by_line, engine
        assert max(r["hits"] for r in line_by_line[0]) > 100 and line_by_line[1]
        calls.clear()
        # every line distinct, as with timestamps: nothing to group, but the plans are shared by cleaned line
        stamped = "".join(f"2026-12-01T10:{i // 60 % 60:02}:{i % 60:02}.{i:06}Z {r}\n" for i, r in enumerate(rows))
        mem = m.new_scan()
        m.feed_text(mem, stamped)
        m.clean_memo.clear()
        assert _stream(m, stamped.encode("utf-8")) == (mem.results(), mem.notes), engine
        assert not calls and len(m.clean_memo) < 100


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
    (db,) = tmp_path.glob("hs2-*.db")
    assert sorted(first) == [1, 3] and first[1][0] == {0} and first[3][0] == {1}
    assert prefilter.Prefilter(pats, "hyperscan").lines(probe) == first        # loaded from the cache
    db.write_bytes(b"\0garbage")
    assert prefilter.Prefilter(pats, "hyperscan").lines(probe) == first        # recompiled, cache rewritten
    assert db.read_bytes() != b"\0garbage"
    monkeypatch.setenv("ERRBOOK_CACHE", str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a directory")
    assert prefilter.Prefilter(pats, "hyperscan").lines(probe) == first        # an unusable cache is ignored
