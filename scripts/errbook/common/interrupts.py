"""Ctrl-C that cannot be lost while a command waits on a pipe.

Python turns SIGINT into KeyboardInterrupt at the main thread's next bytecode. Two ways that can fail to end a
wait on a FIFO whose writer stays open: the exception is raised inside a finaliser and printed as "Exception
ignored", or the kernel delivers the signal to another thread, so the main thread's read(2) is never interrupted.
The handler here also records the signal; textenc.PipeReader waits in short select() slices and raises again
while one is recorded, so a lost KeyboardInterrupt comes back within a slice.
"""
from __future__ import annotations

import signal
import threading

_pending = threading.Event()


def _on_sigint(signum, frame) -> None:
    _pending.set()
    raise KeyboardInterrupt


def install() -> None:
    """Record Ctrl-C as well as raising it (main thread only; a no-op where SIGINT is ignored, as under nohup)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)


def raise_if_pending() -> None:
    if _pending.is_set():
        raise KeyboardInterrupt
