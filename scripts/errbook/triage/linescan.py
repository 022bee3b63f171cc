"""Streaming a binary log through the prefilter into a Scan, with flat memory.

Input is read in CHUNK-sized pieces. A lone \\r ends a line (as an editor shows it); \\r\\n is one line end. A
line longer than normalize.RAW_CAP_BYTES keeps only its head: the rest is skipped up to its newline. Only lines
the prefilter cannot rule out are decoded, cleaned, verified and fed to the scan. A dense chunk (many hit lines,
few of them distinct) is grouped by distinct line, so its cost per hit line is a dictionary lookup.
"""
from __future__ import annotations

import re
from itertools import accumulate

from errbook.triage import matcher as matcher_mod
from errbook.triage import memtrim, normalize, textenc

CHUNK = 8 << 20
FIRST_CHUNK = 1 << 20    # the first read is small: it decides early whether the log is dense (see DENSE_CANDIDATES)
_LONE_CR = re.compile(rb"\r(?!\n)")


def _line_text(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return normalize.decode(raw)


MEMO_LINES = 4096          # distinct short lines remembered per matcher (then the memo starts over)
MEMO_LINE_BYTES = 1024    # longer lines are rarely repeated verbatim: not worth their memory


def _plan_of(m: matcher_mod.Matcher, subs: list[str], ids):
    return m.plan(subs, [m.verify(s, ids) for s in subs]) if subs else None


def _planned(m: matcher_mod.Matcher, raw: bytes, ids) -> tuple:
    """(cleaned sub-lines, plan or None) of one raw line.

    A log with many hit lines usually repeats a few of them (every rank, every retry): the cleaning,
    verification and plan of a line are remembered by its raw bytes and candidate ids, which decide them. Lines
    that differ only in what cleaning strips (a timestamp, a rank prefix) share the verification and plan,
    remembered by the cleaned sub-lines."""
    if len(raw) > MEMO_LINE_BYTES:
        subs = normalize.clean(_line_text(raw))
        return subs, _plan_of(m, subs, ids)
    memo = m.line_memo
    got = memo.get(raw)
    if got is not None and got[0] == ids:
        return got[1], got[2]
    subs = normalize.clean(_line_text(raw))
    key = tuple(subs)
    cmemo = m.clean_memo
    done = cmemo.get(key)
    if done is not None and done[0] == ids:
        plan = done[1]
    else:
        plan = _plan_of(m, subs, ids)
        if len(cmemo) >= MEMO_LINES:
            cmemo.clear()
        cmemo[key] = (ids, plan)
    if len(memo) >= MEMO_LINES:
        memo.clear()
    memo[raw] = (ids, subs, plan)
    return subs, plan


def feed_line(m: matcher_mod.Matcher, scan: matcher_mod.Scan, lineno: int, raw: bytes, ids, source: str,
              offset: int | None) -> None:
    subs, plan = _planned(m, raw, ids)
    if plan is not None:
        scan.apply(lineno, subs, plan, source, offset)


def _candidates(m, scan, probe: bytes) -> dict:
    """The prefilter's candidate lines of a probe, with the notes still collecting."""
    cand = m.prefilter.lines(probe)
    notes = scan.open_notes()
    if notes:
        for idx, (ids, s, e) in m.note_prefilter(notes).lines(probe).items():
            have = cand.get(idx)
            if have is None:
                cand[idx] = (ids, s, e)
            elif have[0] is not None:
                cand[idx] = (None if ids is None else have[0] | ids, s, e)
    return cand


# A chunk with this many candidate lines per CHUNK bytes makes the next chunk try grouping by distinct line;
# grouping is used when at most one line in DISTINCT_SHARE is distinct (a dense log repeats its hit lines:
# ranks, retries).
DENSE_CANDIDATES = 2048
DISTINCT_SHARE = 4
GROUP_MIN_BYTES = 1 << 20


def _block_grouped(m, scan, lines: list[bytes], base: int, offset: int | None, source: str) -> int:
    """_block for a chunk that repeats few distinct lines: the prefilter searches each distinct line once and a
    line is planned once. The scan still sees, in line order, every occurrence that can change what it keeps
    (every step of a sequence; the first occurrences of a line, as many as a signature keeps evidence or a note
    keeps lines); the other occurrences only add to counts. The result equals _block's."""
    where: dict[bytes, list[int]] = {}
    for i, raw in enumerate(lines):
        lst = where.get(raw)
        if lst is None:
            where[raw] = [i]
        else:
            lst.append(i)
    distinct = list(where)
    cand = _candidates(m, scan, normalize.probe(b"\n".join(distinct) + b"\n"))
    if not cand:
        return 0
    caps, cap = m.note_caps, normalize.RAW_CAP_BYTES
    events, found = [], 0
    for d, (ids, _s, _e) in cand.items():
        raw = distinct[d]
        at = where[raw]
        found += len(at)
        subs, plan = _planned(m, raw[:cap], ids)
        if plan is None:
            continue
        if plan[2]:                             # sequence steps: every occurrence, in order
            keep = len(at)
        else:
            keep = max([matcher_mod.MAX_EVIDENCE, *(caps[name] for name, _ in plan[3])])
            if len(at) > keep:
                scan.count_more(plan, len(at) - keep)
        events += [(i, subs, plan) for i in at[:keep]]
    events.sort(key=lambda ev: ev[0])
    starts = [0, *accumulate(map(len, lines))] if offset is not None else None
    for i, subs, plan in events:
        line_offset = None if starts is None or offset is None else offset + starts[i] + i
        scan.apply(base + i + 1, subs, plan, source, line_offset)
    return found


def _block(m, scan, data: bytes, base: int, offset: int | None, source: str, grouped: bool = False) -> int:
    """data: whole lines, each ending with \\n; base: lines before it; offset: its file offset (or None).
    grouped: try _block_grouped first. Returns the number of candidate lines."""
    if grouped and len(data) >= GROUP_MIN_BYTES:
        lines = data.split(b"\n")
        lines.pop()                            # data ends with a newline
        if len(set(lines)) * DISTINCT_SHARE <= len(lines):     # a C-speed test before the grouping loop
            return _block_grouped(m, scan, lines, base, offset, source)
    probe = normalize.probe(data)
    cand = _candidates(m, scan, probe)
    if not cand:
        return 0
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
    return len(cand)


def scan_stream(m: matcher_mod.Matcher, f, scan: matcher_mod.Scan, source: str = "", limit: int | None = None,
                offset: int | None = None, info: dict | None = None) -> tuple[int, int]:
    """Feed a binary stream into scan, reading at most `limit` bytes. offset: the file offset of the stream's
    start when evidence is to be re-read later (parallel workers), else None. Returns (physical lines, bytes).

    A stream read from its start (offset None) is read in the encoding its head shows (textenc.py: a UTF-16 or
    UTF-32 log becomes UTF-8 here, where bytes become lines); info["encoding"] is set to it when info is given.
    A range of a file (parallel workers) is UTF-8: only UTF-8 files are split (triage.scan_file)."""
    reader = None
    if offset is None:
        f, enc = textenc.utf8_stream(f)
        reader = f if isinstance(f, textenc.Utf8Reader) else None
        if info is not None:
            info["encoding"] = enc
    guard = memtrim.Guard()
    try:
        lines, nbytes = _scan(m, f, scan, source, limit, offset, guard)
    finally:
        guard.close()
    return lines, (reader.source_bytes if reader is not None else nbytes)


def _scan(m, f, scan, source, limit, offset, guard) -> tuple[int, int]:
    cap = normalize.RAW_CAP_BYTES
    base = 0             # complete lines consumed so far
    nbytes = 0
    pending = b""        # unprocessed start of the current line (at most cap bytes kept)
    pending_at = 0       # its offset from the stream start
    overflow = False     # the current line is longer than cap; the rest is skipped up to its newline
    held_cr = b""        # a \r at a chunk's end: it may be the first half of \r\n
    dense = False        # the last chunk had many candidate lines: group the next by distinct line
    while True:
        guard.check()
        want = CHUNK if nbytes else min(CHUNK, FIRST_CHUNK)
        want = want if limit is None else min(want, limit - nbytes)
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
            found = _block(m, scan, chunk, base, None if offset is None else offset + at + pos, source, dense)
            dense = found * CHUNK >= DENSE_CANDIDATES * len(chunk)
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
