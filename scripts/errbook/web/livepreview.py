"""`errbook serve` between two saves: MkDocs' development server holds every request while it rebuilds (16 s
for the whole site) and, when a rebuild fails, until one succeeds ("the server will appear stuck"). This wraps
its builder so that requests are answered from the last complete build while the next one runs, and a failed
rebuild leaves that build served, with the reason printed, instead of hanging every page.

It relies on three attributes of mkdocs.livereload.LiveReloadServer (MkDocs 1.6: root, _epoch_cond,
_wanted_epoch/_visible_epoch); where they are missing the builder is returned unchanged (the old behaviour)."""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable

NEEDED = ("root", "_epoch_cond", "_wanted_epoch", "_visible_epoch")


def supported(server) -> bool:
    return all(hasattr(server, a) for a in NEEDED)


def _snapshot(site: str) -> str:
    """A copy of the built site made of hard links (instant, no data copied): MkDocs' rebuild first empties the
    site folder, then writes new files, so the linked copy keeps the last build whole while it runs."""
    snap = tempfile.mkdtemp(prefix="errbook-last-build-")
    shutil.copytree(site, snap, copy_function=os.link, dirs_exist_ok=True)
    return snap


def _say(level: str, msg: str) -> None:
    print(f"{level:<7} -  errbook: {msg}", file=sys.stderr)     # outside MkDocs' logger: strict cannot count it


def answering_while_rebuilding(server, build: Callable) -> Callable:
    if not supported(server):
        return build
    site = server.root
    last_good: list[str] = []          # the snapshot still served after a failed rebuild

    def forget() -> None:
        while last_good:
            shutil.rmtree(last_good.pop(), ignore_errors=True)
    atexit.register(forget)

    def rebuild(*args, **kwargs):
        if not last_good:
            try:
                last_good.append(_snapshot(site))
            except OSError as ex:      # e.g. temp files on another file system: requests wait, as in MkDocs
                _say("INFO", f"cannot keep the last build while rebuilding ({ex}); pages wait for the rebuild")
        with server._epoch_cond:
            new_epoch = server._wanted_epoch
            if last_good:
                server.root = last_good[0]
                server._wanted_epoch = server._visible_epoch       # requests no longer wait for this rebuild
                server._epoch_cond.notify_all()
        t0 = time.perf_counter()
        try:
            build(*args, **kwargs)
        except Exception as ex:        # MkDocs' Abort included
            if not last_good:
                raise
            _say("WARNING", f"the rebuild failed ({type(ex).__name__}: {ex}); the last good build is still served")
            return
        with server._epoch_cond:
            server.root = site
            server._wanted_epoch = new_epoch
        forget()
        _say("INFO", f"rebuilt in {time.perf_counter() - t0:.1f} s")
    return rebuild
