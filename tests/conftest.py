import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
BASE_ENTRY = REPO / "errata" / "compile" / "RMN-0001.yaml"
BASE_RUNBOOK = REPO / "runbooks" / "compile" / "RMN-0001.ipynb"

# `pytest --quick` (what `bash scripts/bootstrap.sh test --quick` runs) leaves out the tests carrying these
# markers (registered in pyproject.toml); the full suite, `.ci/run`, runs them all.
QUICK_LEAVES_OUT = ("browser", "slurm", "toolchain", "slow")


def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true", default=False,
                     help="the fast subset: leave out the tests marked " + ", ".join(QUICK_LEAVES_OUT))


# A test that needs one of these fixtures waits for a whole `mkdocs build` (10 to 25 s on 2 cores): it is slow.
SITE_BUILD_FIXTURES = ("built", "rich", "nested", "hostile_docs")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(f in getattr(item, "fixturenames", ()) for f in SITE_BUILD_FIXTURES):
            item.add_marker(pytest.mark.slow)
    if not config.getoption("--quick"):
        return
    keep, drop = [], []
    for item in items:
        (drop if any(item.get_closest_marker(m) for m in QUICK_LEAVES_OUT) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


# Tests marked `node` run the paste page's engine under Node.js. Without Node they are not silently skipped: the
# twin contract (tests/test_engines.py, tests/test_twins.py) would then be unchecked. A missing `node` fails them,
# always under CI (`CI` set, as every CI system sets it); a contributor without Node may skip them by setting
# ERRBOOK_ALLOW_NO_NODE=1 (`bash scripts/bootstrap.sh test --quick` installs no Node and sets it).
NODE = shutil.which("node")


def pytest_runtest_setup(item):
    if item.get_closest_marker("node") is None or NODE is not None:
        return
    if os.environ.get("ERRBOOK_ALLOW_NO_NODE") == "1" and not os.environ.get("CI"):
        pytest.skip("Node.js is not installed (ERRBOOK_ALLOW_NO_NODE=1)")
    pytest.fail("Node.js is not installed: the JavaScript engine cannot be checked against the Python one. Install "
                "nodejs (bash scripts/bootstrap.sh install does), or outside CI set ERRBOOK_ALLOW_NO_NODE=1 to skip",
                pytrace=False)


def make_root(tmp: Path, with_docs: bool = False) -> Path:
    """A throwaway checkout holding RMN-0001, errata/releases.yaml and, optionally, the site's hand-written pages."""
    (tmp / "errata" / "compile").mkdir(parents=True)
    (tmp / "runbooks" / "compile").mkdir(parents=True)
    shutil.copy(BASE_ENTRY, tmp / "errata" / "compile" / "RMN-0001.yaml")
    shutil.copy(BASE_RUNBOOK, tmp / "runbooks" / "compile" / "RMN-0001.ipynb")
    shutil.copy(REPO / "errata" / "releases.yaml", tmp / "errata" / "releases.yaml")   # validate cross-checks it
    shutil.copy(REPO / "mkdocs.yml", tmp / "mkdocs.yml")
    if with_docs:
        shutil.copytree(REPO / "docs", tmp / "docs", ignore=shutil.ignore_patterns("runs"))
        (tmp / "docs" / "onboarding.md").write_text("# Onboarding\n\n1. [[RMN-0001]]\n", encoding="utf-8")
    else:
        (tmp / "docs").mkdir()
    return tmp


@pytest.fixture(autouse=True, scope="session")
def _trial_runs_stay_out_of_home(tmp_path_factory):
    """A trial `errbook run` (no --record) writes under $XDG_STATE_HOME (runbooks/scratch.py): the tests' runs go
    to a temporary folder, never to the user's ~/.local/state."""
    old = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
    yield
    if old is None:
        os.environ.pop("XDG_STATE_HOME", None)
    else:
        os.environ["XDG_STATE_HOME"] = old


@pytest.fixture
def mini_root(tmp_path):
    return make_root(tmp_path / "root")


@pytest.fixture
def site_root(tmp_path):
    return make_root(tmp_path / "root", with_docs=True)


def errbook(*args, root: Path | None = None, input: bytes | None = None, timeout: float = 600):
    cmd = [sys.executable, "-m", "errbook.cli"] + (["--root", str(root)] if root else []) + list(args)
    return subprocess.run(cmd, input=input, capture_output=True, timeout=timeout)


HOSTILE = {
    "title": "Broken <script>alert('t')</script> build",
    "summary": "Text with <img src=x onerror=alert(2)> and [click](javascript:alert(3)) and {: onclick=\"alert(4)\" }.",
    "root_cause": "Cause <iframe src=javascript:alert(5)></iframe>\n\n# not a heading\n\n!!! danger \"fake\"",
}


def build(root: Path, out: Path, **env_vars: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", **env_vars)
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"),
                           "-d", str(out)], capture_output=True, text=True, cwd=root, env=env, timeout=600)


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("site") / "root", with_docs=True)
    data = yaml.safe_load(BASE_ENTRY.read_text(encoding="utf-8"))
    data.update(HOSTILE, id="RMN-0002", related=["RMN-0001"], aliases=[])
    step = next(st for st in data["fix"] if "before" in (st.get("code") or {}))
    step["code"]["after"] = "```\n</code></pre><script>alert(6)</script>\n```"
    data["references"][0]["title"] = "\"><script>alert(7)</script>"
    data["verification"]["runbook"] = "runbooks/compile/RMN-0001.ipynb"
    (root / "errata" / "compile" / "RMN-0002.yaml").write_text(yaml.safe_dump(data, allow_unicode=True),
                                                               encoding="utf-8")
    from errbook.kb import entries, verified
    one = next(e for e in entries.load_all(root)[0] if e.id == "RMN-0001")
    rec = {"entry": "RMN-0001", "runbook": "runbooks/compile/RMN-0001.ipynb", "outcome": "passed",
           "digest": verified.digest(one, root),                     # made at the entry's current content
           "tiers": {"static": {"outcome": "passed"}, "toolchain": {"outcome": "passed"},
                     "rocm": {"outcome": "skipped", "reason": "no AMD GPU with ROCm on this machine"}},
           "fingerprint": {"platform": "cpu", "hipcc": "HIP 5.2.21153-0 / clang 15.0.6", "triton": "3.9.0"},
           "platform_label": "CPU (no GPU)", "date": "2026-11-30T00:00:00Z",
           "commit": "abcdef1234567"}
    gpu = dict(rec, tiers={"gpu": {"outcome": "passed"}}, fingerprint={"platform": "cuda", "gpu": "NVIDIA H200"},
               platform_label="CUDA · NVIDIA H200")
    (root / "runbooks" / "ledger.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps(gpu) + "\n{corrupt\n")
    out = root.parent / "out"
    r = build(root, out)
    return root, out, r


