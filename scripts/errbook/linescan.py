"""Streaming a binary log through the prefilter into a Scan, with flat memory.

Input is read in CHUNK-sized pieces. A lone \\r ends a line (as an editor shows it); \\r\\n is one line end. A
line longer than normalize.RAW_CAP_BYTES keeps only its head: the rest is skipped up to its newline. Only lines
the prefilter cannot rule out are decoded, cleaned, verified and fed to the scan.
"""
from __future__ import annotations

import re
from itertools import accumulate

from . import matcher as matcher_mod
from . import memtrim, normalize

CHUNK = 8 << 20
_LONE_CR = re.compile(rb"\r(?!\n)")


def _line_text(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return normalize.decode(raw)


MEMO_LINES = 4096          # distinct short lines remembered per matcher (then the memo starts over)
MEMO_LINE_BYTES = 1024    # longer lines are rarely repeated verbatim: not worth their memory


def feed_line(m: matcher_mod.Matcher, scan: matcher_mod.Scan, lineno: int, raw: bytes, ids, source: str,
              offset: int | None) -> None:
    # A log with many hit lines usually repeats a few of them (every rank, every retry): the cleaning,
    # verification and plan of a line are remembered by its raw bytes and candidate ids, which decide them.
    memo = m.line_memo if len(raw) <= MEMO_LINE_BYTES else None
    if memo is not None:
        got = memo.get(raw)
        if got is not None and got[0] == ids:
            if got[2] is not None:
                scan.apply(lineno, got[1], got[2], source, offset)
            return
    subs = normalize.clean(_line_text(raw))
    plan = m.plan(subs, [m.verify(s, ids) for s in subs]) if subs else None
    if memo is not None:
        if len(memo) >= MEMO_LINES:
            memo.clear()
        memo[raw] = (ids, subs, plan)
    if plan is not None:
        scan.apply(lineno, subs, plan, source, offset)


def _block(m, scan, data: bytes, base: int, offset: int | None, source: str) -> None:
    """data: whole lines, each ending with \\n; base: lines before it; offset: its file offset (or None)."""
    probe = normalize.probe(data)
    cand = m.prefilter.lines(probe)
    notes = scan.open_notes()
    if notes:
        for idx, (ids, s, e) in m.note_prefilter(notes).lines(probe).items():
            have = cand.get(idx)
            if have is None:
                cand[idx] = (ids, s, e)
            elif have[0] is not None:
                cand[idx] = (None if ids is None else have[0] | ids, s, e)
    if not cand:
        return
    starts = None
    if probe is not data:                      # rewritten: find the raw line by its index instead
        lines = data.split(b"\n")
        if offset is not None:
            starts = [0, *accumulate(len(x) + 1 for x in lines)]
    for idx in sorted(cand):
        ids, s, e = cand[idx]
        if probe is data:
            raw, at = data[s:min(e, s + normalize.RAW_CAP_BYTES)], s
        else:
            raw, at = lines[idx][:normalize.RAW_CAP_BYTES], (starts[idx] if starts else 0)
        feed_line(m, scan, base + idx + 1, raw, ids, source, None if offset is None else offset + at)


def scan_stream(m: matcher_mod.Matcher, f, scan: matcher_mod.Scan, source: str = "", limit: int | None = None,
                offset: int | None = None) -> tuple[int, int]:
    """Feed a binary stream into scan, reading at most `limit` bytes. offset: the file offset of the stream's
    start when evidence is to be re-read later (parallel workers), else None. Returns (physical lines, bytes)."""
    guard = memtrim.Guard()
    try:
        return _scan(m, f, scan, source, limit, offset, guard)
    finally:
        guard.close()


def _scan(m, f, scan, source, limit, offset, guard) -> tuple[int, int]:
    cap = normalize.RAW_CAP_BYTES
    base = 0             # complete lines consumed so far
    nbytes = 0
    pending = b""        # unprocessed start of the current line (at most cap bytes kept)
    pending_at = 0       # its offset from the stream start
    overflow = False     # the current line is longer than cap; the rest is skipped up to its newline
    held_cr = b""        # a \r at a chunk's end: it may be the first half of \r\n
    while True:
        guard.check()
        want = CHUNK if limit is None else min(CHUNK, limit - nbytes)
        buf = f.read(want) if want > 0 else b""
        at = nbytes - len(held_cr)             # stream offset of buf[0] once held_cr is put back
        nbytes += len(buf)
        eof = not buf
        buf = held_cr + buf
        held_cr = b""
        if not eof and buf.endswith(b"\r"):
            held_cr, buf = b"\r", buf[:-1]
        if b"\r" in buf:
            buf = _LONE_CR.sub(b"\n", buf)     # same length: offsets stay true
        if eof and not buf:
            break
        pos = 0
        if pending or overflow:
            nl = buf.find(b"\n")
            if nl < 0:
                if not overflow:
                    room = cap - len(pending)
                    pending += buf[:room]
                    overflow = len(buf) > room
                if eof:
                    break
                continue
            if not overflow:
                pending += buf[:min(nl, cap - len(pending))]
            _block(m, scan, pending + b"\n", base, None if offset is None else offset + pending_at, source)
            base += 1
            pending, overflow, pos = b"", False, nl + 1
        last = buf.rfind(b"\n", pos)
        if last >= 0:
            chunk = buf[pos:last + 1]
            _block(m, scan, chunk, base, None if offset is None else offset + at + pos, source)
            base += chunk.count(b"\n")
            pos = last + 1
        if pos < len(buf):
            pending, pending_at = buf[pos:pos + cap], at + pos
            overflow = len(buf) - pos > cap
        if eof:
            break
    if pending or overflow:
        _block(m, scan, pending + b"\n", base, None if offset is None else offset + pending_at, source)
        base += 1
    return base, nbytes


def reread(path: str, offset: int, sub: int) -> str:
    """The cleaned sub-line `sub` of the physical line starting at `offset` (parallel scans keep offsets only)."""
    with open(path, "rb") as f:
        f.seek(offset)
        raw = f.read(normalize.RAW_CAP_BYTES)
    m = re.search(rb"\r\n|\r|\n", raw)
    if m:
        raw = raw[:m.start()]
    subs = normalize.clean(normalize.decode(raw))
    return subs[sub] if sub < len(subs) else ""
