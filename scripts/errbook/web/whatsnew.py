"""The "What's new" page and its Atom feed, from the entries' own dates and the ledger (never git: a build from an
export or a shallow clone says the same).

Four kinds of news:
- new: an entry's `published`;
- changed: its `modified`, when on a later day than `published` (entries keep no changelog, so the item says when, and
  the entry page shows the current text);
- reviewed: its `reviewed` day, when after the day it was published (every statement re-checked against sources);
- verified: ledger records at the entry's *current* digest (verified.mark_current sets `current`), one item per
  entry and day, naming each platform and its outcome.
Generated here rather than by a maintained plugin: mkdocs-rss-plugin dates pages by their files' git commits (these
pages are generated, their dates live in the entries) and Material's blog plugin needs hand-written posts.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass

from errbook.machine import fingerprint
from errbook.web import addresses
from errbook.web.escape import front_matter, inline

ATOM = "http://www.w3.org/2005/Atom"
FEED_ITEMS = 50          # a reader polls the feed; older items stay on the page
PAGE_ITEMS = 300         # the page's length; each entry page keeps its own dates
KINDS = {"new": "New", "changed": "Changed", "reviewed": "Reviewed", "verified": "Verified"}   # order within a day
_XML_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")   # not allowed in XML 1.0


@dataclass(frozen=True)
class Item:
    date: str        # RFC 3339 UTC, YYYY-MM-DDTHH:MM:SSZ
    kind: str        # a key of KINDS
    eid: str
    title: str
    detail: str

    @property
    def day(self) -> str:
        return self.date[:10]


def _verified(records: list[dict], titles: dict[str, str]) -> list[Item]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        if r.get("current") is True and r.get("entry") in titles:
            groups.setdefault((r["entry"], str(r["date"])[:10]), []).append(r)
    out = []
    for (eid, day), recs in groups.items():
        last: dict[str, str] = {}                      # platform -> outcome of its last run that day
        for r in recs:
            last[str(r.get("platform_label") or fingerprint.label(r.get("fingerprint") or {}))] = str(r["outcome"])
        runs = "; ".join(f"{p}: {o}" for p, o in sorted(last.items()))
        out.append(Item(max(str(r["date"]) for r in recs), "verified", eid, titles[eid],
                        f"Runbook run at the entry's current content on {day} ({runs})."))
    return out


def items(entries: list, records: list[dict]) -> list[Item]:
    """Every news item, newest first (ties: KINDS order, then entry id)."""
    out: list[Item] = []
    for e in entries:
        pub, mod, rev = str(e.get("published") or ""), str(e.get("modified") or ""), str(e.get("reviewed") or "")
        title = str(e.get("title") or e.id)
        if pub:
            out.append(Item(pub, "new", e.id, title, f"Published on {pub[:10]}."))
        if mod[:10] > pub[:10]:          # a same-day edit is part of the New item
            out.append(Item(mod, "changed", e.id, title, f"Modified on {mod[:10]}; the entry page shows the "
                                                         "current text."))
        if rev and rev > pub[:10]:
            out.append(Item(f"{rev}T00:00:00Z", "reviewed", e.id, title,
                            f"Every statement re-checked against its sources on {rev}."))
    out += _verified(records, {e.id: str(e.get("title") or e.id) for e in entries})
    order = list(KINDS)
    out.sort(key=lambda i: (order.index(i.kind), i.eid))
    out.sort(key=lambda i: i.date, reverse=True)        # stable: at one moment, by kind and id
    return out


def page(news: list[Item]) -> str:
    feed = addresses.GENERATED["feed"]
    md = [front_matter({"title": "What's new", "search": {"exclude": True}}),
          "# What's new · 最近更新\n",
          "New entries, changed entries, entries whose statements were re-checked against their sources "
          "(`reviewed`), and entries whose runbook ran again at their current content (the "
          f"[verification ledger]({addresses.PAGES['matrix']})). Built from each entry's `published`, `modified` "
          "and `reviewed` dates and the ledger, newest first.\n",
          f"A team can watch the [Atom feed]({feed}) instead of the repository: any feed reader, or a chat "
          f"channel's RSS/Atom integration, shows the newest {FEED_ITEMS} items.\n"]
    if len(news) > PAGE_ITEMS:
        md.append(f"The newest {PAGE_ITEMS} of {len(news)} items; each entry page shows its own dates.\n")
    day = ""
    for i in news[:PAGE_ITEMS]:
        if i.day != day:
            day = i.day
            md.append(f"\n## {day}\n")
        stop = "" if i.title.rstrip()[-1:] in ".?!" else "."
        md.append(f"- **{KINDS[i.kind]}** [{i.eid}]({addresses.entry_src(i.eid)}): {inline(i.title)}{stop} "
                  f"{inline(i.detail)}")
    if not news:
        md.append("Nothing published yet.")
    return "\n".join(md) + "\n"


def _text(parent: ET.Element, tag: str, text: str, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
    el.text = _XML_BAD.sub("", text)
    return el


def atom(news: list[Item], url: Callable[[str], str]) -> str:
    """Atom 1.0 of the newest FEED_ITEMS items. `url` turns a source path under docs/ into its absolute URL."""
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    self_url, page_url = url(addresses.GENERATED["feed"]), url(addresses.GENERATED["whats_new"])
    _text(feed, "id", self_url)
    _text(feed, "title", "errbook: what's new")
    _text(feed, "subtitle", "New, changed, reviewed and re-verified entries of the ROCm migration error notebook")
    # the newest item's date, not the build time: an unchanged knowledge base gives the same feed
    _text(feed, "updated", news[0].date if news else "1970-01-01T00:00:00Z")
    ET.SubElement(feed, f"{{{ATOM}}}link", {"rel": "self", "type": "application/atom+xml", "href": self_url})
    ET.SubElement(feed, f"{{{ATOM}}}link", {"rel": "alternate", "type": "text/html", "href": page_url})
    _text(ET.SubElement(feed, f"{{{ATOM}}}author"), "name", "errbook")
    for i in news[:FEED_ITEMS]:
        entry_url = url(addresses.entry_src(i.eid))
        el = ET.SubElement(feed, f"{{{ATOM}}}entry")
        _text(el, "id", f"{entry_url}#{i.kind}-{i.date}")      # stable: one id per entry, kind and moment
        _text(el, "title", f"{KINDS[i.kind]}: {i.eid} {i.title}")
        _text(el, "updated", i.date)
        ET.SubElement(el, f"{{{ATOM}}}link", {"rel": "alternate", "type": "text/html", "href": entry_url})
        _text(el, "summary", i.detail)
    return ET.tostring(feed, encoding="unicode", xml_declaration=True) + "\n"
