"""Triage of a big regular file by one process per core, with the same answer as one process.

The file is cut at line starts. Each worker scans its range completely (single-line signatures, vetoes, notes)
and returns that part through a pipe. Steps of multi-line sequences cannot be decided inside one range (a
sequence may start in one range and end in the next), so a worker spills them — compact records, never the line
text — to a file; the parent replays every range's spill in file order and finally re-reads, by offset, the few
lines shown as evidence. Line numbers, sequences and evidence are therefore exactly those of one process.

Nothing hangs and nothing is left behind: a worker that dies (an OOM kill) is reported with its signal, Ctrl-C
and SIGTERM stop every worker, and the spill folder is removed on every path out.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from typing import cast

from errbook.errors import ErrbookError
from errbook.triage import linescan
from errbook.triage import matcher as matcher_mod

PARALLEL_MIN_BYTES = 64 << 20
SPILL_FRACTION = 4          # a worker's spill may hold at most 1/SPILL_FRACTION of its range's bytes


class WorkerDied(ErrbookError, RuntimeError):
    pass


class SpillFailed(ErrbookError, RuntimeError):
    pass


def _varints(*values: int) -> bytes:
    out = bytearray()
    for v in values:
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
    return bytes(out)


def _read_varints(f):
    """The numbers of a spill file, read 1 MiB at a time (memory stays flat whatever the spill's size)."""
    v = shift = 0
    while buf := f.read(1 << 20):
        for b in buf:
            v |= (b & 0x7F) << shift
            if b & 0x80:
                shift += 7
            else:
                yield v
                v = shift = 0


def _next_line_start(f, pos: int, size: int) -> int:
    """The first line start at or after pos: after a \n, after a \r\n, or after a lone \r."""
    f.seek(pos)
    while True:
        b = f.read(1 << 20)
        if not b:
            return size
        cuts = [x for x in (b.find(b"\n"), b.find(b"\r")) if x >= 0]
        if cuts:
            cut = min(cuts)
            pos += cut + 1
            if b[cut] == 0x0D:                          # \r: one line end together with a following \n
                f.seek(pos)
                if f.read(1) == b"\n":
                    pos += 1
            return min(pos, size)
        pos += len(b)


def line_aligned_bounds(path: str, size: int, parts: int) -> list[int]:
    """Split points at line starts (a huge line costs no memory: the search reads 1 MiB at a time)."""
    bounds = [0]
    with open(path, "rb") as f:
        for i in range(1, parts):
            bounds.append(_next_line_start(f, max(bounds[-1], size * i // parts), size))
    bounds.append(size)
    return sorted(set(bounds))


_STOP = {signal.SIGINT, signal.SIGTERM}


def _worker(m: matcher_mod.Matcher, path: str, start: int, end: int, spill: str, source: str, conn) -> None:
    # replaces the parent's noting handler (_stops_held, around the fork): the parent decides what Ctrl-C does
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    budget = max(1 << 16, (end - start) // SPILL_FRACTION)
    try:
        with open(spill, "wb", buffering=1 << 20) as out:
            last = [0, start, 0]                       # previous event's line, offset; bytes written

            def sink(pos, i, k, hit):
                off, sub = hit.ref
                rec = _varints(hit.line - last[0], off - last[1], sub, i, k)
                last[0], last[1], last[2] = hit.line, off, last[2] + len(rec)
                if last[2] > budget:
                    raise SpillFailed("the spill of sequence steps outgrew its budget")
                out.write(rec)

            scan = m.new_scan(seq_sink=sink)
            with open(path, "rb") as f:
                f.seek(start)
                lines, nbytes = linescan.scan_stream(m, f, scan, source, limit=end - start, offset=start)
        conn.send({"part": scan.part(), "lines": lines, "bytes": nbytes})
    except (OSError, SpillFailed) as e:
        conn.send({"error": f"{type(e).__name__}: {e}"})
    finally:
        conn.close()


def _replay(spill: str, start: int, line_base: int, scan: matcher_mod.Scan, source: str) -> None:
    with open(spill, "rb") as f:
        vals = _read_varints(f)
        line, off = 0, start
        for dline in vals:
            off += next(vals)
            sub, i, k = next(vals), next(vals), next(vals)
            line += dline
            ln = line + line_base
            scan.seq_step(ln * matcher_mod.SUB_SPACE + sub, i, k, matcher_mod.Hit(ln, None, source, (off, sub)))


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "did not finish"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}" + (" (out of memory?)" if -code == signal.SIGKILL else "")
    return f"exited with status {code}"


@contextlib.contextmanager
def _stops_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block ends, then reach the handler that was in place. A handler that
    notes them, not a signal mask: the kernel may deliver a process signal to any thread (a test runner's, a
    library's), and Python then runs the handler in the main thread at once, mask or not."""
    if threading.current_thread() is not threading.main_thread():
        yield                                     # only the main thread may set handlers (and receives them)
        return
    caught: list[int] = []
    previous = {s: signal.signal(s, lambda n, _f: caught.append(n)) for s in _STOP}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        if caught:
            signal.raise_signal(caught[0])


@contextlib.contextmanager
def _spill_folder() -> Iterator[str]:
    """A temporary folder that a stop signal cannot leave behind: one landing just after mkdtemp, or in the middle
    of the removal (tempfile.TemporaryDirectory has both windows), is held until the step is done."""
    tmp = ""
    try:
        with _stops_held():
            tmp = tempfile.mkdtemp(prefix="errbook-triage-")
        yield tmp
    finally:
        if tmp:
            with _stops_held():
                shutil.rmtree(tmp, ignore_errors=True)


def scan_file(m: matcher_mod.Matcher, path: str, scan: matcher_mod.Scan, workers: int,
              source: str = "") -> tuple[int, int]:
    """Feed a big regular file into scan with `workers` processes. Raises WorkerDied or SpillFailed."""
    size = os.path.getsize(path)
    bounds = line_aligned_bounds(path, size, workers)
    _ = m.prefilter                              # compiled once, inherited by the forked workers
    ctx = multiprocessing.get_context("fork")
    procs, results = [], {}
    with _spill_folder() as tmp:
        try:
            # Ctrl-C and SIGTERM wait until every worker is started: a KeyboardInterrupt raised in a child still
            # inside fork() would print a traceback from interpreter internals.
            with _stops_held():
                for k, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
                    rd, wr = ctx.Pipe(duplex=False)
                    p = ctx.Process(target=_worker, args=(m, path, a, b, os.path.join(tmp, f"{k}.spill"), source, wr),
                                    daemon=True)
                    p.start()
                    wr.close()
                    procs.append((k, p, rd))
            waiting = {rd: (k, p) for k, p, rd in procs}
            while waiting:
                for ready in wait(list(waiting)):
                    conn = cast(Connection, ready)
                    k, p = waiting.pop(conn)
                    try:
                        results[k] = conn.recv()
                    except EOFError:          # the pipe closed without a result: the worker died
                        p.join(5)
                        raise WorkerDied(f"triage worker {k + 1}/{len(procs)} {_describe_exit(p.exitcode)}") from None
            errors = [r["error"] for r in results.values() if "error" in r]
            if errors:
                raise SpillFailed(f"parallel scan gave up ({errors[0]}; temporary folder {tmp})")
            line_base = nbytes = 0
            for k, (a, _) in enumerate(zip(bounds, bounds[1:], strict=False)):
                r = results[k]
                scan.merge_part(r["part"], line_base)
                _replay(os.path.join(tmp, f"{k}.spill"), a, line_base, scan, source)
                line_base += r["lines"]
                nbytes += r["bytes"]
        finally:
            for _, p, rd in procs:
                if p.is_alive():
                    p.kill()
                p.join(5)
                rd.close()
    for h in scan.evidence_hits():
        if h.text is None and h.ref is not None:
            h.text = linescan.reread(path, *h.ref)
    return line_base, nbytes
