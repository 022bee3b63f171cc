"""The matcher: cleaning, single lines, ordered sequences, and ranking that puts specific evidence first."""
from errbook import matcher, normalize


def sig(entry, sid, priority, pattern=None, sequence=None, within=None, ignore_case=False):
    d = {"id": sid, "priority": priority, "ignore_case": ignore_case}
    if pattern:
        d["pattern"] = pattern
    else:
        d["sequence"] = sequence
        if within:
            d["within"] = within
    return matcher.build_signature(entry, d)


def test_clean_line_strips_noise():
    assert normalize.clean_line("\x1b[1m\x1b[31merror:\x1b[0m boom") == "error: boom"
    assert normalize.clean_line("2024-05-01T10:11:12.345Z [rank3]: RuntimeError: x") == "RuntimeError: x"
    assert normalize.clean_line("[2024-05-01 10:11:12,001] [default0]: hipErrorX") == "hipErrorX"
    assert normalize.clean_line("(VllmWorkerProcess pid=123) ERROR 05-01 x") == "ERROR 05-01 x"
    assert normalize.clean_line("  5%|#   | 1/20\r 50%|#####| 10/20\r100%|######| 20/20\r") == "100%|######| 20/20"
    assert normalize.clean_line("a\u00a0b\u2003c") == "a b c"
    assert len(normalize.clean_line("x" * 10000)) == normalize.LINE_CAP


def test_single_line_and_ignore_case():
    m = matcher.Matcher([sig("RMN-0001", "a", 3, r"hipErrorNoBinaryForGpu", ignore_case=True)])
    res = m.match_text("ok\nHIPERRORNOBINARYFORGPU: Unable to find code object\n")
    assert res[0]["id"] == "RMN-0001" and res[0]["evidence"][0]["lines"][0]["line"] == 2


def test_sequence_in_order_within_window():
    s = sig("RMN-0002", "seq", 4, sequence=[r"Memory access fault by GPU", r"Reason: Page not present"], within=5)
    m = matcher.Matcher([s])
    assert m.match_text("Memory access fault by GPU node-2\nx\nReason: Page not present or supervisor privilege")
    assert not m.match_text("Reason: Page not present\nMemory access fault by GPU node-2")       # wrong order
    assert not m.match_text("Memory access fault by GPU\n" + "x\n" * 10 + "Reason: Page not present")  # too far
    # a later first step restarts the window
    res = m.match_text("Memory access fault by GPU\n" + "x\n" * 10 + "Memory access fault by GPU\nReason: Page not present")
    assert [l["line"] for l in res[0]["evidence"][0]["lines"]] == [12, 13]


def test_specific_beats_many_generic_hits():
    generic = sig("RMN-0100", "generic", 1, r"RuntimeError: HIP error")
    specific = sig("RMN-0200", "specific", 5, r"hipErrorNoBinaryForGpu")
    m = matcher.Matcher([generic, specific])
    log = "\n".join(["RuntimeError: HIP error: invalid argument"] * 50 +
                    ["RuntimeError: HIP error: hipErrorNoBinaryForGpu: Unable to find code object"])
    res = m.match_text(log)
    assert [r["id"] for r in res] == ["RMN-0200", "RMN-0100"]


def test_more_distinct_evidence_ranks_higher_at_equal_priority():
    a1 = sig("RMN-0001", "a1", 3, r"cannot open shared object file")
    b1 = sig("RMN-0002", "b1", 3, r"cannot open shared object file")
    b2 = sig("RMN-0002", "b2", 3, r"libamdhip64\.so")
    m = matcher.Matcher([a1, b1, b2])
    res = m.match_text("ImportError: libamdhip64.so.6: cannot open shared object file: No such file or directory")
    assert res[0]["id"] == "RMN-0002" and res[0]["score"] > res[1]["score"]


def test_prefilter_never_loses_a_match():
    s = sig("RMN-0001", "a", 3, r"local memory \(\d+\) exceeds limit")
    m = matcher.Matcher([s])
    assert m.prefilter.search(b"error: local memory (80000) exceeds limit (65536)")
    assert m.candidates("error: local memory (80000) exceeds limit (65536)") == [0]
    assert m.candidates("all good") == []
