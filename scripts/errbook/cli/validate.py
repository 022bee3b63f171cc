"""`errbook validate`: schema and cross-checks; every finding names file:line: field."""
from __future__ import annotations

import argparse
import json
import sys
import time

from errbook.cli.common import root_of
from errbook.cli.exitcodes import ExitCode
from errbook.common import term


def add_parser(sub) -> None:
    s = sub.add_parser("validate", help="check every entry against the schema and the cross-checks")
    s.add_argument("--json", action="store_true", help="machine-readable findings")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from errbook.kb import validate
    t0 = time.perf_counter()
    loaded, findings = validate.validate(root_of(args))
    dt = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"entries": len(loaded), "findings": validate.findings_json(findings),
                          "seconds": round(dt, 3)}, indent=1, ensure_ascii=False))
    else:
        for f in findings:
            print(f)
        print(f"{term.plural(len(loaded), 'entry', 'entries')}, {term.plural(len(findings), 'finding')} in {dt:.2f}s",
              file=sys.stderr)
    return ExitCode.FINDINGS if findings else ExitCode.OK
