"""`errbook validate` for message pages (errata/messages/*.yaml): what kb/messages.py's schema cannot express.

Each finding names file:line:field. A page's causes are active entries, each named once; evidence ids are unique
in the page; every pattern (signatures and evidence) is in the portable subset, matches each of its examples and
none of its counter-examples as triage matches a log (triage.matcher; kb/sigexamples.py, the entries' own rule);
every fact condition passes the machine checks' own validation (machine.checks), so it means in a page exactly what
it means in an entry's triggers.checks.
"""
from __future__ import annotations

from pathlib import Path

from errbook.kb import entries as entries_mod
from errbook.kb import messages, regexsubset, sigexamples
from errbook.kb.usable import Finding, as_list, field_name
from errbook.machine import checks
from errbook.triage import matcher


def _pattern_findings(p: messages.MessagePage, base: tuple, item: dict, what: str) -> list[Finding]:
    """The item's pattern compiles in the portable subset, matches every example and no counter-example."""
    pat, ic = item.get("pattern"), bool(item.get("ignore_case"))
    if not isinstance(pat, str):
        return []                                       # the schema finding names it
    try:
        regexsubset.check(pat, ic)
        sig = matcher.build_signature("RMN-0000", {"id": "x", "pattern": pat, "ignore_case": ic})
    except Exception as err:                            # SubsetError, or re2.error (no stable public base)
        return [Finding(p.rel, p.line_of(base + ("pattern",)), field_name(base + ("pattern",)),
                        f"bad pattern: {err}")]
    m = matcher.Matcher([sig])
    return sigexamples.example_findings(p.rel, p.line_of, base, f"{what} '{item.get('id')}'", item, m.match_text)


def _condition_findings(p: messages.MessagePage, base: tuple, ev: dict) -> list[Finding]:
    """An evidence's `when` checked as a machine check of an entry (fact names, operators, arguments)."""
    when = ev.get("when")
    if not isinstance(when, list):
        return []
    probs = checks.validate_entry({"triggers": {"checks": [{"id": "x", "when": when}]}})
    out = []
    for path, msg in probs:
        fpath = base + tuple(path[3:])                  # ('triggers', 'checks', 0, 'when', j, ...) -> ('when', j, ...)
        out.append(Finding(p.rel, p.line_of(fpath), field_name(fpath), msg))
    return out


def _cause_findings(p: messages.MessagePage, active: dict[str, str]) -> list[Finding]:
    out: list[Finding] = []
    seen_entries: set[str] = set()
    seen_ev: set[str] = set()
    for i, cause in enumerate(as_list(p.get("causes"))):
        if not isinstance(cause, dict):
            continue
        base = ("causes", i)
        eid = cause.get("entry")
        if isinstance(eid, str):
            why = active.get(eid, f"no entry with id '{eid}'")
            if why:
                out.append(Finding(p.rel, p.line_of(base + ("entry",)), field_name(base + ("entry",)), why))
            if eid in seen_entries:
                out.append(Finding(p.rel, p.line_of(base + ("entry",)), field_name(base + ("entry",)),
                                   f"{eid} is already a cause of this message"))
            seen_entries.add(eid)
        for k, ev in enumerate(as_list(cause.get("evidence"))):
            if not isinstance(ev, dict):
                continue
            eb = base + ("evidence", k)
            evid = ev.get("id")
            if isinstance(evid, str):
                if evid in seen_ev:
                    out.append(Finding(p.rel, p.line_of(eb + ("id",)), field_name(eb + ("id",)),
                                       f"duplicate evidence id '{evid}'"))
                seen_ev.add(evid)
            out += _pattern_findings(p, eb, ev, "evidence")
            out += _condition_findings(p, eb, ev)
    return out


def _entry_states(loaded: list[entries_mod.Entry]) -> dict[str, str]:
    """entry id -> '' when it may be a cause, else why not."""
    return {e.id: ("" if not e.withdrawn else f"{e.id} is withdrawn: a message page names active entries only")
            for e in loaded if isinstance(e.id, str)}


def page_findings(p: messages.MessagePage, loaded: list[entries_mod.Entry]) -> list[Finding]:
    schema_f = messages.schema_findings(p)
    out = list(schema_f)
    if isinstance(p.get("id"), str) and p.path.stem != p.id:
        out.append(Finding(p.rel, p.line_of(("id",)), "id", f"file name must be {p.id}.yaml"))
    for i, sig in enumerate(as_list(p.get("signatures"))):
        if isinstance(sig, dict):
            out += _pattern_findings(p, ("signatures", i), sig, "signature")
    out += _cause_findings(p, _entry_states(loaded))
    return out


def validate(root: Path, loaded: list[entries_mod.Entry]) -> list[Finding]:
    """Every finding of every message page, and one for each file that does not load."""
    pages, errors = messages.load_all(root)
    findings = list(errors)
    seen: dict[str, str] = {}
    for p in pages:
        findings += page_findings(p, loaded)
        if isinstance(p.get("id"), str):
            if p.id in seen:
                findings.append(Finding(p.rel, p.line_of(("id",)), "id", f"duplicate message id (also {seen[p.id]})"))
            seen.setdefault(p.id, p.rel)
    return findings
