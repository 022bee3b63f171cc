"""The paste page (JavaScript) and the CLI (Python/RE2) must give identical answers.

Every signature example and counter-example in the knowledge base, every evaluation log, and a set of
hostile lines go through both engines; results (ids, scores, evidence lines) must be equal.
"""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from errbook import entries, matcher, normalize

REPO = Path(__file__).resolve().parents[1]
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")


def node_match(bundle: dict, cases: list[dict]) -> dict:
    r = subprocess.run([NODE, str(REPO / "tests" / "js" / "engine.cjs")], input=json.dumps({"bundle": bundle, "cases": cases}),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def corpus_cases(loaded) -> list[dict]:
    cases = []
    for e in loaded:
        for s in e["signatures"]:
            for k in ("examples", "counter_examples"):
                for i, ex in enumerate(s.get(k) or []):
                    cases.append({"name": f"{e.id}/{s['id']}/{k}/{i}", "text": ex["text"]})
    for p in sorted((REPO / "tests" / "triage_eval").rglob("*.log")):
        cases.append({"name": str(p.relative_to(REPO)), "text": p.read_text(encoding="utf-8", errors="replace")})
    return cases


def hostile_cases(m: matcher.Matcher) -> list[dict]:
    anchors = sorted({a for s in m.sigs for a in s.anchors})
    cases = [
        {"name": "ansi+timestamps", "text": "2024-01-01T00:00:00Z \x1b[31m[rank1]: " + " ".join(anchors[:20]) + "\x1b[0m"},
        {"name": "unicode", "text": "Ünïcödé 🚀 \u2028 " + " ".join(anchors[:10]) + " \u00a0 ǅ K k"},
        {"name": "cr-progress", "text": "\r".join(f"{i}% " + anchors[i % len(anchors)] for i in range(100))},
        {"name": "empty", "text": ""},
        {"name": "nul", "text": "\x00\x01\x02" * 1000},
    ]
    # Lines near the length caps made of the anchors themselves: the worst case for backtracking.
    for i, a in enumerate(anchors):
        body = (a + " ") * (normalize.LINE_CAP // (len(a) + 1) + 2)
        cases.append({"name": f"long-anchor-{i}", "text": body})
        cases.append({"name": f"long-raw-{i}", "text": "é" * 40000 + a})
    return cases


def test_python_and_javascript_agree_on_the_whole_corpus():
    loaded, errors = entries.load_all(REPO)
    assert not errors
    active = list(entries.active(loaded))
    m = matcher.Matcher.from_entries(active)
    cases = corpus_cases(active) + hostile_cases(m)
    js = node_match(m.bundle(), cases)
    mismatches = []
    for c in cases:
        py = m.match_text(c["text"])
        if py != js[c["name"]]:
            mismatches.append((c["name"], py[:1], js[c["name"]][:1]))
    assert not mismatches, mismatches[:5]
    # every example really matched its own entry in both engines
    for c in cases:
        parts = c["name"].split("/")
        if len(parts) == 4 and parts[2] == "examples":
            assert any(r["id"] == parts[0] for r in js[c["name"]]), c["name"]
    assert js["__ms"] < 60000, f"the JavaScript engine took {js['__ms']} ms on the corpus and hostile lines"


def test_cleaning_is_identical():
    lines = ["\x1b[1;31merror\x1b[0m: x", "2024-01-01 10:00:00,123 [rank12]: y", "a\rb\rc\r", "\u3000z\ufeff",
             "(RayWorkerWrapper pid=99, ip=10.0.0.1) E", "x" * 70000, "é" * 40000]
    bundle = {"normalize": normalize.JS_SPEC, "signatures": []}
    engine_js = REPO / "tests" / "js" / "engine.cjs"
    r = subprocess.run([NODE, str(engine_js)], input=json.dumps({"bundle": bundle, "lines": lines}),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [normalize.clean_line(normalize.cap_raw(l)) for l in lines]
