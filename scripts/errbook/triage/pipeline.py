"""A log through both stages: stream logs of any size and rank the entries they point to (`errbook triage`).

Memory stays flat (linescan.py); a big regular file is scanned by one process per core (parallel.py). First
stage: signatures (matcher.py); second stage when none matched: likely entries by lexical similarity
(retrieval.py over corpus.py's index). Environment evidence in the log re-ranks both (environment.py, ranking.py);
so does a facts file of the machine the log came from (machine.checks).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from errbook.kb import drafts, usable
from errbook.kb import entries as entries_mod
from errbook.kb import messages as kb_messages
from errbook.triage import corpus, environment, linescan, multicause, pageonly, parallel, ranking, retrieval, textenc
from errbook.triage import matcher as matcher_mod

EXTRAS = [retrieval.SAMPLE_EXTRA, *environment.EXTRAS]


def message_pages(root: Path, active) -> list[dict]:
    """The message pages triage uses: readable, every cause one of these entries (kb/messages.usable_pages)."""
    return [p.data for p in kb_messages.usable_pages(root, {e.id for e in active if not e.withdrawn})]


def build_matcher(active, skipped: list | None = None, pages: Sequence[dict] = ()) -> matcher_mod.Matcher:
    """The entries' signatures, the notes ranking reads, and the evidence and message lines of these message pages
    (multicause.py, pageonly.py: give the pages the Knowledge has, or a message alone stays a diagnosis and a page's
    message without an entry's signature stays unanswered)."""
    extras = EXTRAS + multicause.extras(pages) + pageonly.extras(pages)
    return matcher_mod.Matcher.from_entries(active, skipped=skipped, extras=extras)


def knowledge(root: Path, active, pages: list[dict] | None = None) -> ranking.Knowledge:
    """pages: message_pages(root, active) when not given."""
    return ranking.Knowledge(active, index=lambda: corpus.shipped_index(root, active),
                             pages=message_pages(root, active) if pages is None else pages)


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
        stream = textenc.PipeReader(f.fileno()) if textenc.waits(f.fileno()) else f   # a FIFO: Ctrl-C ends the wait
        return linescan.scan_stream(m, stream, scan, source, info=info)


def _stdin():
    """Standard input as a binary stream; a pipe through PipeReader, so Ctrl-C ends a wait on its writer."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return sys.stdin.buffer
    return textenc.PipeReader(fd) if textenc.waits(fd) else sys.stdin.buffer


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
    good, errors = usable.usable_entries(root)
    active = [e for e in entries_mod.active(good) if not drafts.is_draft(e.data)]   # as the paste page: no drafts
    bonus = None
    skipped: list[str] = []
    if doctor_facts is not None:
        from errbook.machine import checks
        from errbook.machine import facts as facts_mod
        values = facts_mod.values_of(doctor_facts)
        machine_facts = dict(checks.to_log_facts(values), **(machine_facts or {}))
        bonus = checks.machine_bonus(active, values, skipped)
    know = knowledge(root, active)
    m = build_matcher(active, skipped, know.pages)
    errors = list(errors) + skipped
    scan = m.new_scan()
    stats: dict[str, Any] = {"lines": 0, "bytes": 0, "files": 0}
    sources = files or ["-"]
    multi = len(sources) > 1
    for src in sources:
        scan.reset_sequences()
        info: dict = {}
        if src == "-":
            f = stdin if stdin is not None else _stdin()
            lines, nbytes = linescan.scan_stream(m, f, scan, "stdin" if multi else "", info=info)
        else:
            lines, nbytes = scan_file(m, src, scan, src if multi else "", workers, info)
        _note_encoding(src, info)
        stats["lines"] += lines
        stats["bytes"] += nbytes
        stats["files"] += 1
    results = ranking.rank(scan, know, machine_facts=machine_facts, machine_bonus=bonus)
    facts = environment.from_notes(scan.notes)
    if facts:
        stats["environment"] = facts
    if not ranking.answered(results):    # no answer: what to search for
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
