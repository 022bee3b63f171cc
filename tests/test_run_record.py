"""errbook run is a trial unless --record: the team's ledger and run pages stay as committed."""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from errbook.runbooks import scratch


def _run(root: Path, state: Path, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_STATE_HOME=str(state))
    return subprocess.run([sys.executable, "-m", "errbook.cli", "--root", str(root), "run", "RMN-0001", "--tier",
                           "static", "--no-progress", "--timeout", "240", *extra],
                          capture_output=True, text=True, env=env, timeout=600)


def _digests(root: Path) -> dict[str, str]:
    files = [root / "runbooks" / "ledger.jsonl", *sorted((root / "docs" / "verification" / "runs").iterdir())]
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.mark.slow
def test_trial_run_leaves_the_team_files_and_record_writes_them(mini_root, tmp_path, monkeypatch):
    runs = mini_root / "docs" / "verification" / "runs"
    runs.mkdir(parents=True)
    committed = {"entry": "RMN-0001", "outcome": "passed", "note": "the team's record"}
    (mini_root / "runbooks" / "ledger.jsonl").write_text(json.dumps(committed) + "\n")
    (runs / "RMN-0001--cpu.ipynb").write_text('{"cells": [], "note": "the committed run page"}')
    before = _digests(mini_root)
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))

    r = _run(mini_root, state)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _digests(mini_root) == before                      # nothing of the team's changed
    assert "a trial run" in r.stderr and "--record" in r.stderr
    trial = scratch.Scratch(mini_root)
    assert trial.dir.is_relative_to(state)
    recs = [json.loads(x) for x in trial.ledger.read_text().splitlines()]
    assert [x["entry"] for x in recs] == ["RMN-0001"] and "notebook" not in recs[0]
    assert [p.name for p in trial.runs.glob("RMN-0001--*.ipynb")]

    r = _run(mini_root, state, "--record")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (mini_root / "runbooks" / "ledger.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == committed and len(lines) == 2
    new = json.loads(lines[1])
    assert new["entry"] == "RMN-0001" and (mini_root / new["notebook"]).is_file()
    assert new["notebook"].startswith("docs/verification/runs/")
    assert len(trial.ledger.read_text().splitlines()) == 1    # the scratch ledger got nothing more


def test_record_refuses_other_places(mini_root, tmp_path):
    r = _run(mini_root, tmp_path / "state", "--record", "--ledger", str(tmp_path / "l.jsonl"))
    assert r.returncode == 2 and "--record" in r.stderr and "Traceback" not in r.stderr


def test_scratch_follows_xdg_state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    a, b = scratch.Scratch(tmp_path / "one"), scratch.Scratch(tmp_path / "two")
    assert a.dir.is_relative_to(tmp_path) and a.dir != b.dir           # one folder per checkout
    monkeypatch.setenv("XDG_STATE_HOME", "relative/path")                # ignored, as XDG says
    assert scratch.Scratch(tmp_path).dir.is_relative_to(Path.home() / ".local" / "state")
