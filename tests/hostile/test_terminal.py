"""Issue 28, L1: control characters from data (a facts file, a ledger's platform_label, a log line) reach the
terminal escaped: no ESC (OSC 52 clipboard, window title, erase screen), C1 (U+009B is a one-character CSI), BEL,
backspace or carriage return is written raw by any text printer. JSON output keeps its meaning."""
import json
import re
import subprocess
import sys

import pytest

from conftest import REPO, make_root

FACTS = REPO / "tests" / "doctor_machines" / "radeon-bad-override.json"
EVIL = "\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\x9b2J\x08\x08\rX\x7f"
RAW = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")      # C0 but \t \n, DEL, C1 (as UTF-8)


def run(*args, input=b""):
    return subprocess.run([sys.executable, "-m", "errbook.cli", *args], input=input, capture_output=True, timeout=600)


def assert_escaped(r):
    for name, out in (("stdout", r.stdout), ("stderr", r.stderr)):
        m = RAW.search(out)
        assert m is None, f"raw control character in {name}: {out[max(0, m.start() - 60):m.end() + 20]!r}"


def test_doctor_facts_shows_hostile_fact_values_escaped(tmp_path):
    doc = json.loads(FACTS.read_text())
    doc["facts"]["gpu.names"]["value"] = ["Radeon " + EVIL]
    doc["facts"]["os.kernel"]["value"] = "6.8" + EVIL
    doc["collected"] = "2026" + EVIL
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(doc))
    r = run("--root", str(REPO), "doctor", "--facts", str(f))
    assert r.returncode in (0, 1), r.stderr
    assert_escaped(r)
    assert "Radeon \\u001b]52;c;ZXZpbA==\\u0007" in r.stdout.decode(), r.stdout.decode()[:800]


def test_ledger_shows_a_hostile_platform_label_escaped(tmp_path):
    root = make_root(tmp_path / "root")
    rec = {"entry": "RMN-0001", "runbook": "runbooks/compile/RMN-0001.ipynb", "outcome": "passed",
           "tiers": {"static": {"outcome": "passed"}}, "fingerprint": {"platform": "cpu"},
           "platform_label": "CPU" + EVIL, "date": "2026-11-30T00:00:00Z", "commit": "abcdef1"}
    (root / "runbooks" / "ledger.jsonl").write_text(json.dumps(rec) + "\n")
    r = run("--root", str(root), "ledger")
    assert r.returncode == 0, r.stderr
    assert_escaped(r)
    assert "[CPU\\u001b]52;" in r.stdout.decode()
    j = run("--root", str(root), "ledger", "--json")                 # JSON: the same value after parsing
    assert json.loads(j.stdout)["records"][0]["platform_label"] == "CPU" + EVIL


@pytest.mark.slow
def test_triage_shows_c1_bel_and_backspace_of_a_log_line_escaped():
    line = "k.hip:1:10: fatal error: 'cuda_runtime.h' file not found \x07\x08\x08\x9b2J\x9d0;t\x9c\x7f\n"
    r = run("--root", str(REPO), "triage", "-", input=line.encode())
    assert r.returncode == 0, r.stderr
    assert_escaped(r)
    assert "not found \\u0007\\u0008\\u0008\\u009b2J" in r.stdout.decode(), r.stdout.decode()[:800]
    j = run("--root", str(REPO), "triage", "--json", "-", input=line.encode())
    ev = json.loads(j.stdout)["matches"][0]["evidence"][0]["lines"][0]["text"]
    assert ev.endswith("\x07\x08\x08\x9b2J\x9d0;t\x9c\x7f"), ev     # --json keeps the text, as JSON escapes
    assert_escaped(j)


def test_error_messages_are_escaped_too(tmp_path):
    """Not only the report: a message on stderr naming something from outside goes through the same writer."""
    r = run("--root", str(REPO), "doctor", "--facts", str(tmp_path / "f\x1b]0;title\x07.json"))
    assert r.returncode == 2 and b"cannot read facts file" in r.stderr, r.stderr
    assert_escaped(r)
