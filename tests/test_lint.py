"""Lint and types, at 0 findings, with the rule sets of pyproject.toml ([tool.ruff], [tool.mypy]); the same
checks .pre-commit-config.yaml runs for contributors. They fail, never skip, when the tools are missing: they
are in the `test` extra (pip install -e '.[test]')."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    exe = shutil.which(name) or str(Path(sys.executable).with_name(name))
    if not Path(exe).is_file():
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return exe


def test_ruff_finds_nothing():
    r = subprocess.run([_tool("ruff"), "check", "--no-cache", "scripts", "tests"], cwd=REPO, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]


def test_mypy_finds_nothing():
    r = subprocess.run([_tool("mypy"), "--no-incremental", "--cache-dir=/dev/null"], cwd=REPO, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
