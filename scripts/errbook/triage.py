"""`errbook triage`: stream logs of any size through both stages and rank the entries they point to.

Memory stays flat (linescan.py); a big regular file is scanned by one process per core (parallel.py). First
stage: signatures (matcher.py); second stage when none matched: likely entries by lexical similarity
(retrieval.py). Environment evidence in the log re-ranks both (logfacts.py, ranking.py).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path

from . import entries as entries_mod
from . import linescan, logfacts, parallel, ranking, retrieval
from . import matcher as matcher_mod

EXTRAS = [retrieval.SAMPLE_EXTRA, *logfacts.EXTRAS]


def build_matcher(active, skipped: list | None = None) -> matcher_mod.Matcher:
    return matcher_mod.Matcher.from_entries(active, skipped=skipped, extras=EXTRAS)


def knowledge(root: Path, active) -> ranking.Knowledge:
    return ranking.Knowledge(active, index=lambda: retrieval.shipped_index(root, active))


def scan_file(m, path: str, scan, source: str = "", workers: int | None = None, head: list | None = None):
    """Feed a file into scan; a big regular file is scanned by several processes (one per core)."""
    size = os.path.getsize(path) if os.path.isfile(path) else 0
    workers = workers if workers is not None else min(os.cpu_count() or 1, 8)
    if head is not None and size:
        with open(path, "rb") as f:
            head.append(f.read(retrieval.HEAD_BYTES + 1))
        head = None
    if workers >= 2 and size >= parallel.PARALLEL_MIN_BYTES:
        try:
            return parallel.scan_file(m, path, scan, workers, source)
        except parallel.SpillFailed as e:
            print(f"errbook triage: {e}; scanning in one process instead", file=sys.stderr)
            scan.__init__(m)
    with open(path, "rb") as f:
        return linescan.scan_stream(m, f, scan, source, head=head)


def triage_files(root: Path, files: list[str], stdin=None, machine_facts: dict | None = None,
                 workers: int | None = None, doctor_facts: dict | None = None) -> tuple[list[dict], dict, list]:
    """doctor_facts: a facts document (errbook doctor --collect) of the machine the log came from."""
    loaded, errors = entries_mod.load_all(root)
    active = list(entries_mod.active(loaded))
    bonus = None
    if doctor_facts is not None:
        from . import checks, facts as facts_mod
        values = facts_mod.values_of(doctor_facts)
        machine_facts = dict(checks.to_log_facts(values), **(machine_facts or {}))
        bonus = checks.machine_bonus(active, values)
    skipped: list[str] = []
    m = build_matcher(active, skipped)
    errors = list(errors) + skipped
    scan = m.new_scan()
    stats = {"lines": 0, "bytes": 0, "files": 0}
    sources = files or ["-"]
    multi = len(sources) > 1
    head: list = []
    for n, src in enumerate(sources):
        scan.reset_sequences()
        want_head = head if n == 0 else None
        if src == "-":
            f = stdin if stdin is not None else sys.stdin.buffer
            lines, nbytes = linescan.scan_stream(m, f, scan, "stdin" if multi else "", head=want_head)
        else:
            lines, nbytes = scan_file(m, src, scan, src if multi else "", workers, head=want_head)
        stats["lines"] += lines
        stats["bytes"] += nbytes
        stats["files"] += 1
    results = ranking.rank(scan, knowledge(root, active), head=b"".join(head), machine_facts=machine_facts,
                           machine_bonus=bonus)
    facts = logfacts.from_notes(scan.notes)
    if facts:
        stats["environment"] = facts
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
    doctor_facts = None
    if getattr(args, "facts", None):
        from . import facts as facts_mod
        try:
            doctor_facts = facts_mod.load(args.facts)
        except facts_mod.FactsError as e:
            print(f"errbook triage: {e}", file=sys.stderr)
            return 2
    try:
        results, stats, errors = triage_files(root, args.files, doctor_facts=doctor_facts)
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
        if results and results[0]["confidence"] == "likely":
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
    return 0 if results else 1
