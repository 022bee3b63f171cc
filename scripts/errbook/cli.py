"""The `errbook` command. Exit codes: 0 fine, 1 findings (invalid entries, failed checks, no triage match), 2 usage or input error."""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import traceback
from pathlib import Path

from . import __version__, paths, term

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _root(args) -> Path:
    return paths.checkout(Path(args.root).resolve(), "--root") if args.root else paths.repo_root()


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
    try:
        epath, rpath = scaffold.new_entry(_root(args), args.klass, args.title)
    except scaffold.ScaffoldError as e:
        print(f"errbook new: {e}", file=sys.stderr)
        return EXIT_USAGE
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


def cmd_stale(args) -> int:
    from . import stale
    return stale.main(args, _root(args))


def cmd_triage(args) -> int:
    from . import triage
    return triage.main(args, _root(args))


def cmd_doctor(args) -> int:
    from . import doctor
    # --collect and --list-facts read no entries, so they work outside a checkout too.
    return doctor.main(args, None if (args.collect or args.list_facts) else _root(args))


def cmd_run(args) -> int:
    if args.slurm:
        from . import slurm
        if args.no_ledger or args.out:
            print("errbook run: --slurm merges into the ledger and keeps notebooks in docs/verification/runs; "
                  "--no-ledger and --out do not apply", file=sys.stderr)
            return EXIT_USAGE
        return slurm.main(args, _root(args))
    fleet = [o for o, v in (("--fleet", args.fleet), ("--node-class", args.node_class), ("--partition", args.partition),
                            ("--constraint", args.constraint), ("--account", args.account), ("--time", args.time),
                            ("--gpus", args.gpus), ("--sbatch-arg", args.sbatch_arg), ("--spool", args.spool),
                            ("--no-wait", args.no_wait)) if v]
    if fleet:
        print(f"errbook run: {', '.join(fleet)} only apply with --slurm", file=sys.stderr)
        return EXIT_USAGE
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
    if args.merge:
        from . import slurm
        return slurm.merge_main(args, _root(args))
    from . import entries, ledger, verified
    root = _root(args)
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
    return EXIT_FINDINGS if problems else EXIT_OK


def cmd_eval(args) -> int:
    from . import evaluate, paths
    try:
        ev = evaluate.Evaluator(_root(args))
    except evaluate.LabelError as e:
        print(f"errbook eval: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.calibrate:
        cal = ev.calibrate()
        note = ("Second-stage thresholds, calibrated by `errbook eval --calibrate --write` on the dev split only "
                f"({sum(c['split'] == 'dev' for c in ev.benign)} benign and the unseen dev logs).")
        if args.write:
            p = paths.PACKAGE_DIR / "data" / "calibration.json"
            p.write_text(json.dumps(dict(cal, note=note), indent=2) + "\n", encoding="utf-8")
        res = ev.run(cal)
        res["calibration"] = cal
    else:
        res = ev.run()
    if args.json:
        res = {k: v for k, v in res.items() if k != "rows" or args.rows}
        print(json.dumps(res, indent=1, ensure_ascii=False))
        return EXIT_OK
    def line(name, r):
        pct = lambda x: "  n/a " if x is None else f"{x:6.1%}"
        print(f"{name:<26} {r['logs']:4d} logs  top-1 {pct(r['top1'])}  top-3 {pct(r['top3'])}  "
              f"abstained {pct(r['abstained'])}  confidently wrong {pct(r['confidently_wrong'])}  "
              f"second stage {pct(r['answered_by_second_stage'])}")
    print("Figures to believe: unseen test (threads no entry cites; thresholds were not tuned on them).")
    line("unseen, test split", res["unseen_test"])
    line("unseen, dev split", res["unseen_dev"])
    line("unseen, all", res["unseen"])
    for k, r in res["unseen_by_class"].items():
        line(f"  unseen, class {k}", r)
    for k, r in res["unseen_by_kind"].items():
        line(f"  unseen, {k}", r)
    if args.by_round:
        for n, by in res["unseen_by_round"].items():
            for g, r in by.items():
                line(f"  round {n}, {g}", r)
    line("seen (training set)", res["seen"])
    b = res["benign"]
    print(f"benign logs: {b['logs']}  false positives {b['false_positives']} ({b['false_positive_rate']:.1%}; "
          f"test split {b['false_positive_rate_test']:.1%}; by a signature {b['confident_false_positives']})")
    if "calibration" in res:
        print(f"calibration: {res['calibration']}" + (" (written)" if args.write else " (not written; add --write)"))
    if args.misses:
        for r in res["misses"]:
            if r["group"] != "test" or args.show_test:
                print(f"  miss [{r['group']}]: {r['name']} expected {r['expect']} got {r['got']}")
        for r in res["false_positives"]:
            print(f"  false positive [{r['split']}]: {r['name']} -> {r['got']} ({r['confidence']})")
    return EXIT_OK


TRIAGE_HELP = """\
Rank the entries a log points to. First stage: every entry's signatures ("match"). When none matches, a
second stage ranks entries by similarity to their text and says "likely"; it abstains when the log looks like
normal output. Lines stating the GPU (gfx id), the ROCm or PyTorch version or ROCm/HIP environment variables
re-rank the candidates through the entries' triggers.

What is read: logs of any size (a big file is scanned by one process per core); UTF-8, or UTF-16 and UTF-32
(found by their BOM or their NUL bytes: Windows PowerShell's > writes UTF-16), decoded as they are read; lines end
at \\n, \\r\\n or a lone \\r (CR-only logs included); JSON-escaped logs (\\n inside a JSON string, as CI systems
and container runtimes export) are split at their escaped newlines; ANSI colours, timestamps and launcher, kernel-log,
journal, container and CI prefixes are ignored; GCC's typographic quotes and Windows paths are read like
clang's quotes and Unix paths. Limits: only the first 64 KiB of a physical line is read; a line longer than
4096 characters is matched in overlapping windows, so a match longer than 256 characters across a window
boundary can be missed.

Speed: the signatures are compiled once for Hyperscan and kept in $ERRBOOK_CACHE (default
$XDG_CACHE_HOME/errbook or ~/.cache/errbook); ERRBOOK_PREFILTER=re2 uses the RE2 path instead (same results).

Exit codes: 0 a signature matched; 1 no signature matched (likely entries may still be listed); 2 error.
"""


def _seconds(text: str) -> float:
    """A duration: finite and > 0 (0, a negative number or nan would end every run at once as a 'timeout')."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, not {text!r}")
    return v


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

    s = sub.add_parser("triage", help="match a log (files or stdin) against every entry's signatures",
                       formatter_class=argparse.RawDescriptionHelpFormatter, description=TRIAGE_HELP)
    s.add_argument("files", nargs="*", help="log files; '-' or none reads stdin; several files = one log per rank")
    s.add_argument("--json", action="store_true", help='print {"matches": [...]} in rank order')
    s.add_argument("--top", type=int, default=3, help="how many entries to show (default 3)")
    s.add_argument("--tally", metavar="FILE", nargs="?", const="", default=None,
                   help="append the matched entry ids (never the log text) to a local tally file "
                        "(default ~/.local/share/errbook/tally.jsonl); opt-in")
    s.add_argument("--show-tally", action="store_true", help="print the tally's counts per entry and exit")
    s.add_argument("--facts", metavar="FACTS.json",
                   help="facts of the machine the log came from (errbook doctor --collect): re-rank by them")
    s.set_defaults(fn=cmd_triage)

    s = sub.add_parser("doctor", help="which known problems this machine is exposed to (evidence, fix, runbook)")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--collect", action="store_true",
                   help="print the collected facts as JSON (save them: errbook doctor --collect > facts.json)")
    g.add_argument("--facts", metavar="FACTS.json", help="evaluate a saved facts file instead of this machine ('-' = stdin)")
    g.add_argument("--list-facts", action="store_true", help="the fact names checks may use, their types and sources")
    s.add_argument("--json", action="store_true", help="machine-readable report")
    s.add_argument("--python", help="probe this Python interpreter's PyTorch/Triton (default: the one running errbook)")
    s.add_argument("--timeout", type=float, default=4.0, help="seconds for the slowest probe (default 4)")
    s.add_argument("--no-import", action="store_true", help="do not import torch (no device facts from PyTorch)")
    s.set_defaults(fn=cmd_doctor)

    s = sub.add_parser("run", help="execute runbooks with papermill and record the outcome in the ledger",
                       description="Exit status: 0 all passed, 1 any failed, 2 usage error or a record the "
                                   "ledger could not take (those records are printed on stderr as JSON lines).")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("entries", nargs="*", default=[], help="entry ids (RMN-0001 ...)")
    g.add_argument("--class", dest="klass", choices=["compile", "runtime", "performance"], help="every entry of a class")
    g.add_argument("--all", action="store_true", help="every entry")
    g.add_argument("--changed", action="store_true",
                   help="every entry whose current content (signatures, checks, fix, verification, runbook code) "
                        "has no record of this machine for the asked tiers it can run (see docs/runbooks.md)")
    s.add_argument("--dry-run", action="store_true",
                   help="list the entries that would run and exit: 0 none, 1 some (a CI gate with --changed)")
    s.add_argument("--tier", default="static,toolchain,gpu,rocm", help="comma-separated tiers to attempt")
    s.add_argument("--jobs", "-j", type=int, default=2, help="runbooks executed in parallel")
    s.add_argument("--timeout", type=_seconds, default=600,
                   help="seconds for the whole runbook (all cells); past it the runbook, its kernel and every "
                        "process it started are killed and the run is recorded as a timeout")
    s.add_argument("--ledger", help="ledger file to append to (default runbooks/ledger.jsonl)")
    s.add_argument("--no-ledger", action="store_true", help="do not append to any ledger")
    s.add_argument("--out", help="folder for executed notebooks (default docs/verification/runs)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--no-progress", action="store_true")
    f = s.add_argument_group("fleet (Slurm)", "submit the runbooks as Slurm job arrays, one task per runbook and "
                             "node class, and merge each task's record into the ledger (docs/fleet.md)")
    f.add_argument("--slurm", action="store_true", help="run through Slurm instead of on this machine")
    f.add_argument("--fleet", metavar="FILE", help="node classes and their sbatch options (default .errbook/fleet.yaml)")
    f.add_argument("--node-class", action="append", metavar="NAME", help="only these classes of the fleet file")
    f.add_argument("--partition", help="sbatch --partition for every class")
    f.add_argument("--constraint", help="sbatch --constraint (a node feature such as a gfx architecture)")
    f.add_argument("--account", help="sbatch --account")
    f.add_argument("--time", help="sbatch --time per task (default: the runbook timeout plus 10 minutes)")
    f.add_argument("--gpus", type=int, help="GPUs per task (sbatch --gpus-per-node)")
    f.add_argument("--sbatch-arg", action="append", metavar="ARG", help="extra sbatch argument (repeatable)")
    f.add_argument("--spool", metavar="DIR", help="spool folder on storage shared with the compute nodes")
    f.add_argument("--no-wait", action="store_true", help="submit, print the job ids and the spool, and return")
    f.add_argument("--poll", type=_seconds, default=10, help="seconds between squeue polls while waiting")
    s.set_defaults(fn=cmd_run)

    s = sub.add_parser("eval", help="triage accuracy on the labelled evaluation logs in tests/triage_eval/",
                       description="Top-1/top-3, abstention and confidently-wrong rates on labelled logs, split into "
                                   "seen (their thread is cited by an entry: training-set figures) and unseen (dev "
                                   "split for tuning, test split for reporting), and the false-positive rate on "
                                   "benign logs. The second stage is scored leave-one-thread-out.")
    s.add_argument("--json", action="store_true")
    s.add_argument("--rows", action="store_true", help="with --json: every log's result")
    s.add_argument("--misses", action="store_true", help="list the misses of the dev split and the false positives")
    s.add_argument("--show-test", action="store_true",
                   help="with --misses: also the test split's misses (looking at them turns test logs into dev logs)")
    s.add_argument("--by-round", action="store_true", help="also the figures of each collection round's dev and test halves")
    s.add_argument("--calibrate", action="store_true", help="choose the second stage's thresholds on the dev split")
    s.add_argument("--write", action="store_true", help="with --calibrate: save them in data/calibration.json")
    s.set_defaults(fn=cmd_eval)

    s = sub.add_parser("stale", help="entries due for review (180 days, or a range checked before the newest release)",
                       description="Lists entries not reviewed in 180 days, and entries with an applies_to range "
                                   "whose checked_at is older than its component's newest release in "
                                   "errata/releases.yaml (a range that ends at a released fix, fixed_in, is "
                                   "settled; one without checked_at or of an untracked component is due). "
                                   "Exit 1 when anything is due.")
    s.add_argument("--json", action="store_true")
    s.add_argument("--today", help="evaluate as of this date (YYYY-MM-DD)")
    s.set_defaults(fn=cmd_stale)

    s = sub.add_parser("platform", help="what this machine can run: tiers, toolchains, GPU")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_platform)

    s = sub.add_parser("ledger", help="show the verification ledger")
    s.add_argument("--json", action="store_true")
    s.add_argument("--last", type=int, default=30)
    s.add_argument("--merge", metavar="SPOOL", help="merge the finished tasks of an errbook run --slurm spool "
                   "into the ledger (idempotent: a task already merged is not added again)")
    s.add_argument("--settle", type=float, default=10, help=argparse.SUPPRESS)
    s.set_defaults(fn=cmd_ledger)
    return p


def main(argv: list[str] | None = None) -> int:
    streams = sys.stdout, sys.stderr       # every text printer, argparse's messages included, writes through these
    sys.stdout, sys.stderr = (s if s is None else term.EscapingWriter(s) for s in streams)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code not in (0, None) else EXIT_OK
    if hasattr(signal, "SIGXFSZ"):   # past a file-size limit, write() then fails with EFBIG instead of killing us
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return _run(args)


def _run(args) -> int:
    """The command, with every failure turned into exit 2 and a one-line message: exit 1 means "no match" or
    "a known problem applies", so a crash must never exit 1."""
    try:
        return args.fn(args)
    except OSError as e:   # a missing or unreadable file, a full disk, not a checkout: a message, not a traceback
        print(f"errbook: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        print("errbook: out of memory (a memory limit such as ulimit -v, or an input too big for it)", file=sys.stderr)
        return EXIT_USAGE
    except Exception as e:
        if os.environ.get("ERRBOOK_DEBUG"):
            traceback.print_exc()
        print(f"errbook: internal error: {type(e).__name__}: {str(e)[:500]}"
              + ("" if os.environ.get("ERRBOOK_DEBUG") else " (ERRBOOK_DEBUG=1 shows the traceback)"), file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
