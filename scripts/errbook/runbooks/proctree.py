"""Ending a runbook run and everything it started, so nothing outlives it.

papermill's child starts the Jupyter kernel in a session of its own (jupyter_client does), and a runbook can
start processes in further sessions, so neither the child's process group nor its session covers them. The
runner gives the child a unique environment variable; every process of the run inherits it (hipcc, a
detached daemon, the kernel). reap() kills, with SIGKILL, each process that carries the tag, each
descendant of the child and each member of a session one of them leads, until none is left. Linux (/proc);
elsewhere only the child's process group is killed.
"""
from __future__ import annotations

import contextlib
import os
import signal
import time

TAG = "ERRBOOK_RUN_TAG"


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, session id) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()
    if fields[0] == b"Z":      # a zombie is dead already; its parent reaps it
        return None
    return int(fields[1]), int(fields[3])


def _tagged(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return needle in f.read().split(b"\0")
    except OSError:
        return False


def members(root_pid: int, tag: str) -> set[int]:
    """The live processes of one run: tagged, descendants of root_pid, and sessions led by either."""
    me = os.getpid()
    needle = f"{TAG}={tag}".encode()
    info = {pid: st for pid in _pids() if (st := _stat(pid))}
    found = {pid for pid in info if pid != me and _tagged(pid, needle)}
    if root_pid in info:
        found.add(root_pid)
    while True:
        leaders = found | {root_pid}
        more = {pid for pid, (ppid, sid) in info.items()
                if pid not in found and pid != me and (ppid in found or sid in leaders)}
        if not more:
            return found
        found |= more


def reap(root_pid: int, tag: str, rounds: int = 50) -> int:
    """SIGKILL every process of the run until none is left; returns how many were killed."""
    if not os.path.isdir("/proc"):
        with contextlib.suppress(OSError):
            os.killpg(root_pid, signal.SIGKILL)
        return 0
    killed: set[int] = set()
    for _ in range(rounds):
        pids = members(root_pid, tag)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.02)
    return len(killed)
