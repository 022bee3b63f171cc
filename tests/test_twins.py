"""The twins' contract: the Python engine and its port for the paste page (scripts/errbook/web/assets/engine.js).

1. What engine.js gets from Python is explicit: web/bundle.py ships data built from the entries and the corpus
   (bundle.DATA_KEYS) and each mirrored module's public JS_SPEC (bundle.SPECS), never a private name; engine.js
   reads no bundle key that is neither (a traced run under Node.js says which keys it reads).
2. Constants engine.js keeps as literals (used outside a compiled bundle) equal their Python originals.
3. Shared truth tables (tests/twins/*.yaml) that both engines must give row for row: the doctor's condition
   operators, line cleaning, the second stage's gate and tokenizer.
tests/test_engines.py compares whole answers on the corpora; tests/test_twins_fuzz.py on seeded random logs.
"""
import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import NODE, REPO
from errbook.kb import entries, versions
from errbook.machine import checks
from errbook.triage import matcher, retrieval, textenc
from errbook.web import bundle

TWINS = REPO / "tests" / "twins"
# tests/twins/mutants.py points this and the Node.js runners (tests/js/) at mutated copies of engine.js
ENGINE_JS = Path(os.environ.get("ERRBOOK_ENGINE_JS") or REPO / "scripts" / "errbook" / "web" / "assets" / "engine.js")
OUTCOME = {True: True, False: False, "unknown": None}


def node(script: str, req: dict):
    r = subprocess.run([NODE, str(REPO / "tests" / "js" / script)], input=json.dumps(req), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def table(name: str):
    return yaml.safe_load((TWINS / name).read_text(encoding="utf-8"))


def text_of(x) -> str:
    """A table's string, or {repeat: S, times: N, then: T} for the long ones."""
    return x["repeat"] * x["times"] + x.get("then", "") if isinstance(x, dict) else x


def texts_of(xs: list) -> list[str]:
    return [text_of(x) for x in xs for _ in range(x.get("count", 1) if isinstance(x, dict) else 1)]


@pytest.fixture(scope="module")
def kb():
    loaded, errors = entries.load_all(REPO)
    assert not errors
    active = list(entries.active(loaded))
    return active, bundle.build(REPO, active)


# --- 1. the bundle: JS_SPECs and data, nothing else --------------------------------------------------------------

def _at(b: dict, place: tuple) -> dict:
    for k in place:
        b = b[k]
    return b


def test_the_bundle_ships_each_modules_js_spec_and_data_only(kb):
    _, b = kb
    b = json.loads(json.dumps(b))
    places = {place for place, _ in bundle.SPECS} | set(bundle.DATA_KEYS)
    for place, mod in bundle.SPECS:
        spec = mod.JS_SPEC
        assert isinstance(spec, dict) and spec, f"{mod.__name__} has no JS_SPEC"
        shipped = _at(b, place)
        for k, v in spec.items():
            assert shipped.get(k) == json.loads(json.dumps(v)), f"{place + (k,)} is not {mod.__name__}.JS_SPEC[{k!r}]"
    # every key at every place the bundle fills comes from one JS_SPEC or is declared data (a nested place aside)
    for place in places:
        own = set(bundle.DATA_KEYS.get(place, ())) | {k for p, mod in bundle.SPECS if p == place for k in mod.JS_SPEC}
        nested = {p[len(place)] for p in places if len(p) > len(place) and p[:len(place)] == place}
        assert set(_at(b, place)) == own | nested, place
    assert len({mod for _, mod in bundle.SPECS}) == len(bundle.SPECS)     # one JS_SPEC per module, shipped once


def test_bundle_py_reads_no_private_name_or_loose_constant():
    """bundle.py may call modules' functions and read their JS_SPEC; a private name (retrieval._DIRS) or a loose
    constant (environment.PLUS) would be a contract nobody declared."""
    tree = ast.parse((REPO / "scripts" / "errbook" / "web" / "bundle.py").read_text(encoding="utf-8"))
    modules = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    bad = [f"{n.value.id}.{n.attr}" for n in ast.walk(tree)
           if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in modules
           and (n.attr.startswith("_") or (n.attr.isupper() and n.attr != "JS_SPEC"))]
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
                if a.name.startswith("_") or (a.name.isupper() and a.name != "JS_SPEC")]
    assert not bad and not imported, bad + imported


@pytest.mark.node
def test_engine_js_reads_no_key_the_bundle_does_not_declare(kb):
    active, b = kb
    texts = [ex["text"] for e in active[:60] for s in e["signatures"] for ex in (s.get("examples") or [])[:1]]
    texts += ["RuntimeError: something went wrong that no signature knows about 0x1f /opt/rocm-6.2/lib/x.so",
              "找不到设备", '{"log":"a\\nb"}', "C:\\x\\y failed", "x" * 5000, "\x1b[31mGPU 0: gfx1100 ROCm 6.2\x1b[0m"]
    doc = json.loads((REPO / "tests" / "doctor_machines" / "radeon-bad-override.json").read_text(encoding="utf-8"))
    facts = json.dumps(dict(doc, seconds=1.5))
    got = node("keys.cjs", {"bundle": b, "texts": texts, "facts": facts})
    spec_keys = {place: {k for p, mod in bundle.SPECS if p == place for k in mod.JS_SPEC}
                 for place, _ in bundle.SPECS}
    data = [(place, set(keys)) for place, keys in bundle.DATA_KEYS.items()]

    def under(p: tuple, declared: list) -> bool:
        return any(p[:len(pl)] == pl and len(p) > len(pl) and p[len(pl)] in ks for pl, ks in declared)

    # Data is sparse (a profile names only what its entry's triggers say; most tokens are in no document), so
    # reading a missing key there is how the engine asks; anywhere else the bundle lacks what the engine needs.
    absent = [p for p in map(tuple, got["absent"]) if not under(p, data)]
    assert not absent, f"engine.js reads keys the bundle does not have: {absent[:5]}"
    read = {tuple(p) for p in got["read"]} | {tuple(p) for p in got["absent"]}
    stray = [p for p in read if not under(p, data + list(spec_keys.items()))
             and not any(p == pl[:len(p)] for pl in list(spec_keys) + list(bundle.DATA_KEYS))]
    assert not stray, f"engine.js reads bundle keys no JS_SPEC or data declares: {sorted(stray)[:5]}"
    # and the converse: a JS_SPEC key engine.js never reads is a dead contract
    unread = [place + (k,) for place, ks in spec_keys.items() if place not in bundle.PORTED_ELSEWHERE for k in ks
              if place + (k,) not in read]
    assert not unread, f"keys of a JS_SPEC engine.js never reads: {unread}"


# --- 2. constants engine.js keeps as literals ---------------------------------------------------------------------

# They are used where no bundle is at hand (inRange and decodeLog are called on their own), so they are literals in
# engine.js: each must equal its Python original.
PINNED = {
    "MAX_EVIDENCE": matcher.MAX_EVIDENCE, "SUB_SPACE": matcher.SUB_SPACE, "SNIFF_BYTES": textenc.SNIFF_BYTES,
    "MAX_DIGITS": versions.MAX_DIGITS, "OPERATORS": list(checks.OPERATORS), "NEGATIVE": checks.NEGATIVE,
    "RANGE": versions.RANGE_PATTERN,
}


def _js_literal(src: str, name: str):
    m = re.search(rf"^ *const {name} = (.+?);$", src, re.MULTILINE | re.DOTALL)
    assert m, f"engine.js has no const {name}"
    lit = m.group(1).strip()
    if lit.startswith("/"):
        return lit[1:lit.rindex("/")]
    return json.loads(re.sub(r"([{,]\s*)([A-Za-z_]+):", r'\1"\2":', lit))


def test_engine_js_literals_equal_their_python_originals():
    src = ENGINE_JS.read_text(encoding="utf-8")
    wrong = {n: (_js_literal(src, n), v) for n, v in PINNED.items() if _js_literal(src, n) != v}
    assert not wrong, wrong
    # the scores' coefficients (matcher.py: max weight + 10 per further signature + min(hits - 1, 9))
    assert "part.best + 10 * (part.sigs.size - 1) + Math.min(part.hits - 1, 9)" in src


def test_engine_js_names_modules_that_exist():
    """Its comments say which Python module each part ports; a module that moved must be renamed there too."""
    src = ENGINE_JS.read_text(encoding="utf-8")
    named = set(re.findall(r"[A-Za-z_/]+\.py\b", src))
    assert named
    missing = [n for n in sorted(named) if not ((REPO / "scripts" / "errbook" / n).is_file() or (REPO / n).is_file())]
    assert not missing, f"engine.js names modules that are not there (write them as triage/x.py): {missing}"


# --- 3. shared truth tables ---------------------------------------------------------------------------------------

def test_the_operator_table_covers_every_operator_and_outcome():
    rows = table("operators.yaml")
    for op in checks.OPERATORS:
        outcomes = {r["expected"] for r in rows if r.get("op") == op}
        assert {True, False} <= outcomes and "unknown" in outcomes, (op, outcomes)
    assert all(r.get("op") in checks.OPERATORS for r in rows if "cond" not in r)


def _conditions() -> list[tuple[dict, dict, bool | None]]:
    rows = []
    for r in table("operators.yaml"):
        cond = r.get("cond") or {"fact": "f", r["op"]: r["arg"]}
        rows.append((cond, {} if r.get("missing") else {"f": r["value"]}, OUTCOME[r["expected"]]))
    return rows


def test_python_gives_the_operator_table():
    wrong = [(c, v, want) for c, v, want in _conditions() if checks.holds(c, v) is not want]
    assert not wrong, wrong[:5]


@pytest.mark.node
def test_javascript_gives_the_operator_table(kb):
    rows = _conditions()
    js = node("engine.cjs", {"bundle": kb[1], "conditions": [[c, v] for c, v, _ in rows]})
    wrong = [(c, v, want, got) for (c, v, want), got in zip(rows, js, strict=True) if got is not want]
    assert not wrong, wrong[:5]


def _cleaned(text: str) -> list[str]:
    from errbook.triage import normalize
    return [sub for ln in normalize.split_lines(text) for sub in normalize.clean(normalize.cap_raw(ln))]


@pytest.mark.node
def test_both_engines_clean_lines_as_the_normalisation_table_says(kb):
    rows = table("normalize.yaml")
    ins, outs = [text_of(r["in"]) for r in rows], [texts_of(r["out"]) for r in rows]
    js = node("engine.cjs", {"bundle": kb[1], "split_lines": ins})
    for i, (text, want) in enumerate(zip(ins, outs, strict=True)):
        assert _cleaned(text) == want, ("python", i, text[:80])
        assert js[i] == want, ("javascript", i, text[:80])


@pytest.mark.node
def test_both_engines_gate_the_second_stage_and_tokenize_as_the_tables_say(kb):
    t = table("trouble.yaml")
    queries = [[text_of(x) for x in r["lines"]] for r in t["trouble"]]
    wants = [[r["trouble"], None if r["first"] is None else text_of(r["first"])] for r in t["trouble"]]
    js = node("engine.cjs", {"bundle": kb[1], "trouble": queries})
    for q, want, got in zip(queries, wants, js, strict=True):
        assert [retrieval.reports_trouble(q), retrieval.first_failure_line(q)] == want, ("python", q[:2])
        assert got == want, ("javascript", q[:2])
    assert {w[0] for w in wants} == {True, False} and any(w[1] for w in wants)
    texts = [r["text"] for r in t["tokens"]]
    js = node("engine.cjs", {"bundle": kb[1], "texts": texts})
    for r, got in zip(t["tokens"], js, strict=True):
        assert retrieval.tokens(r["text"]) == r["tokens"], ("python", r["text"])
        assert got == r["tokens"], ("javascript", r["text"])


# --- 4. Node.js is required, not optional -------------------------------------------------------------------------

@pytest.mark.parametrize("env, outcome", [({}, "error"), ({"ERRBOOK_ALLOW_NO_NODE": "1"}, "skipped"),
                                          ({"ERRBOOK_ALLOW_NO_NODE": "1", "CI": "true"}, "error")])
def test_without_node_the_twin_tests_fail_unless_allowed_outside_ci(tmp_path, env, outcome):
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "ERRBOOK_ALLOW_NO_NODE")}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                        "tests/test_twins.py::test_javascript_gives_the_operator_table"], cwd=REPO, timeout=300,
                       env=dict(base, PATH=str(tmp_path), **env), capture_output=True, text=True)   # no node on PATH
    assert f"1 {outcome}" in r.stdout, r.stdout[-500:]
    assert (r.returncode == 0) == (outcome == "skipped")
