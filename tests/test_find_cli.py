"""`errbook find` (cli/find.py): JSON and exit codes, the questions on a real pseudo-terminal (numbered choices,
Ctrl-D and Ctrl-C), triage's pointer to it, and `errbook validate` on entries' facets (file, line, field)."""
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, errbook
from errbook.kb import validate as validate_mod

SLOW_LOG = REPO / "errata" / "corpus" / "unseen" / "none-r9700-pytorch-4x-slower-than-7900xtx.log"
FACTS = REPO / "tests" / "doctor_machines" / "radeon-bad-override.json"


def find_json(*args: str):
    r = errbook("find", "--json", *args, root=REPO)
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else None), r.stderr.decode()


def test_json_gives_the_next_question_then_the_list_with_pages_and_checks():
    code, first, _ = find_json()
    assert code == 0 and first["question"]["number"] == 1 and "results" not in first
    assert first["question"]["choices"][-1] == {"value": "unknown", "label": "Don't know", "label_zh": "不知道",
                                                "count": first["candidates"]}
    facet = first["question"]["facet"]
    pick = max(first["question"]["choices"][:-1], key=lambda c: c["count"])
    code, second, _ = find_json("--answer", f"{facet}={pick['value']}")
    assert code == 0 and second["candidates"] == pick["count"] and second["answers"] == {facet: pick["value"]}
    code, done, _ = find_json("-a", "component=pytorch", "-a", "happened=slow", "-a", "gpu=radeon-rdna",
                              "--log", str(SLOW_LOG))
    assert code == 0 and "question" not in done and 1 <= len(done["results"]) <= 5
    assert all(r["url"].endswith(f"{r['id']}/") and r["check"]["step"] and "score" in r for r in done["results"])
    scores = [r["score"] for r in done["results"]]
    assert scores == sorted(scores, reverse=True)                  # a log orders the list by its BM25 score


def test_exit_codes_nothing_fits_is_1_and_a_bad_answer_is_2():
    code, out, _ = find_json("-a", "component=jax", "-a", "happened=hang")
    assert code == 1 and out["results"] == [] and out["candidates"] == 0
    code, out, err = find_json("-a", "component=no-such")
    assert code == 2 and out is None and "one of:" in err and err.count("\n") == 1
    code, out, err = find_json("-a", "happened")
    assert code == 2 and "facet=value" in err
    code, out, err = find_json("--log", "/nonexistent/x.log")
    assert code == 2 and "cannot read" in err


def test_a_facts_file_answers_the_gpu_question():
    code, out, _ = find_json("--facts", str(FACTS), "-a", "component=pytorch", "-a", "happened=crash")
    assert code == 0 and out["inferred"]["gpu"]["value"] in ("radeon-rdna", "apu-igpu", "older-gcn", "instinct-cdna")
    assert "question" not in out or out["question"]["facet"] != "gpu"


def test_text_without_a_terminal_prints_the_question_and_how_to_answer():
    r = errbook("find", "-a", "component=pytorch", root=REPO)
    text = r.stdout.decode()
    assert r.returncode == 0 and "Question 2 of at most 3" in text and "0. Don't know" in text
    assert "errbook find --answer component=pytorch --answer " in text


def test_help_has_examples():
    r = errbook("find", "--help")
    assert r.returncode == 0 and b"Examples:" in r.stdout and b"--answer component=pytorch" in r.stdout


def _pty_run(keys: list[bytes], timeout: float = 120) -> tuple[int, str]:
    """errbook find on a pseudo-terminal: each key sequence is sent once a prompt ('choice') is waiting."""
    pid, fd = pty.fork()
    if pid == 0:       # the child: errbook find, with the terminal as stdin and stdout
        os.environ["PYTHONPATH"] = str(REPO / "scripts")
        os.execv(sys.executable, [sys.executable, "-m", "errbook.cli", "--root", str(REPO), "find", "--no-color"])
    out, pending, deadline = b"", list(keys), time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:          # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        if pending and out.count(b"choice (") > len(keys) - len(pending):
            os.write(fd, pending.pop(0))
    end = time.monotonic() + timeout          # the terminal closed: the child is exiting (or hung on a read)
    done, status = os.waitpid(pid, os.WNOHANG)
    while not done and time.monotonic() < end:
        time.sleep(0.1)
        done, status = os.waitpid(pid, os.WNOHANG)
    if not done:                     # still running past the ceiling: a hang, reported with what it printed
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(fd)
        printed = out.decode(errors="replace")
        raise AssertionError(f"errbook find still running after {timeout} s; it printed:\n{printed}")
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


@pytest.mark.skipif(not hasattr(pty, "fork"), reason="needs a POSIX pseudo-terminal")
def test_on_a_terminal_it_asks_numbered_questions_then_lists_the_entries():
    code, out = _pty_run([b"7\n", b"nonsense\n", b"0\n", b"0\n"])
    assert code == 0, out
    assert "Question 1 of at most 3" in out and "Question 2 of at most 3" in out
    assert "not a choice: 'nonsense'" in out
    assert "entries that fit" in out and "1. RMN-" in out and "first step:" in out


@pytest.mark.skipif(not hasattr(pty, "fork"), reason="needs a POSIX pseudo-terminal")
def test_ctrl_d_shows_the_list_so_far_and_ctrl_c_stops_with_130():
    code, out = _pty_run([b"\x04"])
    assert code == 0 and "Question 1" in out and "1. RMN-" in out and "Traceback" not in out
    code, out = _pty_run([b"\x03"])
    assert code == 130 and "Traceback" not in out and "1. RMN-" not in out


def test_triage_points_to_find_when_nothing_is_diagnosed():
    r = errbook("triage", root=REPO, input=b"the step time is 2.3 s on the MI300X and 0.6 s on an H100\n")
    assert r.returncode == 1 and r.stdout.decode().count("errbook find") == 1
    diag = (REPO / "errata" / "corpus" / "real" / "RMN-0090-1.log").read_bytes()
    r = errbook("triage", root=REPO, input=diag)
    assert r.returncode == 0 and b"errbook find" not in r.stdout
    r = errbook("triage", "--json", root=REPO, input=b"it is slow\n")
    assert b"errbook find" not in r.stdout                          # text output only


def _facets_root(mini_root):
    shutil.copy(REPO / "errata" / "facets.yaml", mini_root / "errata" / "facets.yaml")
    return mini_root


def _findings(root):
    return [(f.file, f.line, f.field, f.message) for f in validate_mod.validate(root)[1]]


def test_validate_names_a_bad_facet_value_by_file_line_and_field(mini_root):
    root = _facets_root(mini_root)
    p = root / "errata" / "compile" / "RMN-0001.yaml"
    text = p.read_text(encoding="utf-8")
    assert _findings(root) == []
    lines = text.splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("facets:"))
    lines[at] = "facets:\n  component: [hip-build]\n  happened: [build-fails, explodes]\n"
    p.write_text("".join(lines), encoding="utf-8")
    got = _findings(root)
    assert [(f, ln, fld) for f, ln, fld, _m in got] == [("errata/compile/RMN-0001.yaml", at + 3, "facets.happened[1]")]
    assert "'explodes' is not a happened of errata/facets.yaml" in got[0][3]


def test_validate_requires_component_and_happened_on_active_entries(mini_root):
    root = _facets_root(mini_root)
    p = root / "errata" / "compile" / "RMN-0001.yaml"
    text = p.read_text(encoding="utf-8")
    p.write_text("".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("facets:")), "utf-8")
    assert [(f, fld) for f, _ln, fld, _m in _findings(root)] == [("errata/compile/RMN-0001.yaml", "facets")]
    p.write_text(text.replace("facets: {component: [hip-build], ", "facets: {"), "utf-8")
    assert [(f, fld) for f, _ln, fld, _m in _findings(root)] == [("errata/compile/RMN-0001.yaml", "facets.component")]


def test_validate_reports_an_unusable_vocabulary(mini_root):
    root = _facets_root(mini_root)
    (root / "errata" / "facets.yaml").write_text("component: {values: [{id: x, label: X}]}\n", encoding="utf-8")
    got = _findings(root)
    assert len(got) == 1 and got[0][0] == "errata/facets.yaml" and "happened" in got[0][3]


def test_facets_are_not_part_of_the_verification_digest(mini_root):
    from errbook.kb import entries as entries_mod
    from errbook.kb import verified
    p = mini_root / "errata" / "compile" / "RMN-0001.yaml"
    before = verified.digest(entries_mod.load_file(p, mini_root), mini_root)
    p.write_text(p.read_text(encoding="utf-8").replace("happened: [build-fails]", "happened: [crash]"), "utf-8")
    after = entries_mod.load_file(p, mini_root)
    assert after.data["facets"]["happened"] == ["crash"] and verified.digest(after, mini_root) == before


def test_the_vocabulary_is_not_read_as_an_entry():
    r = subprocess.run([sys.executable, "-m", "errbook.cli", "--root", str(REPO), "show", "component"],
                       capture_output=True, env=dict(os.environ, PYTHONPATH=str(REPO / "scripts")), timeout=300)
    assert r.returncode == 2
