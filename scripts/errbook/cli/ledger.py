"""`errbook ledger`: the verification ledger, its bad lines, and `--merge SPOOL` of a fleet run."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from errbook.cli.common import checkout_of, positive_int
from errbook.cli.exitcodes import ExitCode
from errbook.common import term


def add_parser(sub) -> None:
    s = sub.add_parser("ledger", help="show the verification ledger")
    s.add_argument("--json", action="store_true")
    s.add_argument("--last", type=positive_int, default=30, help="how many of the newest records to list (default 30)")
    s.add_argument("--merge", metavar="SPOOL", help="merge the finished tasks of an errbook run --slurm spool "
                   "into the ledger (idempotent: a task already merged is not added again)")
    s.add_argument("--settle", type=float, default=10, help=argparse.SUPPRESS)
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    root = checkout_of(args)
    if args.merge:
        return merge(Path(args.merge).resolve(), root, args.settle, args.json)
    from errbook.kb import entries, verified
    from errbook.runbooks import ledger
    recs, problems = ledger.read(ledger.default_path(root))
    loaded, _ = entries.load_all(root)
    # `current`: made at the entry's present content digest; any other record verified an earlier version.
    recs = verified.mark_current(recs, {e.id: verified.digest(e, root) for e in loaded})
    for p in problems:
        print(f"ledger: {p}", file=sys.stderr)
    if args.json:
        print(json.dumps({"records": recs, "problems": problems}, indent=1))
    else:
        for r in recs[-args.last:]:
            tiers = " ".join(f"{t}:{v['outcome']}" for t, v in r.get("tiers", {}).items())
            print(f"{r['date']}  {r['entry']}  {r['outcome']:<8} {tiers}  [{r.get('platform_label', '')}]"
                  + ("" if r["current"] else "  (verified an earlier version of the entry)"))
    return ExitCode.FINDINGS if problems else ExitCode.OK


def merge(spool: Path, root: Path, settle: float, as_json: bool) -> int:
    """`errbook ledger --merge SPOOL`"""
    from errbook.runbooks import fleetmerge
    from errbook.runbooks.spool import SpoolError
    try:
        res = fleetmerge.merge(spool, root, None, settle=settle)
    except (SpoolError, OSError) as e:
        print(f"errbook ledger: {e}", file=sys.stderr)
        return ExitCode.ERROR
    rc = report_merge(res, as_json, spool)
    return ExitCode.ERROR if rc == 2 else ExitCode.OK


def report_merge(res: dict, as_json: bool, spool: Path) -> int:
    """Print what a merge of a spool added, and return 2 on problems, 1 when a merged run failed, else 0."""
    recs = res["added"]
    if as_json:
        print(json.dumps({"spool": str(spool), **{k: v for k, v in res.items()}}, indent=1, ensure_ascii=False))
    else:
        for r in res["added"]:
            s = r.get("slurm", {})
            print(f"merged {s.get('job', '?'):>10} {r['entry']} {r['outcome']:<8} on {s.get('node') or '?'}"
                  + (f"  ({term.cut(r['reason'], 200)})" if r.get("reason") and r["outcome"] != "passed" else ""))
        print(f"ledger: {term.plural(len(res['added']), 'new record')}, {len(res['already'])} already merged, "
              f"{term.plural(len(res['unfinished']), 'task')} not finished"
              + (f", {term.plural(len(res['problems']), 'problem')}" if res["problems"] else ""))
        for p in res["problems"]:
            print(f"  problem: {p}", file=sys.stderr)
        for u in res["unfinished"]:
            print(f"  not finished: {u}", file=sys.stderr)
    bad = [r for r in recs if r["outcome"] not in ("passed", "skipped")]
    if res["problems"]:
        return 2
    return 1 if bad else 0
