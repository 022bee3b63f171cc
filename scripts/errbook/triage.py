"""`errbook triage`: stream logs of any size through both stages and rank the entries they point to.

Memory stays flat (linescan.py); a big regular file is scanned by one process per core (parallel.py). First
stage: signatures (matcher.py); second stage when none matched: likely entries by lexical similarity
(retrieval.py). Environment evidence in the log re-ranks both (logfacts.py, ranking.py).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sys
from pathlib import Path

from . import entries as entries_mod
from . import linescan, logfacts, parallel, ranking, retrieval, textenc, validate
from . import matcher as matcher_mod

EXTRAS = [retrieval.SAMPLE_EXTRA, *logfacts.EXTRAS]


def build_matcher(active, skipped: list | None = None) -> matcher_mod.Matcher:
    return matcher_mod.Matcher.from_entries(active, skipped=skipped, extras=EXTRAS)


def knowledge(root: Path, active) -> ranking.Knowledge:
    return ranking.Knowledge(active, index=lambda: retrieval.shipped_index(root, active))


def scan_file(m, path: str, scan, source: str = "", workers: int | None = None, info: dict | None = None):
    """Feed a file into scan; a big regular UTF-8 file is scanned by several processes (one per core). A file in
    another encoding is transcoded as one stream (its byte ranges are not UTF-8 lines)."""
    size = os.path.getsize(path) if os.path.isfile(path) else 0
    workers = workers if workers is not None else min(os.cpu_count() or 1, 8)
    if workers >= 2 and size >= parallel.PARALLEL_MIN_BYTES and _is_utf8(path):
        try:
            lines_bytes = parallel.scan_file(m, path, scan, workers, source)
            if info is not None:
                info["encoding"] = "utf-8"
            return lines_bytes
        except parallel.SpillFailed as e:
            print(f"errbook triage: {e}; scanning in one process instead", file=sys.stderr)
            scan.__init__(m)
    with open(path, "rb") as f:
        return linescan.scan_stream(m, f, scan, source, info=info)


def _is_utf8(path: str) -> bool:
    with open(path, "rb") as f:
        return textenc.sniff(f.read(textenc.SNIFF_BYTES))[0] in ("utf-8", "utf-8-sig")


def _note_encoding(src: str, info: dict) -> None:
    enc = info.get("encoding", "utf-8")
    if enc not in ("utf-8", "utf-8-sig"):
        name = "standard input" if src == "-" else src
        print(f"errbook triage: {name} is {textenc.LABELS[enc]} text (as Windows PowerShell's > writes): "
              "decoded from it", file=sys.stderr)


def triage_files(root: Path, files: list[str], stdin=None, machine_facts: dict | None = None,
                 workers: int | None = None, doctor_facts: dict | None = None) -> tuple[list[dict], dict, list]:
    """doctor_facts: a facts document (errbook doctor --collect) of the machine the log came from."""
    # Only entries that load and pass the schema: one being edited must not take triage down mid-incident.
    usable, errors = validate.usable_entries(root)
    active = list(entries_mod.active(usable))
    bonus = None
    skipped: list[str] = []
    if doctor_facts is not None:
        from . import checks, facts as facts_mod
        values = facts_mod.values_of(doctor_facts)
        machine_facts = dict(checks.to_log_facts(values), **(machine_facts or {}))
        bonus = checks.machine_bonus(active, values, skipped)
    m = build_matcher(active, skipped)
    errors = list(errors) + skipped
    scan = m.new_scan()
    stats = {"lines": 0, "bytes": 0, "files": 0}
    sources = files or ["-"]
    multi = len(sources) > 1
    for src in sources:
        scan.reset_sequences()
        info: dict = {}
        if src == "-":
            f = stdin if stdin is not None else sys.stdin.buffer
            lines, nbytes = linescan.scan_stream(m, f, scan, "stdin" if multi else "", info=info)
        else:
            lines, nbytes = scan_file(m, src, scan, src if multi else "", workers, info)
        _note_encoding(src, info)
        stats["lines"] += lines
        stats["bytes"] += nbytes
        stats["files"] += 1
    results = ranking.rank(scan, knowledge(root, active), machine_facts=machine_facts, machine_bonus=bonus)
    facts = logfacts.from_notes(scan.notes)
    if facts:
        stats["environment"] = facts
    if not results:
        line = retrieval.first_failure_line(scan.notes.get(retrieval.SAMPLE_NAME) or [])
        if line:
            stats["first_failure_line"] = line
    by_id = {e.id: e for e in active}
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


def record_tally(arg: str, results: list[dict]) -> str | None:
    """Append the matched ids (never any log text) to the tally; returns a message when that is impossible."""
    p = tally_path(arg)
    try:
        if p.is_dir():
            raise IsADirectoryError(21, "is a directory")
        p.parent.mkdir(parents=True, exist_ok=True)
        from . import regfile         # a FIFO or device at the tally's path must not block or take the ids
        with os.fdopen(regfile.open_regular(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "a", encoding="utf-8") as f:
            f.write(json.dumps({"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                                "top": results[0]["id"], "matched": [r["id"] for r in results]}) + "\n")
    except OSError as e:
        return f"could not record the tally in {p}: {e.strerror or e}"
    return None


MAX_TALLY_BYTES = 256 << 20     # about 4 million triages


def show_tally(path: Path) -> int:
    """Counts per entry. Lines that are not tally records (corrupt, not UTF-8) are counted and reported."""
    counts: dict[str, int] = {}
    bad = 0
    try:
        from . import regfile
        raw = regfile.read_regular(path, MAX_TALLY_BYTES) if path.exists() else b""
    except OSError as e:
        print(f"errbook triage: cannot read the tally {path}: {e.strerror or e}", file=sys.stderr)
        return 2
    for line in raw.splitlines():
        try:
            rec = json.loads(line.decode("utf-8"))
            top = rec.get("top") if isinstance(rec, dict) else None
        except (UnicodeDecodeError, ValueError):
            top = None
        if isinstance(top, str) and top:
            counts[top] = counts.get(top, 0) + 1
        elif line.strip():
            bad += 1
    for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{v:6d}  {k}")
    if bad:
        print(f"errbook triage: {bad} line(s) of {path} are not tally records and were skipped", file=sys.stderr)
    return 0


def _print_text(results: list[dict], top: list[dict], stats: dict) -> None:
    if not results:
        print(f"no entry matched ({stats['lines']} lines read)")
        if stats.get("first_failure_line"):
            print(f"  first failure line: {stats['first_failure_line']}")
            print("  next: search the book for that line (errbook serve, then the search box), browse the entries by "
                  "class,\n        and once the cause is known add an entry: errbook new CLASS \"title\"")
        else:
            print("  no line in it reports a failure: paste the part of the log around the error, or search the book "
                  "(errbook serve)")
    elif results[0]["confidence"] == "likely":
        print("no signature matched; by similarity to the entries' text these are LIKELY (not certain):")
    for rank, r in enumerate(top, 1):
        score = r["score"] if isinstance(r["score"], int) else f"{r['score']:.2f}"
        print(f"{rank}. {r['id']}  {r['title']}  [{r['class']}, {r['confidence']}, score {score}]")
        if r.get("note"):
            print(f"     ({r['note']})")
        for why in r.get("environment", []):
            print(f"     environment: {why}")
        for ev in r.get("evidence", [])[:3]:
            for ln in ev["lines"]:
                where = f"{ln['source']}:" if ln.get("source") else "line "
                print(f"     {where}{ln['line']}: {ln['text'][:200]}")
        print(f"   {r['summary'][:400]}")
        print(f"   first fix: {r['first_fix'][:300]}")
        print(f"   verify:    {r['runbook']}\n")


def _terminate(signum, frame):
    raise SystemExit(128 + signum)        # unwinds: workers are stopped and temporary files removed


def main(args, root: Path) -> int:
    if args.show_tally:
        return show_tally(tally_path(args.tally or ""))
    files = args.files or ["-"]
    if "-" in files and (sys.stdin is None or sys.stdin.closed):
        print("errbook triage: no input: standard input is closed; give a log file", file=sys.stderr)
        return 2
    doctor_facts = None
    if getattr(args, "facts", None):
        from . import facts as facts_mod
        try:
            doctor_facts = facts_mod.load(args.facts)
        except facts_mod.FactsError as e:
            print(f"errbook triage: {e}", file=sys.stderr)
            return 2
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        results, stats, errors = triage_files(root, args.files, doctor_facts=doctor_facts)
    except OSError as e:
        print(f"errbook triage: {e}", file=sys.stderr)
        return 2
    except parallel.WorkerDied as e:
        print(f"errbook triage: {e}; nothing was matched. Run again, or with less memory pressure", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGTERM, previous)
    for err in errors:
        print(f"errbook triage: {err} (run errbook validate)", file=sys.stderr)
    top = results[: max(1, args.top)]
    if args.json:
        print(json.dumps({"matches": top, "stats": stats}, ensure_ascii=False, indent=1))
    else:
        _print_text(results, top, stats)
    if args.tally is not None and results:
        msg = record_tally(args.tally, results)
        if msg:
            print(f"errbook triage: {msg}", file=sys.stderr)
    return 0 if results and results[0]["confidence"] == "match" else 1
