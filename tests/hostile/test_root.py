"""Issue 28, M7: a --root or $ERRBOOK_ROOT that is not a checkout (no errata/) is an error (exit 2, "not an
errbook checkout"), not a confident empty answer: triage "no entry matched", validate "0 entries, 0 findings",
doctor "no known problem"."""
import os
import subprocess
import sys

import pytest

from conftest import REPO

FACTS = REPO / "tests" / "doctor_machines" / "radeon-bad-override.json"
LOG = b"k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n"
COMMANDS = {
    "triage": ["triage", "-"],
    "validate": ["validate"],
    "doctor": ["doctor", "--facts", str(FACTS)],
    "stale": ["stale"],
    "ledger": ["ledger"],
}


def run(args, env_root=None, cwd=None):
    env = {k: v for k, v in os.environ.items() if k != "ERRBOOK_ROOT"}
    if env_root is not None:
        env["ERRBOOK_ROOT"] = str(env_root)
    return subprocess.run([sys.executable, "-m", "errbook.cli", *args], input=LOG, capture_output=True,
                          env=env, cwd=cwd, timeout=600)


@pytest.fixture
def not_a_checkout(tmp_path):
    d = tmp_path / "elsewhere"
    (d / "docs").mkdir(parents=True)          # something there, only not errata/
    (d / "mkdocs.yml").write_text("site_name: x\n")
    return d


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
@pytest.mark.parametrize("how", ["--root", "ERRBOOK_ROOT"])
def test_a_wrong_root_is_an_error_not_an_empty_answer(cmd, how, not_a_checkout):
    if how == "--root":
        r = run(["--root", str(not_a_checkout), *COMMANDS[cmd]])
    else:
        r = run(COMMANDS[cmd], env_root=not_a_checkout, cwd=not_a_checkout)
    err = r.stderr.decode()
    assert r.returncode == 2, (r.returncode, r.stdout.decode()[-500:], err[-500:])
    assert "not an errbook checkout" in err and str(not_a_checkout) in err, err
    assert ("--root" if how == "--root" else "ERRBOOK_ROOT") in err, err
    assert "Traceback" not in err and r.stdout == b"", r.stdout.decode()[-500:]


def test_a_missing_root_folder_is_the_same_error(tmp_path):
    r = run(["--root", str(tmp_path / "nope"), "validate"])
    assert r.returncode == 2 and b"not an errbook checkout" in r.stderr, r.stderr


def test_commands_that_read_no_entries_still_work_outside_a_checkout(not_a_checkout):
    r = run(["doctor", "--list-facts"], env_root=not_a_checkout)
    assert r.returncode == 0 and b"rocm.versions" in r.stdout, r.stderr


def test_a_real_checkout_still_works(tmp_path):
    from conftest import make_root
    root = make_root(tmp_path / "root")
    assert run(["--root", str(root), "triage", "-"]).returncode == 0
    r = run(["validate"], env_root=root)
    assert r.returncode == 0 and b"1 entry, 0 findings" in r.stderr, r.stderr
