"""`errbook serve`: the site on localhost, reloaded when entries or runbooks change.

`mkdocs serve` runs as a child in a session of its own, so that this process decides its end: SIGINT, SIGTERM
and SIGHUP are forwarded to it (SIGINT first, so it removes its temporary site), SIGKILL follows after a grace
period, and on Linux the child is also told to die with its parent (PR_SET_PDEATHSIG), so no `mkdocs serve` keeps
serving after `errbook serve` is gone, however it ended. A port already taken is reported before the build
starts (a build takes 15-20 s), with a free port to try instead."""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

from errbook.cli.common import checkout_of, mkdocs_env
from errbook.cli.exitcodes import ExitCode
from errbook.common import ports

GRACE_S = 5.0             # after a forwarded signal, how long mkdocs may take to shut down before SIGKILL
FORWARDED = (signal.SIGINT, signal.SIGTERM) + ((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ())


def add_parser(sub) -> None:
    s = sub.add_parser("serve", help="serve the site on localhost with live reload of entry changes",
                       description="Serve the site; drafts show a Draft banner, an entry that does not load shows "
                                   "its error on its page. Exit status: 0 stopped (Ctrl-C, SIGTERM), 2 the port is "
                                   "taken or mkdocs serve failed.")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        print(f"errbook serve: --port must be between 1 and 65535, not {args.port}", file=sys.stderr)
        return ExitCode.ERROR
    problem = ports.busy(args.host, args.port)
    if problem:
        print(f"errbook serve: {problem}", file=sys.stderr)
        return ExitCode.ERROR
    root = checkout_of(args)
    cmd = [sys.executable, "-m", "mkdocs", "serve", "-f", str(root / "mkdocs.yml"),
           "-a", f"{args.host}:{args.port}", "--livereload", "-w", str(root / "errata"), "-w", str(root / "runbooks")]
    return supervise(cmd, str(root))


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that asks Linux to send the child SIGTERM when this process dies (even by SIGKILL)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    pr_set_pdeathsig = 1

    def preexec() -> None:
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
    return preexec


def _signal_group(child: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):     # already gone
        os.killpg(child.pid, sig)


def supervise(cmd: list[str], cwd: str) -> int:
    """Run cmd as the one child that serves; forward the stopping signals to its process group; never return
    while it is alive. 0 when stopped by a signal or when it ended by itself without error, else 2."""
    child = subprocess.Popen(cmd, cwd=cwd, start_new_session=True, preexec_fn=_die_with_parent(), env=mkdocs_env())
    print(f"errbook serve: mkdocs serve is process {child.pid}; Ctrl-C stops it", file=sys.stderr, flush=True)
    stopping: list[float] = []

    def forward(signum, _frame) -> None:
        if not stopping:
            stopping.append(time.monotonic())
        _signal_group(child, signal.SIGINT)      # mkdocs' own clean shutdown (it removes its temporary site)

    previous = {s: signal.signal(s, forward) for s in FORWARDED}
    try:
        while True:
            try:
                rc = child.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if stopping and time.monotonic() - stopping[0] > GRACE_S:
                    _signal_group(child, signal.SIGKILL)
    finally:
        if child.poll() is None:                   # an exception of our own: take the child with us
            _signal_group(child, signal.SIGKILL)
            child.wait()
        _signal_group(child, signal.SIGKILL)       # anything mkdocs started and left behind in its group
        for s, h in previous.items():
            signal.signal(s, h)
    if stopping:
        print("errbook serve: stopped", file=sys.stderr)
        return ExitCode.OK
    if rc != 0:
        print(f"errbook serve: mkdocs serve ended with status {rc} (its message is above)", file=sys.stderr)
        return ExitCode.ERROR
    return ExitCode.OK
