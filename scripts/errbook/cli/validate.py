"""`errbook validate [FILE ...]`: schema and cross-checks; every finding names file:line: field."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from errbook.cli.common import checkout_of
from errbook.cli.exitcodes import ExitCode
from errbook.common import term


def add_parser(sub) -> None:
    s = sub.add_parser("validate", help="check entries against the schema and the cross-checks",
                       description="Check every entry (or only the entry files given, as the pre-commit hook "
                                   "does) against the schema and the cross-checks. What is unfinished in a draft "
                                   "(draft: true, or errbook new's TODO placeholders) is listed as a draft note, "
                                   "not a finding, unless --strict. Exit status: 0 ok, 1 findings, 2 usage.")
    s.add_argument("files", nargs="*", metavar="FILE",
                   help="entry files (errata/<class>/RMN-NNNN.yaml) to check, with the cross-checks they need; "
                        "default: everything")
    s.add_argument("--strict", action="store_true",
                   help="publication: a draft is a finding (what CI may require before a release)")
    s.add_argument("--json", action="store_true", help="machine-readable findings")
    s.set_defaults(fn=run)


def entry_files(root: Path, names: list[str]) -> set[str]:
    """The files as Entry.rel (relative to the checkout); ValueError names one that is not an entry file here."""
    out = set()
    real_root = root.resolve()
    for n in names:
        p = Path(n).resolve()
        if not p.is_relative_to(real_root):
            raise ValueError(f"{n}: not inside the checkout {root}")
        rel = p.relative_to(real_root).as_posix()
        parts = rel.split("/")
        if len(parts) != 3 or parts[0] != "errata" or not rel.endswith(".yaml") or parts[1] == "corpus":
            raise ValueError(f"{n}: not an entry file (errata/<class>/RMN-NNNN.yaml)")
        if not p.is_file():
            raise ValueError(f"{n}: no such file")
        out.add(rel)
    return out


def run(args: argparse.Namespace) -> int:
    from errbook.kb import validate
    root = checkout_of(args)
    try:
        only = entry_files(root, args.files) if args.files else None
    except ValueError as e:
        print(f"errbook validate: {e}", file=sys.stderr)
        return ExitCode.ERROR
    t0 = time.perf_counter()
    loaded, found = validate.validate(root, only)
    if only is not None:
        loaded = [e for e in loaded if e.rel in only]
    findings, notes = validate.draft_split(loaded, found, args.strict)
    dt = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"entries": len(loaded), "findings": validate.findings_json(findings),
                          "draft_notes": validate.findings_json(notes), "seconds": round(dt, 3)},
                         indent=1, ensure_ascii=False))
    else:
        for f in findings:
            print(f)
        for f in notes:
            print(f"draft: {f}")
        drafts = len({f.file for f in notes})
        print(f"{term.plural(len(loaded), 'entry', 'entries')}, {term.plural(len(findings), 'finding')}"
              + (f", {term.plural(drafts, 'draft')} with {term.plural(len(notes), 'note')} (--strict counts them)"
                 if drafts else "")
              + f" in {dt:.2f}s", file=sys.stderr)
    return ExitCode.FINDINGS if findings else ExitCode.OK
