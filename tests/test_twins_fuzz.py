"""Seeded differential fuzz of the twins: random logs and random machine facts through both engines.

Logs are drawn from the entries' signature examples and counter-examples, the benign corpus and random noise, then
mutated (launcher prefixes, case, truncation, colour codes, typographic quotes, Windows paths, JSON escaping, CR
and CRLF line ends). Facts files start from a fixture machine and get random values of each fact's type, drawn
from the fixtures and the operands the entries' checks test. Both engines must give the same top 5 (whole results:
ids, order, scores, level, evidence, environment) with and without the facts, read the facts file alike, and
give the same doctor findings (the machine's log facts and each entry's check bonus).

Reproduce a failure with ERRBOOK_FUZZ_SEED=<the seed printed>; ERRBOOK_FUZZ_CASES sets how many logs.
"""
import json
import os
import random
import subprocess
import time

import pytest

from conftest import NODE, REPO
from errbook.kb import entries
from errbook.machine import checks
from errbook.machine import facts as facts_mod
from errbook.triage import pipeline, ranking
from errbook.web import bundle

SEED = int(os.environ.get("ERRBOOK_FUZZ_SEED") or 20261207)
CASES = int(os.environ.get("ERRBOOK_FUZZ_CASES") or 300)
MACHINES = 40
TOP = 5

PREFIXES = ["2024-03-01T10:11:12.345Z ", "[rank3]: ", "(VllmWorker pid=12) ", "[  12.000001] ", "##[error]",
            "web-1  | ", "runner [stderr] ", "12:00:01 ", "Mar  1 10:11:12 host kernel: ",
            "amdgpu 0000:c3:00.0: ", '{"log":"', "[default0]:", "INFO ", "WARNING: "]
NOISE_WORDS = ["error", "failed", "GPU", "gfx1100", "gfx90a", "gfx942", "ROCm", "6.2.4", "rocm-6.1", "torch==2.5.1",
               "HIP_VISIBLE_DEVICES=0", "HSA_OVERRIDE_GFX_VERSION=11.0.0", "0xdeadbeef", "/opt/rocm/lib/x.so",
               "C:\\AMD\\bin", "hipcc", "?", "my", "how do I", "Segmentation fault", "core dumped", "0 errors",
               "\u2018q\u2019", "\u00a0", "\u212a", "\U0001f600", "找不到设备", "\t", "  ", "INFO", "could not"]


def _pools(active) -> tuple[list[str], list[str]]:
    examples = []
    for e in active:
        for s in e["signatures"]:
            for k in ("examples", "counter_examples"):
                for ex in s.get(k) or []:
                    examples += [ln for ln in ex["text"].splitlines() if ln.strip()]
    benign = []
    for p in sorted((REPO / "errata" / "corpus" / "benign").glob("*.log")):
        benign += [ln for ln in p.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()][:200]
    return examples, benign


def _mutate(rng: random.Random, line: str) -> str:
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        kind = rng.randrange(9)
        if kind == 0:
            line = rng.choice(PREFIXES) + line
        elif kind == 1:
            line = rng.choice([str.upper, str.lower, str.swapcase, str.title])(line)
        elif kind == 2 and line:
            cut = rng.randrange(len(line))
            line = line[cut:] if rng.random() < 0.3 else line[:cut]
        elif kind == 3:
            line = f"\x1b[{rng.choice(['31', '1;33', '0'])}m{line}\x1b[0m"
        elif kind == 4:
            line = line.replace("'", rng.choice(["\u2018", "\u2019"])).replace('"', "\u201c")
        elif kind == 5:
            line = line.replace("/", "\\") if rng.random() < 0.5 else "D:\\work\\" + line
        elif kind == 6:
            i = rng.randrange(len(line) + 1)
            line = line[:i] + rng.choice(NOISE_WORDS) + line[i:]
        elif kind == 7:
            line = line * rng.choice([2, 40, 300])           # long lines: the windows and the raw cap
        else:
            line = " ".join(rng.sample(line.split(" "), len(line.split(" "))))
    return line


def _log(rng: random.Random, examples: list[str], benign: list[str]) -> str:
    lines = []
    for _ in range(rng.randint(1, 12)):
        src = rng.random()
        if src < 0.45:
            ln = rng.choice(examples)
        elif src < 0.8:
            ln = rng.choice(benign)
        else:
            ln = " ".join(rng.choice(NOISE_WORDS) for _ in range(rng.randint(1, 14)))
        lines.append(_mutate(rng, ln))
    if rng.random() < 0.1:                           # a whole log exported as one JSON string
        return '{"log":"' + "\\n".join(ln.replace("\\", "\\\\").replace('"', '\\"') for ln in lines) + '"}'
    return "".join(ln + rng.choice(["\n", "\n", "\r\n", "\r"]) for ln in lines)


def _candidates(active, fixtures: list[dict]) -> dict[str, list]:
    """Values worth trying per fact: those of the fixture machines and the operands the entries' checks test."""
    cand: dict[str, list] = {}
    for doc in fixtures:
        for name, f in doc["facts"].items():
            cand.setdefault(name, []).append(f["value"])
    for e in active:
        for chk in (e.get("triggers") or {}).get("checks") or []:
            for cond in chk.get("when") or []:
                op = checks.operator_of(cond)
                if op in (None, "present", "matches", "not_matches", "version"):
                    continue
                arg = cond[op]
                got = cand.setdefault(cond["fact"], [])
                got += [arg, [arg]] + ([list(arg), *arg] if isinstance(arg, list) else [])
                if isinstance(arg, int) and not isinstance(arg, bool):
                    got += [arg - 1, arg + 1, [f"x{i}" for i in range(max(0, arg))]]
    return cand


def _facts_file(rng: random.Random, fixtures: list[dict], cand: dict[str, list]) -> str:
    doc = json.loads(json.dumps(rng.choice(fixtures)))
    for name in rng.sample(sorted(facts_mod.VOCAB), rng.randint(1, 25)):
        typ = facts_mod.VOCAB[name].type
        pool = [v for v in cand.get(name, []) if facts_mod.check_value(name, typ, v) is None] + [None]
        pool += {"bool": [True, False], "int": [0, 1, 2, 7], "version": ["6.2.4", "5.7.1", "7.0", "v6.1", "x"],
                 "str": ["", "gfx1100", "10.3.0"], "list": [[], ["gfx90a"], ["gfx1100", "gfx942"]]}.get(typ, [])
        if rng.random() < 0.15:
            doc["facts"].pop(name, None)
        else:
            doc["facts"][name] = {"value": rng.choice(pool), "source": "fuzz"}
    # as `errbook doctor --collect` writes it: derived facts filled in (the CLI derives when it reads a facts file,
    # the page does not, so a file whose derived facts disagree with its own probes is not one errbook writes)
    return json.dumps(facts_mod.parse(json.dumps(doc)))


def test_both_engines_agree_on_random_logs_and_machines():
    if NODE is None:
        pytest.fail("Node.js is not installed")   # the `node` marker's hook normally says so first
    t0 = time.monotonic()
    loaded, errors = entries.load_all(REPO)
    assert not errors
    active = list(entries.active(loaded))
    know, b = pipeline.knowledge(REPO, active), bundle.build(REPO, active)
    m = pipeline.build_matcher(active, pages=know.pages)
    rng = random.Random(SEED)
    examples, benign = _pools(active)
    fixtures = [json.loads(p.read_text(encoding="utf-8"))
                for p in sorted((REPO / "tests" / "doctor_machines").glob("*.json"))]
    cand = _candidates(active, fixtures)
    machines = [_facts_file(rng, fixtures, cand) for _ in range(MACHINES)]
    cases = [{"name": str(i), "text": _log(rng, examples, benign),
              "facts": rng.choice(machines) if rng.random() < 0.5 else None} for i in range(CASES)]
    print(f"\nfuzz: seed {SEED} (ERRBOOK_FUZZ_SEED), {CASES} logs, {MACHINES} facts files")
    r = subprocess.run([NODE, str(REPO / "tests" / "js" / "engine.cjs")], capture_output=True, text=True, timeout=300,
                       input=json.dumps({"bundle": b, "cases": cases, "machines": machines, "top": TOP}))
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout)
    # the facts files: read alike, and the same doctor findings (log facts and each entry's check bonus)
    for i, text in enumerate(machines):
        values = facts_mod.values_of(facts_mod.parse(text))
        bonus = {k: [v[0], v[1]] for k, v in checks.machine_bonus(active, values).items()}
        got = js["__machines"][i]
        assert got["values"] == values, f"seed {SEED}: facts file {i} read differently"
        assert got["facts"] == checks.to_log_facts(values), f"seed {SEED}: facts file {i}: log facts differ"
        assert got["bonus"] == bonus, f"seed {SEED}: facts file {i}: doctor findings differ"
    found = sum(bool(g["bonus"]) for g in js["__machines"])
    assert found >= MACHINES // 4, f"only {found} of {MACHINES} random machines had a finding: the fuzz barely checks"
    levels = set()
    for c in cases:
        scan = m.new_scan()
        m.feed_text(scan, c["text"])
        mf = bonus = None
        if c["facts"]:
            values = facts_mod.values_of(facts_mod.parse(c["facts"]))
            mf, bonus = checks.to_log_facts(values), checks.machine_bonus(active, values)
        py = json.loads(json.dumps(ranking.rank(scan, know, machine_facts=mf, machine_bonus=bonus)))[:TOP]
        assert py == js[c["name"]], (f"seed {SEED}, case {c['name']}: the engines differ; reproduce with "
                                     f"ERRBOOK_FUZZ_SEED={SEED}", c["text"][:300], py[:1], js[c["name"]][:1])
        levels |= {x["confidence"] for x in py}
    assert levels == {"match", "likely"}, f"seed {SEED}: the fuzz reached only {levels}"
    print(f"fuzz: {CASES} logs agreed in {time.monotonic() - t0:.1f} s")
    assert time.monotonic() - t0 < 120, "the fuzz is meant to stay bounded: lower ERRBOOK_FUZZ_CASES"


pytestmark = [pytest.mark.node, pytest.mark.slow]
