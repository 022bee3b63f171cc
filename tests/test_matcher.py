"""The first stage: single lines, ordered sequences, and ranking that puts specific evidence first."""
from errbook.triage import matcher


def sig(entry, sid, priority, pattern=None, sequence=None, within=None, ignore_case=False, counter=()):
    d = {"id": sid, "priority": priority, "ignore_case": ignore_case,
         "counter_examples": [{"text": t, "source": "captured: test"} for t in counter]}
    if pattern:
        d["pattern"] = pattern
    else:
        d["sequence"] = sequence
        if within:
            d["within"] = within
    return d


class E:
    """A minimal entry for Matcher.from_entries."""
    def __init__(self, eid, sigs, cosmetic=False):
        self.data = {"id": eid, "signatures": sigs, **({"cosmetic": True} if cosmetic else {})}
        self.id, self.rel, self.withdrawn = eid, f"{eid}.yaml", False

    def get(self, k, d=None):
        return self.data.get(k, d)


def M(*entries):
    return matcher.Matcher.from_entries(list(entries))


def test_single_line_and_ignore_case():
    m = M(E("RMN-0001", [sig("RMN-0001", "a", 3, r"hipErrorNoBinaryForGpu", ignore_case=True)]))
    res = m.match_text("ok\nHIPERRORNOBINARYFORGPU: Unable to find code object\n")
    assert res[0]["id"] == "RMN-0001" and res[0]["evidence"][0]["lines"][0]["line"] == 2
    assert res[0]["confidence"] == "match"


def test_sequence_in_order_within_window():
    m = M(E("RMN-0002",
            [sig("RMN-0002", "seq", 4, sequence=[r"Memory access fault by GPU", r"Reason: Page not present"],
                             within=5)]))
    assert m.match_text("Memory access fault by GPU node-2\nx\nReason: Page not present or supervisor privilege")
    assert not m.match_text("Reason: Page not present\nMemory access fault by GPU node-2")       # wrong order
    assert not m.match_text("Memory access fault by GPU\n" + "x\n" * 10 + "Reason: Page not present")  # too far
    # a later first step restarts the window
    res = m.match_text("Memory access fault by GPU\n" + "x\n" * 10 + "Memory access fault by GPU\nReason: Page not "
                                                                     "present")
    assert [ln["line"] for ln in res[0]["evidence"][0]["lines"]] == [12, 13]
    # one line never advances two steps
    assert not m.match_text("Memory access fault by GPU; Reason: Page not present")


def test_specific_beats_many_generic_hits():
    m = M(E("RMN-0100", [sig("RMN-0100", "generic", 1, r"RuntimeError: HIP error")]),
          E("RMN-0200", [sig("RMN-0200", "specific", 5, r"hipErrorNoBinaryForGpu")]))
    log = "\n".join(["RuntimeError: HIP error: invalid argument"] * 50 +
                    ["RuntimeError: HIP error: hipErrorNoBinaryForGpu: Unable to find code object"])
    assert [r["id"] for r in m.match_text(log)] == ["RMN-0200", "RMN-0100"]


def test_on_one_line_the_more_specific_signature_wins_whatever_the_priority():
    generic = E("RMN-0100", [sig("RMN-0100", "generic", 5, r"HIP error: invalid device function")])
    specific = E("RMN-0200", [sig("RMN-0200", "specific", 2,
                                  r"HIP error: invalid device function.*composable_kernel/include/ck")])
    m = M(generic, specific)
    line = ("RuntimeError: HIP error: invalid device function at "
            "composable_kernel/include/ck/host_utility/kernel_launch.hpp")
    res = m.match_text(line)
    assert [r["id"] for r in res] == ["RMN-0200", "RMN-0100"]
    assert res[1]["standing"] == 2 and "outranked" in res[1]["note"]
    # on a line of its own the generic signature stands
    res = m.match_text(line + "\nRuntimeError: HIP error: invalid device function")
    assert {r["id"]: r["standing"] for r in res} == {"RMN-0100": 0, "RMN-0200": 0}


def test_cosmetic_entries_rank_below_a_real_cause():
    m = M(E("RMN-0096", [sig("RMN-0096", "ids", 5, r"amdgpu\.ids: No such file or directory")], cosmetic=True),
          E("RMN-0090", [sig("RMN-0090", "nb", 3, r"invalid device function")]))
    res = m.match_text("/opt/amdgpu/share/libdrm/amdgpu.ids: No such file or directory\nHIP error: invalid device "
                       "function")
    assert [r["id"] for r in res] == ["RMN-0090", "RMN-0096"] and res[1]["standing"] == 1


def test_a_counter_example_met_with_another_path_vetoes_its_signature_only():
    s = sig("RMN-0093", "tensile", 4, r"Cannot read \S*TensileLibrary",
            counter=["rocBLAS error: Cannot read /opt/rocm-5.4.0/lib/rocblas/library/TensileLibraryX: Illegal seek"])
    m = M(E("RMN-0093", [s]))
    assert not m.match_text("rocBLAS error: Cannot read /usr/lib64/rocblas/library/TensileLibraryX: Illegal seek")
    assert m.match_text("rocBLAS error: Cannot read /usr/lib64/rocblas/library/TensileLibrary.dat: No such file")


def test_a_signature_whose_paths_are_the_message_is_not_vetoed_by_another_path():
    """RMN-0210: the NVIDIA module's DKMS failure is a counter-example; masked, its 'Consult <path>/make.log' line
    equalled the amdgpu one and vetoed every real amdgpu failure."""
    s = sig("RMN-0210", "dkms", 5, r"Consult /var/lib/dkms/amdgpu/[^ ]*/build/make\.log",
            counter=["Consult /var/lib/dkms/nvidia/545.29.02/build/make.log for more information."])
    m = M(E("RMN-0210", [dict(s, keeps=["paths"])]))
    assert m.match_text("Consult /var/lib/dkms/amdgpu/6.8.5-2041575.24.04/build/make.log for more information.")
    vetoed = M(E("RMN-0210", [s]))       # without keeps the masked veto applies, as for other signatures
    assert not vetoed.match_text(
        "Consult /var/lib/dkms/amdgpu/6.8.5-2041575.24.04/build/make.log for more information.")


def test_numbers_are_not_masked_for_vetoes():
    s = sig("RMN-0118", "spill", 4, r"VGPRs Spill: [0-9]+", counter=["remark: VGPRs Spill: 0"])
    m = M(E("RMN-0118", [s]))
    assert m.match_text("remark: VGPRs Spill: 12")


def test_the_same_line_is_shown_once_as_evidence():
    m = M(E("RMN-0001", [sig("RMN-0001", "a", 3, r"cuda_runtime\.h"), sig("RMN-0001", "b", 3, r"file not found")]))
    res = m.match_text("fatal error: 'cuda_runtime.h' file not found")
    assert len(res[0]["evidence"]) == 1 and res[0]["signatures"] == ["a", "b"]


def test_more_distinct_evidence_ranks_higher_at_equal_priority():
    m = M(E("RMN-0001", [sig("RMN-0001", "a1", 3, r"cannot open shared object file")]),
          E("RMN-0002", [sig("RMN-0002", "b1", 3, r"cannot open shared object file"),
                         sig("RMN-0002", "b2", 3, r"libamdhip64\.so")]))
    res = m.match_text("ImportError: libamdhip64.so.6: cannot open shared object file: No such file or directory")
    assert res[0]["id"] == "RMN-0002" and res[0]["score"] > res[1]["score"]
