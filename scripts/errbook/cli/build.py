"""`errbook build`: the site, `mkdocs build --strict`."""
from __future__ import annotations

import argparse

from errbook.cli.common import checkout_of, mkdocs


def add_parser(sub) -> None:
    s = sub.add_parser("build", help="build the site (mkdocs build --strict)")
    s.add_argument("--site-dir", help="output folder (default: site/)")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    return mkdocs(checkout_of(args), "build", ["--strict"] + (["-d", args.site_dir] if args.site_dir else []))
