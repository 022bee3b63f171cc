"""`errbook platform`: which tiers this machine can run, its toolchains and GPU. (Not named platform.py: that
would shadow the standard library's module.)"""
from __future__ import annotations

import argparse
import json
import sys

from errbook.cli.exitcodes import ExitCode
from errbook.common import term


def add_parser(sub) -> None:
    s = sub.add_parser("platform", help="what this machine can run: tiers, toolchains, GPU",
                       description="Which runbook tiers this machine can run (and why not), the toolchains and GPU "
                                   "found, and the platform a run here is recorded as.")
    s.add_argument("--json", action="store_true", help="print the raw facts as JSON")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from errbook.machine import fingerprint, tiers
    info = tiers.detect()
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        for line in text_lines(info, fingerprint.label(info["fingerprint"]), term.style_for(sys.stdout, args.no_color)):
            print(line)
    return ExitCode.OK


def _words(v) -> str:
    """A fact's value in words: a dict as 'key value, …', a list joined, None as 'none'."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_words(x)}" for k, x in v.items()) or "none"
    if isinstance(v, (list, tuple)):
        return ", ".join(_words(x) for x in v) or "none"
    return str(v)


def text_lines(info: dict, label: str, style: term.Style) -> list[str]:
    """Aligned 'key: value' lines: the platform, each tier with its reason, the toolchains, then the rest."""
    rows: list[tuple[str, str]] = [("platform", label)]
    for t, why in info.get("tiers", {}).items():
        rows.append((f"tier {t}", style("available", "green") if why is None
                     else style("unavailable", "yellow") + f" ({why})"))
    for k, v in (info.get("toolchains") or {}).items():
        rows.append((k, _words(v)))
    for k in ("torch", "rocm", "nvidia_driver", "machine", "os", "python"):
        if k in info:
            rows.append((k.replace("_", " "), _words(info[k])))
    width = max(len(k) for k, _ in rows)
    return [f"{k + ':':<{width + 1}} {v}" for k, v in rows]
