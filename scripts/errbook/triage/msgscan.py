"""Reading for triage/messages.py: the message pages triage may use, and a second pass over the log for the
evidence of the page that decided the answer.

The pass runs only when a multi-cause message decided the answer, and reads the log as the first pass did
(pipeline.scan_file: the same encodings, cleaning, line numbers and parallel scan of a big file), with a matcher
made of the page's evidence patterns alone.
"""
from __future__ import annotations

from pathlib import Path

from errbook.kb import drafts, messages, usable
from errbook.kb import entries as entries_mod
from errbook.triage import matcher as matcher_mod
from errbook.triage import messages as msg
from errbook.triage import pipeline


def _readable_entries(root: Path) -> dict:
    good, _ = usable.usable_entries(root)
    return {e.id: e for e in entries_mod.active(good) if not drafts.is_draft(e.data)}


def _readable(e) -> bool:
    """What usable.usable_entries and the pipeline ask of an entry, for one entry."""
    return (isinstance(e, entries_mod.Entry) and not e.withdrawn and not drafts.is_draft(e.data)
            and not usable.data_findings(e, unreadable_only=True) and not usable.schema_findings(e))


def _cause_entries(root: Path, ids: list[str]) -> dict | None:
    """The page's cause entries, read alone (reading every entry again would double triage's start-up), or None
    when one of them is not an entry triage reads."""
    files = {p.stem: p for p in entries_mod.entry_files(root) if p.stem in ids}
    out = {i: entries_mod.load_file(files[i], root) for i in ids if i in files}
    return out if len(out) == len(ids) and all(_readable(e) for e in out.values()) else None


def usable_pages(root: Path, entries: dict | None = None) -> list[dict]:
    """The pages whose causes are all entries triage reads (active, finished, passing the schema)."""
    ids = set(entries if entries is not None else _readable_entries(root))
    return [p.data for p in messages.usable_pages(root, ids)]


def evidence_matcher(page: dict, message: bool = False) -> tuple[matcher_mod.Matcher, list[str]]:
    """A matcher whose signatures are the page's log evidence, all under one name (so none outranks another), and
    the evidence id of each signature by index. message: the page's own signatures too, as msg.MESSAGE_ID."""
    pats = msg.log_patterns(page)
    if message:
        pats += [(msg.MESSAGE_ID, s["pattern"], bool(s.get("ignore_case"))) for s in page["signatures"]]
    sigs = [matcher_mod.build_signature("MSG", {"id": evid, "pattern": p, "ignore_case": ic})
            for evid, p, ic in pats]
    return matcher_mod.Matcher(sigs), [evid for evid, _, _ in pats]


def _found(scan: matcher_mod.Scan, ids: list[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for i, st in scan.single.items():
        hits = [chain[0] for chain in st[2] + st[3]][:msg.MAX_LINES]
        got = [{"line": h.line, "text": h.text, **({"source": h.source} if h.source else {})} for h in hits]
        prev = out.get(ids[i])          # several signatures under one id (the message's): the first line wins
        if prev is None or (got and (got[0].get("source", ""), got[0]["line"]) < (prev[0].get("source", ""),
                                                                                   prev[0]["line"])):
            out[ids[i]] = got
    return out


def find_evidence(page: dict, files: list[str], message: bool = False) -> dict[str, list[dict]]:
    """evidence id -> the first lines of the log that match it ({line, text[, source]}); message: the page's
    message's first line too, as msg.MESSAGE_ID."""
    m, ids = evidence_matcher(page, message)
    if not ids:
        return {}
    scan = m.new_scan()
    multi = len(files) > 1
    for src in files:
        scan.reset_sequences()
        pipeline.scan_file(m, src, scan, src if multi else "")
    return _found(scan, ids)


def find_evidence_text(page: dict, text: str, source: str = "", message: bool = False) -> dict[str, list[dict]]:
    """find_evidence over a text in memory (a pasted log, a truth-table row)."""
    m, ids = evidence_matcher(page, message)
    scan = m.new_scan()
    m.feed_text(scan, text, source)
    return _found(scan, ids)


def _block(page: dict, line: dict | None, find, values: dict | None) -> dict | None:
    found = find(line is None)
    if line is None:                # a cause added for the message alone (pageonly.py): the message's first line
        lines = found.pop(msg.MESSAGE_ID, None)
        if not lines:
            return None
        line = lines[0]
    return msg.rank(page, found, values, line)


def block_of(page: dict, line: dict | None, files: list[str], values: dict | None) -> dict | None:
    """The block of a deciding page (msg.deciding_page's pair) over these files, or None when its line is gone."""
    return _block(page, line, lambda message: find_evidence(page, files, message), values)


def block_of_text(page: dict, line: dict | None, text: str, values: dict | None) -> dict | None:
    """block_of over a text in memory."""
    return _block(page, line, lambda message: find_evidence_text(page, text, message=message), values)


def explain(root: Path, results: list[dict], files: list[str], values: dict | None) -> dict | None:
    """The message block for these results (triage/messages.py), or None when no multi-cause message decided."""
    if not msg.answers_by_message(results):
        return None                             # no diagnosis, no deciding line: nothing to read
    # the pages alone first (a few small files): the entries are read again only when a page decided
    pages = [p.data for p in messages.readable_pages(root)]
    hit = msg.deciding_page(pages, results)
    if hit is None:
        return None
    page, line = hit
    entries = _cause_entries(root, messages.MessagePage.cause_ids_of(page))
    if entries is None:
        return None                             # a cause being edited or withdrawn: validate says which
    block = block_of(page, line, files, values)
    if block is None:
        return None
    for c in block["causes"]:
        c.update(title=entries[c["entry"]]["title"], title_zh=entries[c["entry"]]["title_zh"])
    return block
