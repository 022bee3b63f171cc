"""Issue 28, L2: an unexpected exception exits 2 with a one-line message (and a hint: ERRBOOK_DEBUG=1 shows the
traceback), never 1, which reads as "no match" or "a known problem applies". MemoryError likewise; Ctrl-C keeps
130. Before: a traceback and exit 1."""
import errno
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO

HANG = 300                   # seconds: a ceiling that only catches a hang
# A command that fails in a way nobody planned for: the top-level handler is the only thing left to catch it.
HARNESS = """
import sys
from errbook.cli import app, triage
from errbook.errors import ErrbookError
def boom(args):
    raise {exc}
triage.run = boom
sys.exit(app.main(sys.argv[1:]))
"""


def run(cmd, env=None, input=b"", mem=None):
    def limits():
        if mem:
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    return subprocess.run(cmd, input=input, capture_output=True, timeout=HANG, env=env, preexec_fn=limits)


def harness(exc: str, debug: bool = False):
    env = {k: v for k, v in os.environ.items() if k != "ERRBOOK_DEBUG"}
    if debug:
        env["ERRBOOK_DEBUG"] = "1"
    return run([sys.executable, "-c", HARNESS.format(exc=exc), "--root", str(REPO), "triage", "-"], env=env)


@pytest.mark.parametrize("exc", ["ValueError('bad value')", "TypeError('wrong type')", "KeyError('k')",
                                 "RecursionError('deep')", "ZeroDivisionError()"])
def test_an_unexpected_exception_exits_2_with_one_line(exc):
    r = harness(exc)
    err = r.stderr.decode()
    assert r.returncode == 2, (r.returncode, err)
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("errbook: internal error: " + exc.split("(")[0]) and "ERRBOOK_DEBUG=1" in err, err


def test_errbook_debug_shows_the_traceback_and_still_exits_2():
    r = harness("ValueError('bad value')", debug=True)
    assert r.returncode == 2 and b"Traceback (most recent call last)" in r.stderr, r.stderr


def test_an_errbook_error_nobody_handled_exits_2_with_its_message():
    """The one error hierarchy (errbook/errors.py): a domain error that no command caught is a one-line message
    and exit 2 (an error), never exit 1 (which means "no match")."""
    r = harness("ErrbookError('the corpus folder is missing')")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.decode() == "errbook: the corpus folder is missing\n", r.stderr


def test_memory_error_exits_2():
    r = harness("MemoryError()")
    assert r.returncode == 2 and r.stderr.decode().startswith("errbook: out of memory"), r.stderr
    assert b"Traceback" not in r.stderr


def test_show_tally_of_a_huge_file_under_a_memory_limit(tmp_path):
    """A real MemoryError (RLIMIT_AS, as `ulimit -v`): a 2 GiB tally (sparse) under a 1 GiB limit."""
    big = tmp_path / "tally.jsonl"
    with open(big, "wb") as f:
        f.truncate(2 << 30)
    r = run([sys.executable, "-m", "errbook.cli", "--root", str(REPO), "triage", "--show-tally", "--tally", str(big)],
            mem=1 << 30)
    assert b"Traceback" not in r.stderr, r.stderr.decode()[-2000:]
    assert r.returncode in (0, 2), (r.returncode, r.stderr)      # read in a bounded way, or said: never 1
    if r.returncode == 2:                # refused by the tally's size cap (L6), or the handler's MemoryError line
        assert b"out of memory" in r.stderr or b"larger than the" in r.stderr, r.stderr
        assert r.stderr.count(b"\n") == 1, r.stderr


def test_show_tally_of_garbage_never_exits_1(tmp_path):
    garbage = tmp_path / "tally.jsonl"
    garbage.write_bytes(b"[" * 200000 + b"\n" + b'{"top": "RMN-0001"}\n')
    r = run([sys.executable, "-m", "errbook.cli", "--root", str(REPO), "triage", "--show-tally", "--tally",
             str(garbage)])
    assert b"Traceback" not in r.stderr, r.stderr.decode()[-2000:]
    assert r.returncode in (0, 2), (r.returncode, r.stderr)


def test_ctrl_c_still_exits_130(tmp_path):
    """Regression guard: the handler must not swallow Ctrl-C. The log is a FIFO: once it can be opened for writing,
    triage has opened it and is reading (an event, not a delay)."""
    fifo = tmp_path / "log"
    os.mkfifo(fifo)
    p = subprocess.Popen([sys.executable, "-m", "errbook.cli", "--root", str(REPO), "triage", str(fifo)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    w = None
    try:
        deadline = time.monotonic() + HANG
        while w is None and p.poll() is None and time.monotonic() < deadline:
            try:
                w = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)     # ENXIO until a reader has it open
            except OSError as e:
                if e.errno != errno.ENXIO:
                    raise
                time.sleep(0.05)
        assert w is not None, f"triage never opened its log (exit {p.poll()})"
        os.write(w, b"waiting for more\n")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=HANG)
    finally:
        if w is not None:
            os.close(w)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    assert p.returncode == 130 and b"Traceback" not in err, (p.returncode, err)


def test_a_lost_ctrl_c_still_ends_a_wait_on_a_pipe():
    """A Ctrl-C whose KeyboardInterrupt was lost (raised in a finaliser, or the signal taken by another thread)
    must still end a read from a pipe whose writer stays open: the reader wakes between select() slices."""
    import threading

    from errbook.common import interrupts
    from errbook.triage import textenc

    r, w = os.pipe()
    timer = threading.Timer(0.3, interrupts._pending.set)       # the record the handler leaves, and nothing else
    try:
        assert textenc.waits(r) and not textenc.waits(os.open(os.devnull, os.O_RDONLY))
        reader = textenc.PipeReader(r)
        os.write(w, b"first line\n")
        assert reader.read(1 << 16) == b"first line\n"             # data is read as it comes
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            reader.read(1 << 16)                                   # the writer is open: without the record, forever
    finally:
        timer.cancel()
        interrupts._pending.clear()
        os.close(r)
        os.close(w)


def test_the_handler_records_ctrl_c_and_still_raises():
    from errbook.common import interrupts

    previous = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        interrupts.install()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            interrupts.raise_if_pending()
    finally:
        interrupts._pending.clear()
        signal.signal(signal.SIGINT, previous)
