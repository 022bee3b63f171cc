"""Keeps a long scan's resident memory flat.

A scan allocates a few chunk-sized buffers per chunk (the read, the probe, its rewrites). glibc serves them from
a heap that fragments, so the peak resident size crept up with the log's size (146 MiB at 0.25 GiB, 198 MiB at
4 GiB) although nothing is kept. A fixed mmap threshold keeps it flat but costs a third of the speed; returning
the heap's free pages (malloc_trim) only when the resident size has grown by SLACK costs nothing measurable.
Linux with glibc only; elsewhere every call is a no-op.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
from typing import Any, cast

SLACK = 32 << 20        # growth over the working set before free pages are handed back
WARMUP = 4              # chunks before the working set is measured


class Guard:
    def __init__(self):
        self._fd: int | None = None
        self._trim: Any = None                 # libc's malloc_trim
        self._limit: int | None = None
        self._seen = 0
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            self._trim = libc.malloc_trim
            self._fd = os.open("/proc/self/statm", os.O_RDONLY)
            self._page = os.sysconf("SC_PAGE_SIZE")
        except (OSError, AttributeError, ValueError):
            self.close()

    def _rss(self) -> int:
        return int(os.pread(cast(int, self._fd), 64, 0).split()[1]) * self._page

    def check(self) -> None:
        """Call once per chunk. The limit is set SLACK above the resident size after WARMUP chunks (the
        working set by then: the matcher and a chunk's buffers); above it, free heap pages are handed back."""
        if self._fd is None:
            return
        try:
            self._seen += 1
            if self._seen < WARMUP:
                return
            rss = self._rss()
            if self._limit is None:
                self._limit = rss + SLACK
            elif rss > self._limit:
                self._trim(0)
                self._limit = max(self._limit, self._rss() + SLACK // 2)   # real growth: do not trim again
        except (OSError, ValueError, IndexError):
            self.close()

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = None
