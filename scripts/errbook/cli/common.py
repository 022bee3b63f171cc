"""What several subcommands share: the checkout root from --root (or the installed snapshot), durations, counts,
dates, running MkDocs."""
from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import subprocess
import sys
from pathlib import Path

from errbook.common import paths


def root_of(args: argparse.Namespace) -> Path:
    """The checkout: --root (which must be one), else $ERRBOOK_ROOT or the nearest enclosing checkout."""
    return paths.checkout(Path(args.root).resolve(), "--root") if args.root else paths.repo_root()


def checkout_of(args: argparse.Namespace) -> Path:
    """root_of for the commands that write to a checkout or read more of it than the installed snapshot holds
    (runbooks, docs, the ledger): the snapshot is refused in one line (exit 2)."""
    root = root_of(args)
    if paths.is_snapshot(root):
        raise paths.NotACheckout(f"{args.cmd} needs a checkout of the knowledge base (git clone it, then run there "
                                 "or give --root or $ERRBOOK_ROOT); only the installed read-only snapshot was found")
    return root


def seconds(text: str) -> float:
    """A duration: finite and > 0 (0, a negative number or nan would end every run at once as a 'timeout')."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, not {text!r}")
    return v


def positive_int(text: str) -> int:
    """A count such as --top: a whole number >= 1 (0 or a negative number would show nothing, or silently one)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {text!r}")
    return v


def iso_date(text: str) -> dt.date:
    """A date written YYYY-MM-DD (07/01/2027 is ambiguous: July 1 or January 7)."""
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date in the form YYYY-MM-DD: {text!r}") from None


def mkdocs(root: Path, verb: str, extra: list[str]) -> int:
    """`mkdocs VERB` on the checkout's mkdocs.yml, in this Python; its exit status."""
    cmd = [sys.executable, "-m", "mkdocs", verb, "-f", str(root / "mkdocs.yml"), *extra]
    return subprocess.call(cmd, cwd=root, env=mkdocs_env())


def mkdocs_env() -> dict[str, str]:
    """The environment for MkDocs: without Material's boxed end-of-life notice, ten lines printed on every build
    and serve (it is about Material's future, not this build; `mkdocs build` run directly still shows it)."""
    return dict(os.environ, NO_MKDOCS_2_WARNING="1")
