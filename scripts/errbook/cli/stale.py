"""`errbook stale`: entries due for review."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

from errbook.cli.common import iso_date, root_of
from errbook.cli.exitcodes import ExitCode
from errbook.common import term


def add_parser(sub) -> None:
    s = sub.add_parser("stale", help="entries due for review (180 days, or a range checked before the newest release)",
                       description="Lists entries not reviewed in 180 days, and entries with an applies_to range "
                                   "whose checked_at is older than its component's newest release in "
                                   "errata/releases.yaml (a range that ends at a released fix, fixed_in, is "
                                   "settled; one without checked_at or of an untracked component is due). "
                                   "Exit 1 when anything is due.")
    s.add_argument("--json", action="store_true")
    s.add_argument("--today", type=iso_date, metavar="YYYY-MM-DD", help="evaluate as of this date (default: today)")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from errbook.kb import entries, stale
    root = root_of(args)
    loaded, _ = entries.load_all(root)
    today = args.today or dt.date.today()
    try:
        releases = stale.load_releases(root)
    except (ValueError, OSError) as e:
        print(f"errbook stale: {e}", file=sys.stderr)
        return ExitCode.ERROR
    rows = stale.due(loaded, releases, today)
    if args.json:
        print(json.dumps({"due": rows, "today": str(today)}, indent=1))
    else:
        for r in rows:
            print(f"{r['id']}  {r['file']}")
            for why in r["reasons"]:
                print(f"    {why}")
        print(f"{term.plural(len(rows), 'entry', 'entries')} due for review", file=sys.stderr)
    return ExitCode.FINDINGS if rows else ExitCode.OK
