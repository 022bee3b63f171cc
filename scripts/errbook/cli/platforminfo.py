"""`errbook platform`: which tiers this machine can run, its toolchains and GPU. (Not named platform.py: that
would shadow the standard library's module.)"""
from __future__ import annotations

import argparse
import json

from errbook.cli.exitcodes import ExitCode


def add_parser(sub) -> None:
    s = sub.add_parser("platform", help="what this machine can run: tiers, toolchains, GPU")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from errbook.machine import fingerprint, tiers
    info = tiers.detect()
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        print(fingerprint.label(info["fingerprint"]))
        for t, why in info["tiers"].items():
            print(f"  {t:<9} {'available' if why is None else 'unavailable: ' + why}")
        for k, v in info["toolchains"].items():
            print(f"  {k}: {v}")
    return ExitCode.OK
