"""`errbook doctor`: which known problems this machine (or a saved facts file's machine) is exposed to."""
from __future__ import annotations

import argparse
import json
import os
import sys

from errbook.cli.common import root_of
from errbook.cli.exitcodes import ExitCode


def add_parser(sub) -> None:
    s = sub.add_parser("doctor", help="which known problems this machine is exposed to (evidence, fix, runbook)")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--collect", action="store_true",
                   help="print the collected facts as JSON (save them: errbook doctor --collect > facts.json)")
    g.add_argument("--facts", metavar="FACTS.json",
                   help="evaluate a saved facts file instead of this machine ('-' = stdin)")
    g.add_argument("--list-facts", action="store_true", help="the fact names checks may use, their types and sources")
    s.add_argument("--json", action="store_true", help="machine-readable report")
    s.add_argument("--python", help="probe this Python interpreter's PyTorch/Triton (default: the one running errbook)")
    s.add_argument("--timeout", type=float, default=4.0, help="seconds for the slowest probe (default 4)")
    s.add_argument("--no-import", action="store_true", help="do not import torch (no device facts from PyTorch)")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    # --collect and --list-facts read no entries, so they work outside a checkout too (and with the stdlib only).
    root = None if (args.collect or args.list_facts) else root_of(args)
    from errbook.machine import doctor
    if args.list_facts:
        doctor.print_facts_list(args.json)
        return ExitCode.OK
    try:
        doc = _facts(args.facts, args.timeout, args.python, not args.no_import)
        if args.collect:
            print(json.dumps(doc, indent=1, ensure_ascii=False))
            return ExitCode.OK
        rep = _report(doc, root)
    except Exception as e:
        return _failed(e)
    if args.json:
        print(json.dumps(rep, indent=1, ensure_ascii=False, default=str))
    else:
        doctor.print_human(rep)
    return ExitCode.FINDINGS if rep["applies"] else ExitCode.OK


def _facts(path: str | None, timeout: float, python: str | None, do_import: bool) -> dict:
    """The facts document: a saved file's, or this machine's."""
    from errbook.machine import facts
    if path:
        return facts.load(path)
    return facts.collect(timeout=timeout, python=python, do_import=do_import)


def _report(doc: dict, root) -> dict:
    from errbook.kb import entries  # needs PyYAML; --collect and --list-facts need only the stdlib
    from errbook.machine import doctor
    loaded, errors = entries.load_all(root)
    for err in errors:
        print(f"errbook doctor: skipped {err.rel}:{err.line}: {err.message} (run errbook validate)", file=sys.stderr)
    rep = doctor.report(doc, list(entries.active(loaded)))
    for msg in rep["skipped_entries"]:
        print(f"errbook doctor: skipped {msg} (run errbook validate)", file=sys.stderr)
    return rep


def _failed(e: Exception) -> int:
    """Exit 2 with one line: doctor's answer 1 means "a known problem applies", so a failure must never exit 1."""
    from errbook.machine import facts
    if isinstance(e, (facts.FactsError, FileNotFoundError)):
        print(f"errbook doctor: {e}", file=sys.stderr)
    elif isinstance(e, ImportError):
        print(f"errbook doctor: cannot read the entries here ({e}); save the facts with `errbook doctor --collect "
              "> facts.json` (standard library only) and evaluate them where errbook is installed "
              "(`errbook doctor --facts facts.json`)", file=sys.stderr)
    elif os.environ.get("ERRBOOK_DEBUG"):   # never a traceback for a user; ERRBOOK_DEBUG=1 shows it
        raise e
    else:
        print(f"errbook doctor: internal error: {type(e).__name__}: {e}", file=sys.stderr)
    return ExitCode.ERROR
