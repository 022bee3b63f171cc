"""A newcomer's set-up (issue 31): clone the repository, run the README's set-up line without Debian packages, then
type `errbook` by the name the README uses.

The clone is `git clone` of this checkout, so it holds what is committed (CI's clean clone is exactly that). The
set-up line is read from README.md, not repeated here: the README's "without the Debian packages" line,
`ERRBOOK_NO_APT=1 bash scripts/bootstrap.sh install --quick`. It makes a real .venv in the clone with pip (wheels
come from pip's cache or the configured index, as on a newcomer's machine). HOME is a temporary folder, so the
shim goes to its ~/.local/bin, and PATH holds no errbook before: the command can only come from the shim, and the
PATH line is the one the bootstrap prints.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
NO_APT_LINE = "ERRBOOK_NO_APT=1 bash scripts/bootstrap.sh install --quick"
PATH_LINE = re.compile(r'^\s*export PATH="(?P<dir>[^"]+):\$PATH"\s*$', re.M)
SYSTEM_PIP_CACHE = Path(os.environ.get("PIP_CACHE_DIR") or Path.home() / ".cache" / "pip")


def _clean_path() -> str:
    """The caller's PATH without any folder that holds an errbook (an activated .venv, a real shim)."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "errbook").exists()]
    return os.pathsep.join(dirs + ["/usr/bin", "/bin"])


def _env(home: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ERRBOOK_", "VIRTUAL_ENV", "PYTEST_", "PYTHONPATH"))}
    env.update(HOME=str(home), PATH=_clean_path(), PIP_CACHE_DIR=str(SYSTEM_PIP_CACHE), **extra)
    return env


def _clone(tmp_path: Path) -> Path:
    dest = tmp_path / "errbook"
    subprocess.run(["git", "clone", "-q", str(REPO), str(dest)], check=True, capture_output=True, timeout=300)
    return dest


def _shell(cmd: str, cwd: Path, env: dict, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _path_after(printed: str, env: dict) -> dict:
    """What a newcomer's shell has after running the PATH line the bootstrap printed."""
    m = PATH_LINE.search(printed)
    assert m, f"the bootstrap printed no PATH line:\n{printed}"
    return dict(env, PATH=m["dir"] + os.pathsep + env["PATH"])


def test_readme_gives_the_set_up_lines_and_the_command_name():
    assert "bash scripts/bootstrap.sh serve" in README and "bash scripts/bootstrap.sh test" in README
    assert NO_APT_LINE in README
    assert re.search(r"^errbook --help\b", README, re.M)        # the name the README uses, typed bare
    assert "bash scripts/bootstrap.sh test --quick" in README


def _set_up_lines(text: str) -> list[str]:
    """The set-up block's lines: every line that starts a bootstrap command, and `errbook --help`."""
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line.startswith("bash scripts/bootstrap.sh") or line == "errbook --help"]


def test_readme_home_page_and_onboarding_show_the_same_set_up():
    readme = _set_up_lines(README)
    assert len(readme) >= 4 and readme[-1] == "errbook --help", readme
    for page in ("docs/index.md", "docs/onboarding.md"):
        assert _set_up_lines((REPO / page).read_text(encoding="utf-8")) == readme, page


@pytest.mark.slow
def test_fresh_clone_set_up_then_errbook_on_path(tmp_path):
    clone = _clone(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = _env(home)
    r = _shell(NO_APT_LINE, clone, env)
    assert r.returncode == 0, r.stdout + r.stderr
    shim = home / ".local" / "bin" / "errbook"
    assert shim.is_file() and os.access(shim, os.X_OK), r.stdout
    user = _path_after(r.stdout, env)

    h = _shell("command -v errbook && errbook --help", clone, user, timeout=300)
    assert h.returncode == 0, h.stdout + h.stderr
    assert h.stdout.splitlines()[0] == str(shim)
    assert "usage: errbook" in h.stdout and "triage" in h.stdout and "doctor" in h.stdout
    # From anywhere, not only the clone: the shim names the clone's .venv by its full path.
    assert _shell("errbook --help >/dev/null", tmp_path, user, timeout=300).returncode == 0

    # The same shell without the shim has no errbook: this test cannot pass on some other errbook.
    shim.unlink()
    gone = _shell("errbook --help", clone, user, timeout=300)
    assert gone.returncode == 127 and "errbook: command not found" in gone.stderr, (gone.returncode, gone.stderr)


def _fake_checkout(tmp_path: Path) -> Path:
    """The bootstrap and pyproject.toml of this checkout, with a .venv the bootstrap takes as installed for every
    mode (its stamps at this pyproject.toml): the shim's rules, without pip. The fake .venv's python refuses to
    run, so a bootstrap that wanted pip here fails the test instead of installing into a real environment."""
    import hashlib
    co = tmp_path / "checkout"
    (co / "scripts").mkdir(parents=True, exist_ok=True)
    for f in ("scripts/bootstrap.sh", "pyproject.toml"):
        shutil.copy(REPO / f, co / f)
    bin_ = co / ".venv" / "bin"
    bin_.mkdir(parents=True)
    for name, body in (("python", 'echo "the fake .venv python was asked to run: $*" >&2\nexit 99\n'),
                       ("errbook", 'echo "fake errbook $*"\n')):
        (bin_ / name).write_text("#!/bin/sh\n" + body)
        (bin_ / name).chmod(0o755)
    digest = hashlib.sha1((co / "pyproject.toml").read_bytes()).hexdigest()[:12]
    for extras in ("base", "test", "test,toolchain"):
        (co / ".venv" / f".installed-{extras}-{digest}").touch()
    return co


def test_shim_is_written_rewritten_and_never_clobbers(tmp_path):
    co = _fake_checkout(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = _env(home)
    r = _shell(NO_APT_LINE, co, env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "installing errbook" not in r.stdout                     # the stamps were honoured: no pip
    user = _path_after(r.stdout, env)
    assert _shell("errbook triage x.log", tmp_path, user, timeout=300).stdout == "fake errbook triage x.log\n"

    # On PATH already: no PATH line the second time. The shim is rewritten (it follows the last checkout set up).
    again = _shell(NO_APT_LINE, co, user, timeout=300)
    assert again.returncode == 0 and not PATH_LINE.search(again.stdout), again.stdout

    # A checkout whose .venv is gone: the shim says what to do, exit 127.
    shutil.rmtree(co / ".venv")
    gone = _shell("errbook --help", tmp_path, user, timeout=300)
    assert gone.returncode == 127 and "run 'bash scripts/bootstrap.sh install'" in gone.stderr, gone.stderr

    # An errbook in that folder that the bootstrap did not write is left alone.
    co = _fake_checkout(tmp_path)
    shim = home / ".local" / "bin" / "errbook"
    shim.write_text("#!/bin/sh\necho mine\n")
    r = _shell(NO_APT_LINE, co, user, timeout=300)
    assert r.returncode == 0 and "was not written by this bootstrap" in r.stderr, r.stderr
    assert shim.read_text() == "#!/bin/sh\necho mine\n"

    # ERRBOOK_BIN_DIR chooses the folder; "none" writes no shim.
    other = tmp_path / "bin"
    r = _shell(NO_APT_LINE, co, dict(env, ERRBOOK_BIN_DIR=str(other)), timeout=300)
    assert r.returncode == 0 and (other / "errbook").is_file(), r.stdout + r.stderr
    shutil.rmtree(other)
    r = _shell(NO_APT_LINE, co, dict(env, ERRBOOK_BIN_DIR="none"), timeout=300)
    assert r.returncode == 0 and not other.exists()


def test_quick_installs_no_debian_package_and_full_lists_what_it_needs(tmp_path):
    """--quick never reaches apt-get: with every tool missing (an empty PATH but for bash's basics) it asks for
    no Debian package; the full set-up, told not to install them, names the ones it would install."""
    co = _fake_checkout(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    bare = tmp_path / "bare"
    bare.mkdir()
    for tool in ("bash", "sha1sum", "cut", "id", "dirname", "mkdir", "mktemp", "chmod", "mv", "grep", "cat", "touch"):
        os.symlink(shutil.which(tool), bare / tool)
    env = dict(_env(home), PATH=str(bare), PYTHON=sys.executable)
    q = _shell(f"{bare}/bash scripts/bootstrap.sh install --quick", co, env, timeout=300)
    assert q.returncode == 0, q.stdout + q.stderr
    assert "Debian packages" not in q.stdout + q.stderr
    full = _shell(f"ERRBOOK_NO_APT=1 {bare}/bash scripts/bootstrap.sh install", co, env, timeout=300)
    said = re.search(r"not installing the Debian packages (.*) \(", full.stdout)
    assert said, full.stdout + full.stderr
    want = {"hipcc", "chromium", "chromium-driver", "nodejs", "ripgrep"}
    if not shutil.which("slurmctld", path="/usr/sbin:/sbin"):                 # the bootstrap looks there too
        want |= {"slurmctld", "slurmd", "slurm-client"}
    if not shutil.which("munged", path="/usr/sbin:/sbin"):
        want |= {"munge"}
    assert set(said[1].split()) >= want, said[1]


def test_bootstrap_never_enables_the_slurm_services():
    """The script that sets up a machine disables at boot, and starts, no service (issue 31): checked on the
    source, since a test cannot install Debian packages here. The fleet tests run their own daemons."""
    src = (REPO / "scripts" / "bootstrap.sh").read_text(encoding="utf-8")
    code = "\n".join(line.split("#", 1)[0] for line in src.splitlines())
    starts = r"systemctl\s+(enable|start|restart)|service\s+\S+\s+start|update-rc\.d\s+\S+\s+(enable|defaults)"
    assert not re.search(starts, code)
    assert "exit 101" in src and "policy-rc.d" in src              # apt's maintainer scripts start nothing
    assert re.search(r"systemctl disable", code) and re.search(r"update-rc\.d \"\$s\" disable", code)
    assert re.search(r'SLURM_SERVICES=\(munge slurmctld slurmd\)', code)
