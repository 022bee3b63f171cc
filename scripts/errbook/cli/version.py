"""`errbook --version`: the package's version and the knowledge base it reads (a checkout, or the wheel's
snapshot), with its entry count and date, the newest `modified` of its entries."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from errbook import __version__
from errbook.common import paths


def text(root_arg: str | None) -> str:
    lines = [f"errbook {__version__}"]
    try:
        root = paths.checkout(Path(root_arg).resolve(), "--root") if root_arg else paths.repo_root()
    except FileNotFoundError as e:      # NotACheckout included: --version still answers
        return "\n".join([*lines, f"knowledge base: none ({e})"])
    from errbook.kb import entries
    loaded, errors = entries.load_all(root)
    dates = [str(e.data.get("modified") or e.data.get("published") or "")[:10] for e in loaded]
    newest = max((d for d in dates if d), default="unknown")
    if paths.is_snapshot(root):
        lines.append(f"knowledge base: the installed snapshot, read-only (built {_built(root)}; --root or "
                     "$ERRBOOK_ROOT reads a checkout instead)")
    else:
        lines.append(f"knowledge base: the checkout {root}")
    bad = f" ({len(errors)} unreadable: errbook validate)" if errors else ""
    # Active entries are what triage answers with; withdrawn ones stay on disk for their redirects.
    live = sum(1 for _ in entries.active(loaded))
    gone = f" ({len(loaded) - live} withdrawn)" if live != len(loaded) else ""
    lines.append(f"entries: {live} active{gone}{bad}, newest modified {newest}")
    return "\n".join(lines)


def _built(root: Path) -> str:
    try:
        return str(json.loads((root / "SNAPSHOT.json").read_text(encoding="utf-8"))["built"])
    except (OSError, ValueError, KeyError, TypeError):
        return "at an unknown date"


class VersionAction(argparse.Action):
    """--version: prints and exits, like argparse's; --root given before it is honoured."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(text(getattr(namespace, "root", None)))
        parser.exit()
