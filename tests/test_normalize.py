"""Cleaning: the surface forms of the same message that a log from another machine brings."""
import random
import re

import re2

from errbook.triage import normalize
from errbook.triage.prefilter import loose


def test_launcher_and_logger_prefixes_are_stripped():
    c = normalize.clean
    assert c("\x1b[1m\x1b[31merror:\x1b[0m boom") == ["error: boom"]
    assert c("2024-05-01T10:11:12.345Z [rank3]: RuntimeError: x") == ["RuntimeError: x"]
    assert c("[2024-05-01 10:11:12,001] [default0]: hipErrorX") == ["hipErrorX"]
    assert c("(VllmWorkerProcess pid=123) ERROR 05-01 x") == ["ERROR 05-01 x"]
    assert c("[  12.345678] amdgpu 0000:03:00.0: amdgpu: failed to load") == ["amdgpu: failed to load"]
    assert c("Nov 30 12:00:01 host kernel: amdgpu: ring gfx timeout") == ["amdgpu: ring gfx timeout"]
    assert c("web-1  | RuntimeError: No HIP GPUs are available") == ["RuntimeError: No HIP GPUs are available"]
    assert c("##[error]Process completed with exit code 1.") == ["Process completed with exit code 1."]


def test_gcc_quotes_windows_paths_and_odd_spaces():
    c = normalize.clean
    assert c("error: \u2018threadIdx\u2019 was not declared") == ["error: 'threadIdx' was not declared"]
    assert c("\u201cfoo\u201d") == ['"foo"']
    assert c(r"C:\Program Files\AMD\ROCm\6.1\include\hip\hip_runtime.h:1:10: fatal error") == \
        ["C:/Program Files/AMD/ROCm/6.1/include/hip/hip_runtime.h:1:10: fatal error"]
    # a Windows path with \n and \t inside it is a path, not a JSON-escaped line
    assert c(r"at C:\src\torch\aten\src\ATen\native\transformers\hip\sdp_utils.cpp:711") == \
        ["at C:/src/torch/aten/src/ATen/native/transformers/hip/sdp_utils.cpp:711"]
    assert c("a\u00a0b\u2003c") == ["a b c"]
    assert c("a\U0001F600b") == ["a\ufffdb"]
    assert c("\u212aernel \u017fize") == ["Kernel size"]


def test_json_escaped_lines_are_split():
    line = '{"log":"error: x\\n\\u001b[31mfatal: y\\u001b[0m\\n","stream":"stderr"}'
    assert normalize.clean(line) == ["error: x", "fatal: y", '","stream":"stderr"}']
    assert normalize.clean('  "output": "a\\tb\\nc \\"q\\""') == ['  "output": "a\tb', 'c "q""']


def test_cr_only_logs_and_crlf_split_into_lines():
    assert normalize.split_lines("a\rb\r\nc\nd") == ["a", "b", "c", "d"]
    bar = "  5%|#   | 1/20\r 50%|#####| 10/20\r100%|######| 20/20"
    assert normalize.split_lines(bar)[-1] == "100%|######| 20/20"


def test_long_lines_are_matched_in_overlapping_windows():
    s = "x" * 10000 + " needle " + "y" * 100
    w = normalize.clean(s)
    assert all(len(p) <= normalize.LINE_CAP for p in w)
    assert any("needle" in p for p in w)
    assert sum(len(p) for p in w) >= len(s)


def test_mask_keeps_what_identifies_the_message():
    m = normalize.mask("Cannot read /opt/rocm-5.4.0/lib/rocblas/library/TensileLibrary.dat at 0x7f5681dfb6c0 gfx1100")
    assert m == "Cannot read <path>/TensileLibrary.dat at <hex> gfx<n>"
    assert normalize.mask("VGPRs Spill: 0", numbers=False) == "VGPRs Spill: 0"


FRAGMENTS = ["error: ", "\u2018x\u2019", "C:\\Program Files\\AMD\\", "\\n", "\\t", '{"log":"', "[  1.5] ", "\x1b[31m",
             "\u00a0", "\U0001F600", "/opt/rocm-6.2/lib/", "hipErrorNoBinaryForGpu", " - [Not Found]", "0x7f00",
             "web-1  | ", "2024-01-01T00:00:00Z ", "\u212a", "cuda_runtime.h", "'", '"', "\\", ":", " ", "gfx90a"]


def test_every_cleaned_sub_line_is_inside_its_probe():
    """The prefilter's guarantee: whatever matches a cleaned sub-line also matches the raw line's probe."""
    rnd = random.Random(7)
    for _ in range(3000):
        raw = "".join(rnd.choice(FRAGMENTS) for _ in range(rnd.randint(1, 12)))
        probe = normalize.probe(raw.encode("utf-8")).decode("utf-8")
        for sub in normalize.clean(raw):
            # every run of the sub-line between replaced characters appears in the probe
            assert all(part in probe for part in re.split("[\ufffd\t]", sub)), (raw, sub, probe)


def test_patterns_that_match_a_sub_line_match_the_probe():
    pats = [r"fatal error: 'x'", r"Program Files/AMD/", r"hipErrorNoBinaryForGpu - \[Not Found\]",
            r"error: \S+", r'\{"log":"error', r"^cuda_runtime\.h"]
    rnd = random.Random(11)
    for _ in range(2000):
        raw = "".join(rnd.choice(FRAGMENTS) for _ in range(rnd.randint(1, 10)))
        probe = normalize.probe(raw.encode("utf-8"))
        for sub in normalize.clean(raw):
            for p in pats:
                if re2.search(p, sub):
                    assert re2.search(loose(p).encode(), probe), (p, raw, sub)
