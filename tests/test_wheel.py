"""The installable package (issue 30 item 3): a wheel built with `python -m build` carries a snapshot of the
knowledge base, so an errbook installed from it triages, runs doctor, finds (the guided finder) and shows entries
with no clone, refuses the commands that need a checkout, and says in --version which knowledge base it reads.

Offline: the wheel is built with --no-isolation (this venv's setuptools and `build`, from the test extra), and the
fresh venv, made outside the repository, gets the wheel with --no-deps; its runtime dependencies come from this
venv through a .pth line naming this venv's site-packages (added after the fresh venv's own, so the installed
errbook, not this checkout's, is the one imported: asserted below)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from errbook import __version__
from errbook.kb import entries

REPO = Path(__file__).resolve().parents[1]
LOG = REPO / "errata" / "corpus" / "real" / "RMN-0090-1.log"
FACTS = REPO / "tests" / "doctor_machines" / "container-no-kfd.json"
SLOW_LOG = REPO / "errata" / "corpus" / "unseen" / "none-r9700-pytorch-4x-slower-than-7900xtx.log"



def test_the_changelog_has_the_packaged_version():
    """Keep a Changelog: the header says so, and the version the wheel carries has its section."""
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "[Keep a Changelog](https://keepachangelog.com/" in text.split("\n## ", 1)[0]
    project = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert project and project.group(1) == __version__
    assert re.search(rf"^## \[{re.escape(__version__)}\] - ", text, re.M)


def _repo_copy(dest: Path) -> Path:
    """The checkout's files as git sees them (tracked, and new files not ignored): no .venv, caches or site."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(errbook executable, environment, a working folder outside any checkout) of a fresh venv with the wheel."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = _repo_copy(tmp / "src")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp / "dist"),
                    str(src)], check=True, capture_output=True, timeout=300)
    (wheel,) = (tmp / "dist").glob("errbook-*.whl")
    venv = tmp / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    # Without PYTHONPATH: pip would find the checkout's errbook through it and install nothing.
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ERRBOOK_ROOT")}
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, timeout=300, env=clean)
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "_errbook_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    env = dict(clean)
    env.update(XDG_CACHE_HOME=str(tmp / "cache"), ERRBOOK_CACHE=str(tmp / "cache" / "errbook"), NO_COLOR="1")
    work = tmp / "elsewhere"
    work.mkdir()
    where = subprocess.run([str(py), "-c", "import errbook; print(errbook.__file__)"], cwd=work, env=env,
                           check=True, capture_output=True, text=True).stdout.strip()
    assert Path(where).is_relative_to(venv), where
    return venv / "bin" / "errbook", env, work


def _errbook(installed, *args: str) -> subprocess.CompletedProcess:
    exe, env, work = installed
    return subprocess.run([str(exe), *args], cwd=work, env=env, capture_output=True, text=True, timeout=120)


def _here(*args: str) -> subprocess.CompletedProcess:
    """The same command from this checkout, for comparison."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"), ERRBOOK_ROOT=str(REPO), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "errbook", *args], env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_version_names_the_snapshot_and_its_entry_count(installed):
    loaded, _ = entries.load_all(REPO)
    newest = max(str(e.data.get("modified") or e.data.get("published"))[:10] for e in loaded)
    live = len(list(entries.active(loaded)))
    count = f"entries: {live} active" + (f" ({len(loaded) - live} withdrawn)," if live != len(loaded) else ",")
    r = _errbook(installed, "--version")
    assert r.returncode == 0, r.stderr
    assert "installed snapshot" in r.stdout
    assert count in r.stdout and newest in r.stdout
    here = _here("--version")
    assert "the checkout" in here.stdout and count in here.stdout


@pytest.mark.slow
def test_triage_from_the_snapshot_answers_as_the_checkout_does(installed):
    r = _errbook(installed, "triage", "--json", str(LOG))
    here = _here("triage", "--json", str(LOG))
    assert r.returncode == here.returncode == 0, r.stderr
    ids = [m["id"] for m in json.loads(r.stdout)["matches"]]
    assert ids[0] == "RMN-0090"
    assert ids == [m["id"] for m in json.loads(here.stdout)["matches"]]


@pytest.mark.slow
def test_doctor_from_the_snapshot_answers_as_the_checkout_does(installed):
    r = _errbook(installed, "doctor", "--json", "--facts", str(FACTS))
    here = _here("doctor", "--json", "--facts", str(FACTS))
    assert r.returncode == here.returncode, r.stderr
    got = [a["id"] for a in json.loads(r.stdout)["applies"]]
    assert got and got == [a["id"] for a in json.loads(here.stdout)["applies"]]


@pytest.mark.slow
def test_find_from_the_snapshot_answers_as_the_checkout_does(installed):
    args = ("find", "--json", "-a", "component=pytorch", "-a", "happened=slow", "-a", "gpu=radeon-rdna",
            "--log", str(SLOW_LOG))
    r, here = _errbook(installed, *args), _here(*args)
    assert r.returncode == here.returncode == 0, r.stderr
    got = [x["id"] for x in json.loads(r.stdout)["results"]]
    assert got and got == [x["id"] for x in json.loads(here.stdout)["results"]]
    first = _errbook(installed, "find", "--json")                       # the questions come from the snapshot
    assert first.returncode == 0 and json.loads(first.stdout)["question"]["number"] == 1, first.stderr


@pytest.mark.slow
def test_show_reads_the_snapshot(installed):
    r = _errbook(installed, "show", "RMN-0090")
    assert r.returncode == 0 and r.stdout.startswith("RMN-0090"), r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("cmd", [["new", "runtime", "A title"], ["validate"], ["build"], ["run", "--dry-run", "--all"],
                                 ["ledger"]])
def test_commands_that_need_a_checkout_refuse_the_snapshot(installed, cmd):
    r = _errbook(installed, *cmd)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "needs a checkout" in r.stderr


@pytest.mark.slow
def test_root_points_at_a_checkout_instead(installed):
    r = _errbook(installed, "--root", str(REPO), "--version")
    assert r.returncode == 0 and f"the checkout {REPO}" in r.stdout
