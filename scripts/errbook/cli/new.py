"""`errbook new CLASS "title"`: an entry and its runbook with the next free id."""
from __future__ import annotations

import argparse
import json
import sys

from errbook.cli.common import checkout_of
from errbook.cli.exitcodes import ExitCode


def add_parser(sub) -> None:
    s = sub.add_parser("new", help="scaffold an entry and its runbook with the next free id")
    s.add_argument("klass", metavar="CLASS", choices=["compile", "runtime", "performance"])
    s.add_argument("title")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from errbook.kb import scaffold
    try:
        epath, rpath = scaffold.new_entry(checkout_of(args), args.klass, args.title)
    except scaffold.ScaffoldError as e:
        print(f"errbook new: {e}", file=sys.stderr)
        return ExitCode.ERROR
    if args.json:
        print(json.dumps({"entry": str(epath), "runbook": str(rpath)}))
    else:
        print(f"created {epath}\ncreated {rpath}")
    return ExitCode.OK
