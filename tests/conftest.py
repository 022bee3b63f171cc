import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BASE_ENTRY = REPO / "errata" / "compile" / "RMN-0001.yaml"
BASE_RUNBOOK = REPO / "runbooks" / "compile" / "RMN-0001.ipynb"


def make_root(tmp: Path, with_docs: bool = False) -> Path:
    """A throwaway checkout holding RMN-0001 and, optionally, the site's hand-written pages."""
    (tmp / "errata" / "compile").mkdir(parents=True)
    (tmp / "runbooks" / "compile").mkdir(parents=True)
    shutil.copy(BASE_ENTRY, tmp / "errata" / "compile" / "RMN-0001.yaml")
    shutil.copy(BASE_RUNBOOK, tmp / "runbooks" / "compile" / "RMN-0001.ipynb")
    shutil.copy(REPO / "mkdocs.yml", tmp / "mkdocs.yml")
    if with_docs:
        shutil.copytree(REPO / "docs", tmp / "docs", ignore=shutil.ignore_patterns("runs"))
        (tmp / "docs" / "onboarding.md").write_text("# Onboarding\n\n1. [[RMN-0001]]\n", encoding="utf-8")
    else:
        (tmp / "docs").mkdir()
    return tmp


@pytest.fixture
def mini_root(tmp_path):
    return make_root(tmp_path / "root")


@pytest.fixture
def site_root(tmp_path):
    return make_root(tmp_path / "root", with_docs=True)


def errbook(*args, root: Path | None = None, input: bytes | None = None, timeout: float = 600):
    cmd = [sys.executable, "-m", "errbook.cli"] + (["--root", str(root)] if root else []) + list(args)
    return subprocess.run(cmd, input=input, capture_output=True, timeout=timeout)
