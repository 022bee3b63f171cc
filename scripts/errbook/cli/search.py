"""`errbook search "words"`: the entries the site's search box would list for these words, best first."""
from __future__ import annotations

import argparse
import json
import sys

from errbook.cli.common import positive_int, root_of
from errbook.cli.exitcodes import ExitCode
from errbook.common import term


def add_parser(sub) -> None:
    s = sub.add_parser("search", help="search the entries as the site's search box does (lunr, same index rules)",
                       description="Ranks the entries for some words with the site search's rules (web/"
                                   "searchindex.py): mkdocs.yml's separator and field boosts, complete words matched "
                                   "exactly and only a last word being typed as a prefix, contractions keep their "
                                   "verb, words found close together rank higher. Prints id, title, class and the "
                                   "index words that matched. Exit 0 when something was found, 1 when nothing was.")
    s.add_argument("words", nargs="+", help="what to search for: words, an error message, a pasted log line")
    s.add_argument("--top", type=positive_int, default=5, help="how many entries to show, 1 or more (default 5)")
    s.add_argument("--json", action="store_true", help='print {"query": ..., "results": [...]} best first')
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from errbook.web import searchindex
    query = " ".join(args.words)
    site = searchindex.for_checkout(root_of(args))
    hits = site.search(query, args.top)
    rows = [{"id": h["id"], "title": site.entries[h["id"]]["title"], "class": site.entries[h["id"]]["class"],
             "score": round(h["score"], 3), "matched": h["words"]} for h in hits]
    if args.json:
        print(json.dumps({"query": query, "results": rows}, ensure_ascii=False, indent=1))
    else:
        style = term.style_for(sys.stdout, args.no_color)
        if not rows:
            print(f"nothing found for {query!r}: try fewer or other words, or errbook triage for a whole log")
        for i, r in enumerate(rows, 1):
            print(f"{i}. {style(r['id'], 'bold')}  {term.cut(r['title'], 110)}  [{r['class']}]")
            print(style(f"     matched: {', '.join(r['matched'])}", "dim"))
    return ExitCode.OK if rows else ExitCode.FINDINGS
