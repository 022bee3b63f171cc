"""The paste page (JavaScript) and the CLI (Python/RE2) must give identical answers, both stages included.

Every signature example and counter-example, every evaluation log (seen, unseen and benign), and a set of
hostile lines go through both engines; results (ids, scores, confidence, evidence lines) must be equal.
"""
import json
import shutil
import subprocess

import pytest

from conftest import REPO
from errbook.kb import entries
from errbook.triage import normalize, pipeline, ranking, retrieval
from errbook.web import bundle

NODE = shutil.which("node")
pytestmark = pytest.mark.node    # fails without Node.js, unless allowed (tests/conftest.py)


def node(req: dict):
    r = subprocess.run([NODE, str(REPO / "tests" / "js" / "engine.cjs")], input=json.dumps(req),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def kb():
    loaded, errors = entries.load_all(REPO)
    assert not errors
    active = list(entries.active(loaded))
    know = pipeline.knowledge(REPO, active)
    m = pipeline.build_matcher(active, pages=know.pages)      # the message pages' evidence, as the bundle's
    return active, m, know, bundle.build(REPO, active)


def corpus_cases(active) -> list[dict]:
    cases = []
    for e in active:
        for s in e["signatures"]:
            for k in ("examples", "counter_examples"):
                for i, ex in enumerate(s.get(k) or []):
                    cases.append({"name": f"{e.id}/{s['id']}/{k}/{i}", "text": ex["text"]})
    corpus = sorted((REPO / "errata" / "corpus").rglob("*.log"))
    for p in corpus + sorted((REPO / "tests" / "hostile" / "logs").glob("*.log")):
        cases.append({"name": str(p.relative_to(REPO)), "text": p.read_text(encoding="utf-8", errors="replace")})
    return cases


def hostile_cases(m) -> list[dict]:
    anchors = sorted({a for _, _, anc in m.patterns for a in anc})
    cases = [
        {"name": "ansi+timestamps",
         "text": "2024-01-01T00:00:00Z \x1b[31m[rank1]: " + " ".join(anchors[:20]) + "\x1b[0m"},
        {"name": "unicode", "text": "Ünïcödé 🚀 \u2028 " + " ".join(anchors[:10]) + " \u00a0 ǅ \u212a k \u017f"},
        {"name": "cr-progress", "text": "\r".join(f"{i}% " + anchors[i % len(anchors)] for i in range(100))},
        {"name": "json", "text": '{"log":"' + "\\n".join(anchors[:30]) + '\\n","stream":"stderr"}'},
        {"name": "windows", "text": "C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\" + " ".join(anchors[:10])},
        {"name": "empty", "text": ""},
        {"name": "nul", "text": "\x00\x01\x02" * 1000},
        {"name": "no-error-line", "text": "GPU 0: gfx1100 ROCm 6.2\nthroughput 12 tokens/s\nlatency 300 ms\n"},
        {"name": "chinese", "text": "找不到设备，显存不足，程序崩溃\n"},
    ]
    # Lines near the length caps made of the anchors themselves: the worst case for backtracking.
    for i, a in enumerate(anchors):
        body = (a + " ") * (normalize.LINE_CAP // (len(a) + 1) + 2)
        cases.append({"name": f"long-anchor-{i}", "text": body})
        cases.append({"name": f"long-raw-{i}", "text": "é" * 40000 + a})
    return cases


@pytest.mark.slow
def test_python_and_javascript_agree_on_the_whole_corpus(kb):
    active, m, know, b = kb
    cases = corpus_cases(active) + hostile_cases(m)
    js = node({"bundle": b, "cases": cases})
    mismatches = []
    for c in cases:
        py = json.loads(json.dumps(ranking.match_text(m, know, c["text"])))
        if py != js[c["name"]]:
            mismatches.append((c["name"], py[:1], js[c["name"]][:1]))
    assert not mismatches, mismatches[:3]
    # With no answer (no diagnosis, no likely entry: observations alone are not one), both name the same first
    # failure line (the CLI prints it, the page offers to search for it).
    firsts = 0
    for c in cases:
        scan = m.new_scan()
        m.feed_text(scan, c["text"])
        answered = any(r["level"] in ("diagnosis", "likely") for r in js[c["name"]])
        py = None if answered else retrieval.first_failure_line(scan.notes.get(retrieval.SAMPLE_NAME) or [])
        assert js["__first"][c["name"]] == py, c["name"]
        firsts += py is not None
    assert firsts > 50, f"only {firsts} unmatched cases had a failure line: the comparison barely ran"
    for c in cases:              # every example really matched its own entry in both engines
        parts = c["name"].split("/")
        if len(parts) == 4 and parts[2] == "examples":
            assert any(r["id"] == parts[0] and r["confidence"] == "match" for r in js[c["name"]]), c["name"]
    assert any(js[c["name"]] and js[c["name"]][0]["confidence"] == "likely" for c in cases), \
        "the second stage was never exercised"
    levels = {r["level"] for c in cases for r in js[c["name"]]}
    assert levels == {"diagnosis", "observation", "likely"}, levels       # every answer level was exercised
    assert js["__ms"] < 60000, f"the JavaScript engine took {js['__ms']} ms on the corpus and hostile lines"


def test_cleaning_and_tokens_are_identical(kb):
    *_, b = kb
    lines = ["\x1b[1;31merror\x1b[0m: x", "2024-01-01 10:00:00,123 [rank12]: y", "\u3000z\ufeff",
             "(RayWorkerWrapper pid=99, ip=10.0.0.1) E", "x" * 70000, "é" * 40000, '{"msg":"a\\nb\\u001b[0m"}',
             "C:\\a\\b c", "[  1.000001] amdgpu 0000:c3:00.0: amdgpu: x", "\u2018q\u2019 \u201cw\u201d 😀"]
    assert node({"bundle": b, "lines": lines}) == [normalize.clean(normalize.cap_raw(ln)) for ln in lines]
    texts = ["hipErrorNoBinaryForGpu HIP_VISIBLE_DEVICES gfx1100 libamdhip64.so.6 /opt/rocm-6.2/lib/x.so 0xdeadbeef",
             "找不到设备 显存不足 RuntimeError: No HIP GPUs are available", "TensileLibrary_lazy_gfx942.dat v6.2.4"]
    assert node({"bundle": b, "texts": texts}) == [retrieval.tokens(t) for t in texts]


@pytest.mark.parametrize("machine", ["radeon-bad-override", "mi300x-node", "cuda-h200"])
def test_a_machine_facts_file_reranks_alike_in_both_engines(kb, machine):
    """errbook triage --facts FILE and the paste page with the same facts file give the same answers."""
    from errbook.machine import checks
    from errbook.machine import facts as facts_mod
    active, m, know, b = kb
    text = (REPO / "tests" / "doctor_machines" / f"{machine}.json").read_text(encoding="utf-8")
    values = facts_mod.values_of(json.loads(text))
    mf, bonus = checks.to_log_facts(values), checks.machine_bonus(active, values)
    cases = corpus_cases(active)[:400]
    js = node({"bundle": b, "cases": cases, "facts": text})
    for c in cases:
        scan = m.new_scan()
        m.feed_text(scan, c["text"])
        py = json.loads(json.dumps(ranking.rank(scan, know, machine_facts=mf, machine_bonus=bonus)))
        assert py == js[c["name"]], c["name"]
    assert bonus or machine == "cuda-h200"


def test_the_page_and_the_cli_list_the_same_unexplained_error_lines(kb, tmp_path):
    """The error lines no diagnosis explains (the paste page lists them under the matches; `--format markdown`
    does too): engine.js's unexplainedLines equals cli/formats/loglines.unexplained on real and unseen logs."""
    import io

    from errbook.cli.formats import base, loglines
    from errbook.triage import textenc
    active, m, know, b = kb
    logs = sorted((REPO / "errata" / "corpus" / "real").glob("*.log"))[:40] \
        + sorted((REPO / "errata" / "corpus" / "unseen").glob("*.log"))[:80]
    cases, want = [], []
    for p in logs:
        raw = p.read_bytes()
        stream, _ = textenc.utf8_stream(io.BytesIO(raw))
        text = stream.read().decode("utf-8", "replace")
        results = json.loads(json.dumps(ranking.match_text(m, know, text)))
        f = tmp_path / "log"
        f.write_text(text, encoding="utf-8")
        want.append(loglines.unexplained([(str(f), "")], base.explained_lines(results)))
        cases.append({"text": text, "results": results})
    got = node({"bundle": b, "unexplained": cases})
    assert got == want
    assert sum(map(len, want)) > 50            # the comparison had lines to compare
