"""A message page (errata/messages/<id>.yaml): the message, its causes (each a link to its entry) and the evidence
that tells them apart; and the line an entry page shows for each message it is a cause of.

Free of MkDocs (plugin.py adapts it). Everything from the page's YAML is escaped (escape.py): data, not markup.
"""
from __future__ import annotations

import html

from errbook.machine import checks
from errbook.web import addresses
from errbook.web.escape import RawBlocks, front_matter, inline, link, pre, prose_html
from errbook.web.refs import rel_entry_link

PAGE_DIR = addresses.message_src("x").rsplit("/", 1)[0]          # messages
ENTRY_DIR = addresses.entry_src("x").rsplit("/", 1)[0]            # entries


def _tabs(en: str, zh: str) -> str:
    return '=== "English"\n\n' + "\n".join("    " + ln for ln in en.split("\n")) + \
        '\n\n=== "中文"\n\n' + "\n".join("    " + ln for ln in zh.split("\n")) + "\n"


def _evidence_row(ev: dict, raw: RawBlocks) -> str:
    if "pattern" in ev:
        where = "a line of the same log"
        what = raw.put(pre(ev["pattern"], "eb-regex")) + "\n\nfor example:\n\n" + \
            raw.put(pre(ev["examples"][0]["text"], "eb-log")) + \
            f"\n\n({link('source', ev['examples'][0]['source'])})"
    else:
        where = "a fact of the machine (`errbook triage --facts`, from `errbook doctor --collect`)"
        what = "all of: " + "; ".join(checks.describe(c, code=True) for c in ev["when"])
    return (f"- **{inline(ev['says'])}** ({inline(ev['says_zh'])}) — {where}:\n\n"
            + "\n".join("    " + ln for ln in what.split("\n")) + "\n")


def message_page(d: dict, by_id: dict, raw: RawBlocks) -> str:
    """by_id: the published entries (a cause whose entry is not published is left out)."""
    causes = [c for c in d["causes"] if c["entry"] in by_id]
    md = [front_matter({"title": html.escape(d["title"]), "description": html.escape(d["summary"][:300])}),
          f"# {inline(d['title'])}\n",
          f'<p class="eb-cause" markdown>This message has {len(causes)} known '
          f"cause{'s' if len(causes) != 1 else ''}. `errbook triage` and the "
          f"[paste-your-log page](../{addresses.PAGES['triage']}) rank them by the evidence below.</p>\n",
          _tabs(raw.put(prose_html(d["summary"])), raw.put(prose_html(d["summary_zh"]))),
          "## The message\n"]
    for s in d["signatures"]:
        ex = s["examples"][0]
        md += [raw.put(pre(ex["text"], "eb-log")), f"\n({link('source', ex['source'])})\n"]
    md.append("## Its causes, and what tells them apart\n")
    for n, c in enumerate(causes, 1):
        e = by_id[c["entry"]]
        md.append(f"### {n}. {rel_entry_link(e['id'], e['title'], PAGE_DIR)}\n")
        md.append(f"{inline(e['cause'])}\n" if e.get("cause") else "")
        md += [_evidence_row(ev, raw) for ev in c["evidence"]]
    if d.get("other_causes"):
        md.append("## Also reported, with no entry yet\n")
        md += [f"- {inline(o['says'])} ({inline(o['says_zh'])}): {link('thread', o['source'])}"
               for o in d["other_causes"]]
        md.append("")
    return "\n".join(md) + "\n"


def backlinks(eid: str, pages: list[dict]) -> str:
    """The entry page's note, under its fix box: the messages this entry is one cause of ('' when none)."""
    mine = [p for p in pages if eid in {c["entry"] for c in p["causes"]}]
    if not mine:
        return ""
    items = [link(p["title"], "../" * (ENTRY_DIR.count("/") + 1) + addresses.message_src(p["id"])) for p in mine]
    return ('!!! info "One cause of a message with several"\n    This entry is one of the causes of '
            + "; ".join(items) + ". Its page lists the others and the evidence that tells them apart.\n")
