"""`errbook triage`: stream logs of any size through the matcher and rank the entries they point to.

Memory stays flat: input is read in fixed chunks, a line longer than normalize.RAW_CAP_BYTES keeps only its
head, and only lines that contain some signature's anchor literal (found by one RE2 pass over the raw chunk)
are decoded, cleaned and matched.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import sys
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


def scan_stream(m: matcher_mod.Matcher, f, scan: matcher_mod.Scan, source: str = "") -> tuple[int, int]:
    """Feed one binary stream into scan. Returns (lines, bytes)."""
    cap = normalize.RAW_CAP_BYTES
    base = 0            # complete lines consumed so far
    nbytes = 0
    carry = b""         # head of the current unfinished line (at most cap bytes)
    overflow = False    # the current line is longer than cap; the rest is skipped until its newline

    def one_line(raw: bytes, lineno: int) -> None:
        if m.prefilter is None or m.prefilter.search(probe_bytes(raw)):
            line = normalize.clean_line(normalize.decode(raw))
            scan.feed(lineno, line, source, m.candidates(line))

    def block(data: bytes) -> None:
        # data: whole lines, each ending with \n
        nonlocal base
        if m.prefilter is not None:
            probe = probe_bytes(data)
            lines = None
            pos, idx, at = 0, 0, 0           # idx: line index of position `at` (newlines counted incrementally)
            while True:
                hit = m.prefilter.search(probe, pos)
                if hit is None:
                    break
                idx += probe.count(b"\n", at, hit.start())
                at = hit.start()
                # Verify every line the hit touches, then go on after the last of them: a hit spanning lines
                # (\s matches a newline) must not hide a match on a later line it overlaps.
                last = idx + probe.count(b"\n", hit.start(), max(hit.start(), hit.end() - 1))
                for k in range(idx, last + 1):
                    if probe is data:
                        s = data.rfind(b"\n", 0, at) + 1 if k == idx else e + 1
                        e = data.find(b"\n", s)
                        raw = data[s:e]
                    else:
                        if lines is None:
                            lines = data.split(b"\n")
                        raw = lines[k]
                    line = normalize.clean_line(normalize.decode(raw))
                    scan.feed(base + k + 1, line, source, m.candidates(line))
                nl = probe.find(b"\n", hit.end() - 1 if hit.end() > hit.start() else hit.start())
                if nl < 0:
                    break
                idx, at, pos = last + 1, nl + 1, nl + 1
        base += data.count(b"\n")

    while True:
        buf = f.read(CHUNK)
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
            one_line(carry, base + 1)
            base += 1
            carry, overflow, pos = b"", False, nl + 1
        last = buf.rfind(b"\n", pos)
        if last < 0:
            carry = buf[pos:pos + cap]
            overflow = len(buf) - pos > cap
            continue
        # Lines longer than the cap need no special case here: the prefilter may see past a line's cap (a
        # superset), and each hit line is cut at the cap before it is cleaned and matched.
        block(buf[pos:last + 1])
        rest = buf[last + 1:]
        carry = rest[:cap]
        overflow = len(rest) > cap
    if carry or overflow:
        one_line(carry, base + 1)
        base += 1
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
            with open(src, "rb") as f:
                n, b = scan_stream(m, f, scan, src if multi else "")
        stats["lines"] += n
        stats["bytes"] += b
        stats["files"] += 1
    by_id = {e.id: e for e in active}
    results = scan.results()
    for r in results:
        e = by_id[r["id"]]
        r.update(title=e["title"], title_zh=e["title_zh"], **{"class": e.klass},
                 summary=" ".join(str(e["summary"]).split()), first_fix=" ".join(str(e["fix"][0]["step"]).split()),
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
