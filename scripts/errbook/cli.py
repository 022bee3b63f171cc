"""The `errbook` command. Exit codes: 0 fine, 1 findings (invalid entries, failed checks, no triage match), 2 usage or input error."""
from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from . import __version__, paths

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _root(args) -> Path:
    return Path(args.root).resolve() if args.root else paths.repo_root()


def cmd_validate(args) -> int:
    import time

    from . import validate
    t0 = time.perf_counter()
    loaded, findings = validate.validate(_root(args))
    dt = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"entries": len(loaded), "findings": validate.findings_json(findings),
                          "seconds": round(dt, 3)}, indent=1, ensure_ascii=False))
    else:
        for f in findings:
            print(f)
        print(f"{len(loaded)} entries, {len(findings)} finding(s) in {dt:.2f}s", file=sys.stderr)
    return EXIT_FINDINGS if findings else EXIT_OK


def cmd_new(args) -> int:
    from . import scaffold
    epath, rpath = scaffold.new_entry(_root(args), args.klass, args.title)
    print(json.dumps({"entry": str(epath), "runbook": str(rpath)}) if args.json else f"created {epath}\ncreated {rpath}")
    return EXIT_OK


def _mkdocs(args, verb: str) -> int:
    import subprocess
    root = _root(args)
    cmd = [sys.executable, "-m", "mkdocs", verb, "-f", str(root / "mkdocs.yml")]
    if verb == "serve":
        cmd += ["-a", f"{args.host}:{args.port}", "--livereload"]
        cmd += ["-w", str(root / "errata"), "-w", str(root / "runbooks")]
    else:
        cmd += ["--strict"] + (["-d", args.site_dir] if args.site_dir else [])
    return subprocess.call(cmd, cwd=root)


def cmd_serve(args) -> int:
    return _mkdocs(args, "serve")


def cmd_build(args) -> int:
    return _mkdocs(args, "build")


def cmd_triage(args) -> int:
    from . import triage
    return triage.main(args, _root(args))


def cmd_run(args) -> int:
    from . import runner
    return runner.main(args, _root(args))


def cmd_platform(args) -> int:
    from . import platform
    info = platform.detect()
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        print(platform.label(info["fingerprint"]))
        for t, why in info["tiers"].items():
            print(f"  {t:<9} {'available' if why is None else 'unavailable: ' + why}")
        for k, v in info["toolchains"].items():
            print(f"  {k}: {v}")
    return EXIT_OK


def cmd_ledger(args) -> int:
    from . import ledger
    recs, problems = ledger.read(ledger.default_path(_root(args)))
    for p in problems:
        print(f"ledger: {p}", file=sys.stderr)
    if args.json:
        print(json.dumps({"records": recs, "problems": problems}, indent=1))
    else:
        for r in recs[-args.last:]:
            tiers = " ".join(f"{t}:{v['outcome']}" for t, v in r.get("tiers", {}).items())
            print(f"{r['date']}  {r['entry']}  {r['outcome']:<8} {tiers}  [{r.get('platform_label', '')}]")
    return EXIT_FINDINGS if problems else EXIT_OK


def cmd_eval(args) -> int:
    from . import evaluate
    res = evaluate.evaluate(_root(args))
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        print(f"real logs: {res['real_logs']} ({res['entries_covered']} entries)  top-1 {res['top1']:.1%}  "
              f"top-3 {res['top3']:.1%}")
        print(f"benign logs: {res['benign_logs']}  false-positive rate {res['false_positive_rate']:.1%}")
        for r in res["misses"]:
            print(f"  miss: {r['name']} expected {r['expect']} got {r['got']}")
        for r in res["false_positives"]:
            print(f"  false positive: {r['name']} -> {r['got']}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="errbook", description="The ROCm migration error notebook toolkit.")
    p.add_argument("--version", action="version", version=f"errbook {__version__}")
    p.add_argument("--root", help="checkout root (default: found from the current directory or $ERRBOOK_ROOT)")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    s = sub.add_parser("validate", help="check every entry against the schema and the cross-checks")
    s.add_argument("--json", action="store_true", help="machine-readable findings")
    s.set_defaults(fn=cmd_validate)

    s = sub.add_parser("new", help="scaffold an entry and its runbook with the next free id")
    s.add_argument("klass", metavar="CLASS", choices=["compile", "runtime", "performance"])
    s.add_argument("title")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_new)

    s = sub.add_parser("serve", help="serve the site on localhost with live reload of entry changes")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.set_defaults(fn=cmd_serve)

    s = sub.add_parser("build", help="build the site (mkdocs build --strict)")
    s.add_argument("--site-dir", help="output folder (default: site/)")
    s.set_defaults(fn=cmd_build)

    s = sub.add_parser("triage", help="match a log (files or stdin) against every entry's signatures")
    s.add_argument("files", nargs="*", help="log files; '-' or none reads stdin; several files = one log per rank")
    s.add_argument("--json", action="store_true", help='print {"matches": [...]} in rank order')
    s.add_argument("--top", type=int, default=3, help="how many entries to show (default 3)")
    s.add_argument("--tally", metavar="FILE", nargs="?", const="", default=None,
                   help="append the matched entry ids (never the log text) to a local tally file "
                        "(default ~/.local/share/errbook/tally.jsonl); opt-in")
    s.add_argument("--show-tally", action="store_true", help="print the tally's counts per entry and exit")
    s.set_defaults(fn=cmd_triage)

    s = sub.add_parser("run", help="execute runbooks with papermill and record the outcome in the ledger",
                       description="Exit status: 0 all passed, 1 any failed, 2 usage error or a record the "
                                   "ledger could not take (those records are printed on stderr as JSON lines).")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("entries", nargs="*", default=[], help="entry ids (RMN-0001 ...)")
    g.add_argument("--class", dest="klass", choices=["compile", "runtime", "performance"], help="every entry of a class")
    g.add_argument("--all", action="store_true", help="every entry")
    s.add_argument("--tier", default="static,toolchain,gpu,rocm", help="comma-separated tiers to attempt")
    s.add_argument("--jobs", "-j", type=int, default=2, help="runbooks executed in parallel")
    s.add_argument("--timeout", type=float, default=600,
                   help="seconds for the whole runbook (all cells); past it the runbook, its kernel and every "
                        "process it started are killed and the run is recorded as a timeout")
    s.add_argument("--ledger", help="ledger file to append to (default runbooks/ledger.jsonl)")
    s.add_argument("--no-ledger", action="store_true", help="do not append to any ledger")
    s.add_argument("--out", help="folder for executed notebooks (default docs/verification/runs)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--no-progress", action="store_true")
    s.set_defaults(fn=cmd_run)

    s = sub.add_parser("eval", help="triage accuracy on the labelled evaluation logs in tests/triage_eval/")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_eval)

    s = sub.add_parser("platform", help="what this machine can run: tiers, toolchains, GPU")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_platform)

    s = sub.add_parser("ledger", help="show the verification ledger")
    s.add_argument("--json", action="store_true")
    s.add_argument("--last", type=int, default=30)
    s.set_defaults(fn=cmd_ledger)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code not in (0, None) else EXIT_OK
    if hasattr(signal, "SIGXFSZ"):   # past a file-size limit, write() then fails with EFBIG instead of killing us
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        return args.fn(args)
    except OSError as e:   # a missing or unreadable file, a full disk: a message, not a traceback
        print(f"errbook: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
