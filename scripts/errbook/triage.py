"""`errbook triage`: stream logs of any size through the matcher and rank the entries they point to.

Memory stays flat: input is read in fixed chunks, a line longer than normalize.RAW_CAP_BYTES keeps only its
head, and only lines that contain some signature's anchor literal (found by one RE2 pass over the raw chunk)
are decoded, cleaned and matched.
"""
from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import os
import struct
import sys
import tempfile
from pathlib import Path

import re2

from . import entries as entries_mod
from . import matcher as matcher_mod
from . import normalize

CHUNK = 4 << 20
_ANSI_B = re2.compile(normalize._ANSI.pattern.encode())
# UTF-8 forms of the characters clean_line() turns into a plain space (anchors may contain spaces).
_SPACES_B = re2.compile(b"|".join(re2.escape(ch.encode()) for ch in
                                 "\u000b\u000c\u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
                                 + "".join(chr(c) for c in range(0x2000, 0x200B))))


def probe_bytes(data: bytes) -> bytes:
    """What the prefilter searches: raw bytes without colour codes and with odd spaces made plain, so an
    anchor is found wherever the cleaned line will contain it. Newlines are never touched."""
    if b"\x1b" in data:
        data = _ANSI_B.sub(b"", data)
    if _SPACES_B.search(data):
        data = _SPACES_B.sub(b" ", data)
    return data


def hit_lines(m: matcher_mod.Matcher, f, limit: int | None = None, stats: dict | None = None):
    """Yield (line number, raw bytes) for every line of a binary stream that the prefilter cannot rule out,
    reading at most `limit` bytes. stats receives {'lines', 'bytes'} when the stream is exhausted."""
    cap = normalize.RAW_CAP_BYTES
    base = 0            # complete lines consumed so far
    nbytes = 0
    carry = b""         # head of the current unfinished line (at most cap bytes)
    overflow = False    # the current line is longer than cap; the rest is skipped until its newline
    pf = m.prefilter

    def block(data: bytes):
        # data: whole lines, each ending with \n. Lines longer than the cap need no special case: the
        # prefilter may see past a line's cap (a superset), and hit lines are cut at the cap before matching.
        if pf is None:
            return
        probe = probe_bytes(data)
        lines = None
        pos, idx, at = 0, 0, 0           # idx: line index of position `at` (newlines counted incrementally)
        while True:
            hit = pf.search(probe, pos)
            if hit is None:
                return
            idx += probe.count(b"\n", at, hit.start())
            at = hit.start()
            # Every line the hit touches is a candidate; the search resumes after the last of them, so a hit
            # spanning lines (\s matches a newline) cannot hide a match on a line it overlaps.
            last = idx + probe.count(b"\n", hit.start(), max(hit.start(), hit.end() - 1))
            e = -1
            for k in range(idx, last + 1):
                if probe is data:
                    st = data.rfind(b"\n", 0, at) + 1 if k == idx else e + 1
                    e = data.find(b"\n", st)
                    yield base + k + 1, data[st:e]
                else:
                    if lines is None:
                        lines = data.split(b"\n")
                    yield base + k + 1, lines[k]
            nl = probe.find(b"\n", hit.end() - 1 if hit.end() > hit.start() else hit.start())
            if nl < 0:
                return
            idx, at, pos = last + 1, nl + 1, nl + 1

    def one(raw: bytes):
        return pf is None or pf.search(probe_bytes(raw)) is not None

    while True:
        want = CHUNK if limit is None else min(CHUNK, limit - nbytes)
        buf = f.read(want) if want > 0 else b""
        if not buf:
            break
        nbytes += len(buf)
        pos = 0
        if carry or overflow:
            nl = buf.find(b"\n")
            if nl < 0:
                if not overflow:
                    room = cap - len(carry)
                    carry += buf[:room]
                    overflow = len(buf) > room
                continue
            if not overflow:
                carry += buf[:min(nl, cap - len(carry))]
            if one(carry):
                yield base + 1, carry
            base += 1
            carry, overflow, pos = b"", False, nl + 1
        last = buf.rfind(b"\n", pos)
        if last < 0:
            carry = buf[pos:pos + cap]
            overflow = len(buf) - pos > cap
            continue
        chunk = buf[pos:last + 1]
        yield from block(chunk)
        base += chunk.count(b"\n")
        rest = buf[last + 1:]
        carry = rest[:cap]
        overflow = len(rest) > cap
    if carry or overflow:
        if one(carry):
            yield base + 1, carry
        base += 1
    if stats is not None:
        stats.update(lines=base, bytes=nbytes)


def _feed(m, scan, source, lineno: int, raw: bytes) -> None:
    line = normalize.clean_line(normalize.decode(raw))
    scan.feed(lineno, line, source, m.candidates(line))


def scan_stream(m: matcher_mod.Matcher, f, scan: matcher_mod.Scan, source: str = "") -> tuple[int, int]:
    """Feed one binary stream into scan, in one process. Returns (lines, bytes)."""
    stats: dict = {}
    for lineno, raw in hit_lines(m, f, stats=stats):
        _feed(m, scan, source, lineno, raw)
    return stats["lines"], stats["bytes"]


# --- several processes for a big regular file --------------------------------------------------------------
# Workers only run the prefilter over their byte range and spill the hit lines to a temporary file; the parent
# then feeds them in file order, so ordered multi-line sequences and line numbers are exactly as in one process.
PARALLEL_MIN_BYTES = 64 << 20
_WORKER_MATCHER: matcher_mod.Matcher | None = None


def _worker(path: str, start: int, end: int, spill: str) -> tuple[int, int]:
    stats: dict = {}
    with open(path, "rb") as f, open(spill, "wb") as out:
        f.seek(start)
        for lineno, raw in hit_lines(_WORKER_MATCHER, f, limit=end - start, stats=stats):
            raw = raw[:normalize.RAW_CAP_BYTES]
            out.write(struct.pack("<QI", lineno, len(raw)))
            out.write(raw)
    return stats["lines"], stats["bytes"]


def _line_aligned_bounds(path: str, size: int, parts: int) -> list[int]:
    """Split points at line starts (found by reading ahead in 1 MiB steps, so a huge line costs no memory)."""
    bounds = [0]
    with open(path, "rb") as f:
        for i in range(1, parts):
            pos = max(bounds[-1], size * i // parts)
            f.seek(pos)
            while True:
                b = f.read(1 << 20)
                if not b:
                    pos = size
                    break
                nl = b.find(b"\n")
                if nl >= 0:
                    pos += nl + 1
                    break
                pos += len(b)
            bounds.append(min(pos, size))
    bounds.append(size)
    return sorted(set(bounds))


def scan_file(m: matcher_mod.Matcher, path: str, scan: matcher_mod.Scan, source: str = "",
              workers: int | None = None) -> tuple[int, int]:
    """Feed a file into scan; a big regular file is prefiltered by several processes (one per core)."""
    size = os.path.getsize(path) if os.path.isfile(path) else 0
    workers = workers if workers is not None else min(os.cpu_count() or 1, 8)
    if workers < 2 or size < PARALLEL_MIN_BYTES:
        with open(path, "rb") as f:
            return scan_stream(m, f, scan, source)
    global _WORKER_MATCHER
    _WORKER_MATCHER = m          # inherited by the forked workers (compiled RE2 objects cannot be pickled)
    bounds = _line_aligned_bounds(path, size, workers)
    with tempfile.TemporaryDirectory(prefix="errbook-triage-") as tmp:
        jobs = [(path, a, b, os.path.join(tmp, f"{i}.hits")) for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
        with multiprocessing.get_context("fork").Pool(len(jobs)) as pool:
            counts = pool.starmap(_worker, jobs)
        base = nbytes = 0
        for (_, _, _, spill), (lines, nb) in zip(jobs, counts):
            with open(spill, "rb") as f:
                while head := f.read(12):
                    lineno, n = struct.unpack("<QI", head)
                    _feed(m, scan, source, base + lineno, f.read(n))
            base += lines
            nbytes += nb
    return base, nbytes


def triage_files(root: Path, files: list[str], stdin=None) -> tuple[list[dict], dict, list]:
    loaded, errors = entries_mod.load_all(root)
    active = list(entries_mod.active(loaded))
    skipped: list[str] = []
    m = matcher_mod.Matcher.from_entries(active, skipped=skipped)
    errors = list(errors) + skipped
    scan = m.new_scan()
    stats = {"lines": 0, "bytes": 0, "files": 0}
    sources = files or ["-"]
    multi = len(sources) > 1
    for src in sources:
        scan.reset_sequences()
        if src == "-":
            f = stdin or sys.stdin.buffer
            n, b = scan_stream(m, f, scan, "stdin" if multi else "")
        else:
            n, b = scan_file(m, src, scan, src if multi else "")
        stats["lines"] += n
        stats["bytes"] += b
        stats["files"] += 1
    by_id = {e.id: e for e in active}
    results = scan.results()
    for r in results:
        e = by_id[r["id"]]
        r.update(title=e["title"], title_zh=e["title_zh"], **{"class": e.klass},
                 summary=e.summary_line, first_fix=e.first_fix,
                 runbook=f"errbook run {e.id}")
    return results, stats, errors


def tally_path(arg: str) -> Path:
    if arg:
        return Path(arg)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "errbook" / "tally.jsonl"


def show_tally(path: Path) -> int:
    counts: dict[str, int] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if rec.get("top"):
                counts[rec["top"]] = counts.get(rec["top"], 0) + 1
    for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{v:6d}  {k}")
    return 0


def main(args, root: Path) -> int:
    if args.show_tally:
        return show_tally(tally_path(args.tally or ""))
    try:
        results, stats, errors = triage_files(root, args.files)
    except OSError as e:
        print(f"errbook triage: {e}", file=sys.stderr)
        return 2
    for err in errors:
        where = err if isinstance(err, str) else f"{err.rel}:{err.line}: {err.message}"
        print(f"errbook triage: skipped {where} (run errbook validate)", file=sys.stderr)
    top = results[: max(1, args.top)]
    if args.tally is not None and results:
        p = tally_path(args.tally)
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "a", encoding="utf-8") as f:   # ids only: never any log text
            f.write(json.dumps({"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                                "top": results[0]["id"], "matched": [r["id"] for r in results]}) + "\n")
    if args.json:
        print(json.dumps({"matches": top, "stats": stats}, ensure_ascii=False, indent=1))
    else:
        if not results:
            print(f"no entry matched ({stats['lines']} lines read)")
        for rank, r in enumerate(top, 1):
            print(f"{rank}. {r['id']}  {r['title']}  [{r['class']}, score {r['score']}]")
            for ev in r["evidence"][:3]:
                for ln in ev["lines"]:
                    where = f"{ln['source']}:" if ln.get("source") else "line "
                    print(f"     {where}{ln['line']}: {ln['text'][:200]}")
            print(f"   {r['summary'][:400]}")
            print(f"   first fix: {r['first_fix'][:300]}")
            print(f"   verify:    {r['runbook']}\n")
    return 0 if results else 1
