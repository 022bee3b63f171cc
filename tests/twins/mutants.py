"""Mutation proof of the twins' contract: each single change below to assets/engine.js must make a test fail.

    PYTHONPATH=scripts python tests/twins/mutants.py [NAME ...]

For each mutant: a mutated copy of engine.js in a temporary folder (the checkout is never touched), then the twin
tests against it (ERRBOOK_ENGINE_JS points tests/js/*.cjs and tests/test_twins.py at the copy): tests/test_twins.py
first, then, only if nothing failed there, tests/test_twins_fuzz.py and tests/test_engines.py. Prints which tests
failed per mutant and exits 1 if any mutant survived (no test failed), 2 if a mutation no longer applies (engine.js
changed: update its `old`). Not part of the suite (about 30 s a mutant on 2 cores); docs/architecture.md ("The
twins' contract") lists the last result.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "scripts" / "errbook" / "web" / "assets" / "engine.js"
STAGES = (["tests/test_twins.py"], ["tests/test_twins_fuzz.py", "tests/test_engines.py"])

# (name, function in engine.js, exact text, its mutation)
MUTANTS = [
    ("count_lte <= to <", "positive",
     'if (op === "count_lte") return v.length <= arg;', 'if (op === "count_lte") return v.length < arg;'),
    ("gte >= to >", "positive",
     'return op === "gte" ? v >= arg : v <= arg;', 'return op === "gte" ? v > arg : v <= arg;'),
    ("present: null to undefined", "holds",
     'if (op === "present") return (v !== null) === Boolean(arg);',
     'if (op === "present") return (v !== undefined) === Boolean(arg);'),
    ("booleans compared loosely (=== to ==)", "same",
     'if (typeof a === "boolean" || typeof b === "boolean") return a === b;',
     'if (typeof a === "boolean" || typeof b === "boolean") return a == b;'),
    ("version clause > to >=", "inRange", 'else if (op === ">") ok = c > 0;', 'else if (op === ">") ok = c >= 0;'),
    ("failure pattern loses its i flag", "troubleRx",
     'failure: new RegExp(t.failure, "i")', 'failure: new RegExp(t.failure, "")'),
    ("first failure line cap - 1", "firstFailureLine",
     "slice(0, eng.retrieval.first_line_cap)", "slice(0, eng.retrieval.first_line_cap - 1)"),
    ("last window boundary < to <=", "windows",
     "for (let i = 0; i < s.length - spec.overlap; i += step)",
     "for (let i = 0; i <= s.length - spec.overlap; i += step)"),
    ("score: 10 to 11 per further signature", "results",
     "part.best + 10 * (part.sigs.size - 1)", "part.best + 11 * (part.sigs.size - 1)"),
    ("tokens of 2 characters dropped (>= 2 to >= 3)", "tokens",
     "const ok = (w) => w.length >= 2 &&", "const ok = (w) => w.length >= 3 &&"),
    ("raw cap one byte short", "capRaw", "dec.decode(b.subarray(0, cap))", "dec.decode(b.subarray(0, cap - 1))"),
    ("environment clamp dropped", "adjust",
     "Math.max(f.low, Math.min(f.high, f.plus * plus - f.minus * minus))", "(f.plus * plus - f.minus * minus)"),
]


def failed_tests(engine: Path) -> tuple[list[str], str]:
    env = dict(os.environ, ERRBOOK_ENGINE_JS=str(engine), PYTHONPATH=str(REPO / "scripts"))
    for files in STAGES:
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "--tb=no",
                            "-rf", *files], cwd=REPO, env=env, capture_output=True, text=True)
        failed = re.findall(r"^FAILED (\S+)", r.stdout, re.MULTILINE)
        if failed or r.returncode not in (0, 1):
            return failed, r.stdout[-2000:]
    return [], ""


def main(names: list[str]) -> int:
    src = ENGINE.read_text(encoding="utf-8")
    chosen = [m for m in MUTANTS if not names or m[0] in names]
    for name, _, old, _ in chosen:
        if src.count(old) != 1:
            print(f"mutant {name!r}: its text is no longer in engine.js exactly once", file=sys.stderr)
            return 2
    survivors = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, function, old, new in chosen:
            copy = Path(tmp) / "engine.js"
            copy.write_text(src.replace(old, new), encoding="utf-8")
            failed, tail = failed_tests(copy)
            survivors += not failed
            print(f"{'killed  ' if failed else 'SURVIVED'} {function}: {name}: {', '.join(failed) or tail or '-'}",
                  flush=True)
    print(f"{len(chosen) - survivors} of {len(chosen)} mutants killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
