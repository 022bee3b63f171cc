"""`errbook show ID`: an entry in the terminal, fix first, as its page on the site orders it.

The words come from the site's own helpers (web/phrases.py: cause line, error texts, version ranges; web/status.py:
each tier's verification verdict from the ledger, counting only records at the entry's current content digest),
so the terminal and the page cannot disagree.
"""
from __future__ import annotations

import argparse
import difflib
import json
import shutil
import sys
import textwrap
from pathlib import Path

from errbook.cli.common import root_of
from errbook.cli.exitcodes import ExitCode
from errbook.common import term
from errbook.kb import fixsteps

WIDTH_MAX = 100


def add_parser(sub) -> None:
    s = sub.add_parser("show", help="read an entry in the terminal, fix first (by id or alias)",
                       description="Prints an entry the way its page on the site reads: title and cause, the fix "
                                   "steps with their code, then summary, symptoms, the error text it recognises, "
                                   "the versions it applies to (with the release each range was checked at), "
                                   "references and the runbook with its verification status from the ledger. "
                                   "Exit 2 when no entry has that id or alias (near ids are suggested).")
    s.add_argument("entry", metavar="ID", help="an entry id (RMN-0090) or an alias (hipErrorNoBinaryForGpu)")
    s.add_argument("--lang", choices=("en", "zh"), default="en",
                   help="language of the title, cause, summary, symptoms and fix steps (default en)")
    s.add_argument("--json", action="store_true",
                   help="print the entry's data with its verification status and runbook command as JSON")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from errbook.kb import entries as entries_mod
    root = root_of(args)
    loaded, _errors = entries_mod.load_all(root)
    entry = find(loaded, args.entry)
    if entry is None:
        print(f"errbook show: no entry with the id or alias {args.entry!r}" + _suggest(loaded, args.entry),
              file=sys.stderr)
        return ExitCode.ERROR
    status = verification(entry, root)
    if args.json:
        print(json.dumps({"entry": entry.data, "file": entry.rel,
                          "verification": status, "runbook_command": f"errbook run {entry.id}"},
                         ensure_ascii=False, indent=1, default=str))
        return ExitCode.OK
    width = min(WIDTH_MAX, shutil.get_terminal_size((WIDTH_MAX, 24)).columns)
    for line in render(entry, status, args.lang, term.style_for(sys.stdout, args.no_color), width):
        print(line)
    return ExitCode.OK


def find(loaded: list, wanted: str):
    """The entry whose id, else whose alias, is `wanted` (case-insensitive)."""
    w = wanted.strip().casefold()
    for e in loaded:
        if e.id.casefold() == w:
            return e
    for e in loaded:
        if any(str(a).casefold() == w for a in e.get("aliases") or []):
            return e
    return None


def _suggest(loaded: list, wanted: str) -> str:
    names = {e.id: e.id for e in loaded}
    names.update({str(a): e.id for e in loaded for a in e.get("aliases") or []})
    near = difflib.get_close_matches(wanted, list(names), n=5, cutoff=0.6)
    if not near:
        near = difflib.get_close_matches(wanted.upper(), list(names), n=5, cutoff=0.6)
    if not near:
        return "; try errbook search \"words\""
    shown = [n if names[n] == n else f"{n} ({names[n]})" for n in near]
    return "; did you mean: " + ", ".join(shown)


def verification(entry, root: Path) -> dict:
    """How far the entry is verified, in one word-group (web/status.verification_state), and each declared tier's
    verdict as the entry's page states it (web/status.tier_summary), with the runs behind it."""
    from errbook.kb import verified
    from errbook.runbooks import ledger
    from errbook.web import status
    records, _problems = ledger.read(ledger.default_path(root))
    mine = verified.mark_current([r for r in records if r.get("entry") == entry.id],
                                 {entry.id: verified.digest(entry, root)})
    latest = ledger.latest_by_entry_platform(mine).get(entry.id, {})
    rows = {ts["tier"]: ts["rows"] for ts in status.tier_status(entry, latest)}
    tiers = [{"tier": t, "state": cls, "says": words,
              "runs": [{k: r[k] for k in ("where", "outcome", "date", "current")} for r in rows.get(t, [])]}
             for t, cls, words in status.tier_summary(entry, latest)]
    return {"state": status.verification_state(entry, latest), "tiers": tiers}


_STATE_STYLE = {"passed": "green", "skipped": "yellow", "none": "dim"}


def render(entry, status: dict, lang: str, style: term.Style, width: int) -> list[str]:
    """The entry's lines: fix first, then what it is, what it recognises, where it applies, sources, verification."""
    from errbook.web import phrases
    d = entry.data
    zh = lang == "zh"

    def para(text: str, indent: str = "  ", rest: str | None = None) -> list[str]:
        wide = any("\u2e80" <= ch <= "\uffef" for ch in str(text))      # CJK: two columns a character
        return textwrap.wrap(" ".join(str(text).split()), width * 11 // 20 if wide else width, initial_indent=indent,
                             subsequent_indent=indent if rest is None else rest,
                             break_on_hyphens=False, break_long_words=False) or [indent]

    def head(words: str) -> list[str]:
        return ["", style(words, "bold", "blue")]

    title = (d.get("title_zh") if zh else None) or d["title"]
    out = [style(f"{d['id']} · {title}", "bold"),
           f"  {phrases.CLASSES.get(d['class'], (d['class'],))[0]} · {d.get('reviewed') or str(d['modified'])[:10]}"]
    if d.get("withdrawn"):
        out.append(style(f"  WITHDRAWN on {str(d['withdrawn'])[:10]}: this entry no longer applies; its id stays "
                         "reserved.", "red", "bold"))
    out += para((phrases.cause_line_zh(d) if zh else phrases.cause_line(d)), "  ")
    confirm, fixes = fixsteps.split(d["fix"])       # the page's split: the checks, then the changes
    parts = (("Confirm · 确认" if zh else "Confirm", confirm), ("Fix · 解决" if zh else "Fix", fixes))
    for words, steps in parts:
        if steps:
            out += head(words)
        for i, step in enumerate(steps, 1):
            out += _step(step, i, zh, style, para)
    out += head("Summary")
    out += para((d.get("summary_zh") if zh else None) or d["summary"])
    out += head("Symptoms")
    for s in ((d.get("symptoms_zh") if zh else None) or d["symptoms"]):
        out += para(s, "  - ", "    ")
    texts = list(dict.fromkeys([a for a in phrases.public_aliases(d) if phrases.identifier_like(a)]
                               + phrases.error_texts(d)))
    if texts:
        out += head("Error text it recognises")
        out += [f"  {t}" for t in texts]
    out += _applies(d, head, para)
    out += head("References")
    for r in d.get("references") or []:
        out += para(f"{r['title']} ({r['kind']})", "  - ", "    ")
        out.append("    " + style(str(r["url"]), "blue"))
    out += head("Verification")
    rb = (d.get("verification") or {}).get("runbook", "")
    out.append(f"  runbook {rb}: {style('errbook run ' + d['id'], 'bold')}")
    out.append(f"  {status['state']}")
    for s in status["tiers"]:
        out.append("    " + style(s["says"], _STATE_STYLE.get(s["state"], "red")))
    return out


def _step(step: dict, i: int, zh: bool, style: term.Style, para) -> list[str]:
    """One numbered step: its text, its code, and for a check the output that confirms the diagnosis."""
    from errbook.web import phrases
    text = (step.get("step_zh") if zh else None) or step["step"]
    lines = para(text, f"  {i}. ", "     ")
    out = [style(ln[:5], "green") + ln[5:] if k == 0 else ln for k, ln in enumerate(lines)]
    code = phrases.fix_code(step)
    if code:
        out += [style("       " + ln, "cyan") for ln in code[1].rstrip("\n").splitlines()]
    if step.get("expect"):
        expect = (step.get("expect_zh") if zh else None) or step["expect"]
        out += para(f"{'若是此问题，会看到：' if zh else 'Expected if this is the problem:'} {expect}", "     ")
    return out


def _applies(d: dict, head, para) -> list[str]:
    from errbook.web import phrases
    rows = d.get("applies_to") or []
    if not rows:
        ph = phrases.applies_phrases(d)
        return (head("Applies to") + [f"  {p}" for p in ph]) if ph else []
    out = head("Applies to")
    for a in rows:
        s = f"{phrases.component_name(a['component'])} {phrases.version_words(a['versions'])}"
        if a.get("fixed_in"):
            s += f" (changed in {a['fixed_in']})"
        if a.get("checked_at"):
            s += f"; checked at {a['checked_at']}"
        out += para(s, "  - ", "    ")
    return out
