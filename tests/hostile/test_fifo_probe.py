"""Issue 28, L6 (the machine part): a FIFO at $ROCM_PATH/.info/version hung `errbook doctor` and `errbook run`
(the platform probe). Machine files are read only when regular, opened without blocking; the version then comes
from the folder's name, as for a tree without .info/version."""
import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import REPO

HANG = 300                   # seconds: a ceiling that only catches a hang


@pytest.fixture
def rocm_with_a_fifo(tmp_path):
    rocm = tmp_path / "rocm-6.2.0"
    (rocm / "lib").mkdir(parents=True)
    (rocm / ".info").mkdir()
    os.mkfifo(rocm / ".info" / "version")
    return rocm


def run(args, rocm):
    env = dict(os.environ, ROCM_PATH=str(rocm))
    p = subprocess.Popen([sys.executable, "-m", "errbook.cli", "--root", str(REPO), *args], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(f"hang: errbook {' '.join(args)} with a FIFO at $ROCM_PATH/.info/version")
    assert b"Traceback" not in err, err.decode()[-2000:]
    return p.returncode, out


def test_doctor_collect_does_not_wait_on_a_fifo(rocm_with_a_fifo):
    rc, out = run(["doctor", "--collect", "--no-import"], rocm_with_a_fifo)
    assert rc == 0
    facts = json.loads(out)["facts"]
    assert facts["rocm.default_version"]["value"] == "6.2.0"          # from the folder's name


def test_the_platform_probe_of_run_does_not_wait_on_a_fifo(rocm_with_a_fifo):
    rc, out = run(["platform", "--json"], rocm_with_a_fifo)          # errbook run's probe (tiers.detect)
    assert rc == 0
    assert json.loads(out)["rocm"].get("rocm_version") is None
