"""`errbook serve`: the site on localhost, reloaded when entries or runbooks change."""
from __future__ import annotations

import argparse

from errbook.cli.common import mkdocs, root_of


def add_parser(sub) -> None:
    s = sub.add_parser("serve", help="serve the site on localhost with live reload of entry changes")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    root = root_of(args)
    return mkdocs(root, "serve", ["-a", f"{args.host}:{args.port}", "--livereload",
                                  "-w", str(root / "errata"), "-w", str(root / "runbooks")])
