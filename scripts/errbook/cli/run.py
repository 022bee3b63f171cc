"""`errbook run`: execute runbooks here (runbooks/runner.py) or on a Slurm fleet (runbooks/slurm.py).

A run on this machine is a trial unless asked otherwise: its records and executed notebooks go to a scratch
folder (runbooks/scratch.py: $XDG_STATE_HOME/errbook/...), never to the team's committed runbooks/ledger.jsonl
and docs/verification/runs/. `--record` writes those (the recording workflow, CI on AMD hosts); `--ledger` and
`--out` name other places. A fleet run (`--slurm`) always records: it merges into the team's ledger."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from errbook.cli.common import checkout_of, seconds
from errbook.cli.exitcodes import ExitCode

BAD = ("failed", "error", "crashed", "timeout")


def add_parser(sub) -> None:
    s = sub.add_parser("run", help="execute runbooks with papermill (a trial; --record writes the team's ledger)",
                       description="A trial by default: records and executed notebooks go to a scratch folder "
                                   "($XDG_STATE_HOME/errbook/...); --record appends to runbooks/ledger.jsonl and "
                                   "keeps notebooks in docs/verification/runs (commit both). Exit status: 0 all "
                                   "passed, 1 any failed, 2 usage error or a record the ledger could not take (those "
                                   "records are printed on stderr as JSON lines).")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("entries", nargs="*", default=[], help="entry ids (RMN-0001 ...)")
    g.add_argument("--class", dest="klass", choices=["compile", "runtime", "performance"],
                   help="every entry of a class")
    g.add_argument("--all", action="store_true", help="every entry")
    g.add_argument("--changed", action="store_true",
                   help="every entry whose current content (signatures, checks, fix, verification, runbook code) "
                        "has no record of this machine for the asked tiers it can run (see docs/runbooks.md)")
    s.add_argument("--dry-run", action="store_true",
                   help="list the entries that would run and exit: 0 none, 1 some (a CI gate with --changed)")
    s.add_argument("--tier", default="static,toolchain,gpu,rocm", help="comma-separated tiers to attempt")
    s.add_argument("--jobs", "-j", type=int, default=2, help="runbooks executed in parallel")
    s.add_argument("--timeout", type=seconds, default=600,
                   help="seconds for the whole runbook (all cells); past it the runbook, its kernel and every "
                        "process it started are killed and the run is recorded as a timeout")
    s.add_argument("--record", action="store_true",
                   help="record for the team: append to runbooks/ledger.jsonl and keep the executed notebooks in "
                        "docs/verification/runs (default: a scratch folder, the team's files untouched)")
    s.add_argument("--ledger", help="ledger file to append to (default: the scratch ledger; --record: "
                                    "runbooks/ledger.jsonl)")
    s.add_argument("--no-ledger", action="store_true", help="do not append to any ledger")
    s.add_argument("--out", help="folder for executed notebooks (default: the scratch folder; --record: "
                                 "docs/verification/runs)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--no-progress", action="store_true")
    f = s.add_argument_group("fleet (Slurm)", "submit the runbooks as Slurm job arrays, one task per runbook and "
                             "node class, and merge each task's record into the ledger (docs/fleet.md)")
    f.add_argument("--slurm", action="store_true", help="run through Slurm instead of on this machine")
    f.add_argument("--fleet", metavar="FILE",
                   help="node classes and their sbatch options (default .errbook/fleet.yaml)")
    f.add_argument("--node-class", action="append", metavar="NAME", help="only these classes of the fleet file")
    f.add_argument("--partition", help="sbatch --partition for every class")
    f.add_argument("--constraint", help="sbatch --constraint (a node feature such as a gfx architecture)")
    f.add_argument("--account", help="sbatch --account")
    f.add_argument("--time", help="sbatch --time per task (default: the runbook timeout plus 10 minutes)")
    f.add_argument("--gpus", type=int, help="GPUs per task (sbatch --gpus-per-node)")
    f.add_argument("--sbatch-arg", action="append", metavar="ARG", help="extra sbatch argument (repeatable)")
    f.add_argument("--spool", metavar="DIR", help="spool folder on storage shared with the compute nodes")
    f.add_argument("--no-wait", action="store_true", help="submit, print the job ids and the spool, and return")
    f.add_argument("--poll", type=seconds, default=10, help="seconds between squeue polls while waiting")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    if args.slurm:
        if args.no_ledger or args.out:
            print("errbook run: --slurm merges into the ledger and keeps notebooks in docs/verification/runs; "
                  "--no-ledger and --out do not apply", file=sys.stderr)
            return ExitCode.ERROR
        return run_slurm(args, checkout_of(args))
    fleet = [o for o, v in (("--fleet", args.fleet), ("--node-class", args.node_class), ("--partition", args.partition),
                            ("--constraint", args.constraint), ("--account", args.account), ("--time", args.time),
                            ("--gpus", args.gpus), ("--sbatch-arg", args.sbatch_arg), ("--spool", args.spool),
                            ("--no-wait", args.no_wait)) if v]
    if fleet:
        print(f"errbook run: {', '.join(fleet)} only apply with --slurm", file=sys.stderr)
        return ExitCode.ERROR
    return run_here(args, checkout_of(args))


# ---------------------------------------------------------------- on this machine

def run_here(args: argparse.Namespace, root: Path) -> int:
    from errbook.common import paths
    from errbook.machine import tiers
    from errbook.runbooks import ledger, runner, scratch
    try:
        tiers.parse(args.tier)
    except ValueError as e:
        print(f"errbook run: {e}", file=sys.stderr)
        return ExitCode.ERROR
    if args.record and (args.ledger or args.out or args.no_ledger):
        print("errbook run: --record writes the team's runbooks/ledger.jsonl and docs/verification/runs; "
              "--ledger, --out and --no-ledger name other places: use one or the other", file=sys.stderr)
        return ExitCode.ERROR
    trial = scratch.Scratch(root)
    out_dir = paths.executed_dir(root) if args.record else (Path(args.out) if args.out else trial.runs)
    problem = runner.out_dir_problem(out_dir, root)
    if problem:
        print(f"errbook run: --out {args.out}: {problem}", file=sys.stderr)
        return ExitCode.ERROR
    chosen = runner.select(root, args.entries, args.klass, args.all, args.tier if args.changed else "")
    if args.dry_run:
        for entry in chosen:
            print(entry.id)
        print(f"errbook run: {len(chosen)} runbook(s) would run", file=sys.stderr)
        return ExitCode.FINDINGS if chosen else ExitCode.OK
    if not chosen:
        print("runbooks: nothing to run")
        return ExitCode.OK
    if args.no_ledger:
        lpath = None
    elif args.ledger:
        lpath = Path(args.ledger)
    else:
        lpath = ledger.default_path(root) if args.record else trial.ledger
    bar = _progress(len(chosen)) if not args.no_progress and not args.json else None
    batch = runner.run_many(chosen, root, args.tier, args.timeout, out_dir, args.jobs, lpath,
                            on_record=(lambda rec: _advance(bar, rec)) if bar else None)
    if bar:
        bar.close()
    _summary(batch, args.json)
    print(_where(root, out_dir, lpath, args.record), file=sys.stderr)
    if batch.unsaved:
        _report_unsaved(batch.unsaved, lpath, batch.save_errors)
        return ExitCode.ERROR
    if batch.refused:
        return ExitCode.ERROR
    return ExitCode.FINDINGS if any(r["outcome"] in BAD for r in batch.records) else ExitCode.OK


def _where(root: Path, out_dir: Path, lpath: Path | None, record: bool) -> str:
    """One line saying where this run's records and notebooks went, so no write goes unannounced."""
    where = f"notebooks in {out_dir}; " + (f"records in {lpath}" if lpath else "no ledger written")
    if record:
        return f"errbook run: recorded for the team: {where} (review, then commit them)"
    return (f"errbook run: a trial run: {where}; the team's runbooks/ledger.jsonl and docs/verification/runs "
            "are untouched (--record writes them)")


def _progress(total: int):
    from tqdm import tqdm

    from errbook.common import term
    return tqdm(total=total, unit="runbook", file=term.unwrapped(sys.stderr))   # it redraws with \r


def _advance(bar, rec: dict) -> None:
    bar.update(1)
    bar.write(f"{rec['entry']}: {rec['outcome']}  " +
              " ".join(f"{t}={v['outcome']}" for t, v in rec["tiers"].items()) + f"  ({rec['seconds']}s)")


def _summary(batch, as_json: bool) -> None:
    records = batch.records
    if as_json:
        print(json.dumps({"records": records, "unsaved": len(batch.unsaved)}, indent=1))
    else:
        counts: dict[str, int] = {}
        for r in records:
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        print("runbooks: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
        for r in records:
            if r["outcome"] in BAD:
                print(f"  {r['entry']} {r['outcome']}: {r.get('reason', '')[:300]}")
        if batch.unsaved:
            print(f"ledger: {len(batch.unsaved)} of {len(records)} record(s) NOT saved (they are on stderr)")
    sys.stdout.flush()


def _report_unsaved(unsaved: list[dict], lpath: Path | None, errors: list[str]) -> None:
    """Records the ledger could not take, as JSON lines on stderr: nothing is lost."""
    print(f"errbook run: {len(unsaved)} record(s) could not be saved to {lpath}: {errors[0]}", file=sys.stderr)
    print("errbook run: append these lines to the ledger once the problem is fixed:", file=sys.stderr)
    for rec in unsaved:
        print(json.dumps(rec, ensure_ascii=False, sort_keys=True), file=sys.stderr)
    sys.stderr.flush()


# ---------------------------------------------------------------- on a Slurm fleet

def _overrides(args: argparse.Namespace) -> dict:
    return {"partition": args.partition, "constraint": args.constraint, "account": args.account,
            "time": args.time, "gpus": args.gpus, "sbatch": args.sbatch_arg or []}


def run_slurm(args: argparse.Namespace, root: Path) -> int:
    """`errbook run --slurm ...`: submit, wait, merge."""
    from errbook.runbooks import runner, slurm
    fleet = _fleet(args.tier, args.fleet, root)
    if fleet is None:
        return ExitCode.ERROR
    if not shutil.which("sbatch"):
        print("errbook run: --slurm needs Slurm's sbatch on PATH (run it on a login node of the cluster)",
              file=sys.stderr)
        return ExitCode.ERROR
    chosen = runner.select(root, args.entries, args.klass, args.all)
    if not chosen:
        print("errbook run: no runbooks selected", file=sys.stderr)
        return ExitCode.ERROR
    run_id = slurm.new_run_id()
    base = Path(fleet["spool"]) if fleet.get("spool") else root / ".errbook" / "spool"
    spool = Path(args.spool).resolve() if args.spool else (base / run_id).resolve()
    try:
        man = slurm.prepare(root, chosen, fleet, args.node_class, _overrides(args), args.tier, args.timeout, spool,
                            run_id)
    except (slurm.FleetError, OSError) as e:
        print(f"errbook run: {e}", file=sys.stderr)
        return ExitCode.ERROR
    errors = slurm.submit(spool, man)
    for err in errors:
        print(f"errbook run: {err}", file=sys.stderr)
    jobs = {n: c["job"] for n, c in man["classes"].items() if c.get("job")}
    for n, c in man["classes"].items():
        if c.get("job"):
            print(f"submitted job array {c['job']} (node class {n}, {len(c['tasks'])} runbook(s)); "
                  f"spool {spool}", file=sys.stderr, flush=True)
    if not jobs:
        return ExitCode.ERROR
    if args.no_wait:
        if args.json:
            print(json.dumps({"spool": str(spool), "run": man["run"], "jobs": jobs}, indent=1))
        else:
            print(f"spool: {spool}\njobs: " + " ".join(jobs.values())
                  + f"\nmerge when they are done: errbook ledger --merge {spool}")
        return ExitCode.ERROR if errors else ExitCode.OK
    return _wait_and_merge(args, root, spool, man, jobs, errors)


def _fleet(tier: str, fleet_file: str | None, root: Path) -> dict | None:
    """The fleet file's classes (None, with a message, when the tiers or the file cannot be used)."""
    from errbook.machine import tiers
    from errbook.runbooks import slurm
    try:
        tiers.parse(tier)
        fpath = Path(fleet_file) if fleet_file else slurm.default_fleet_file(root)
        return slurm.load_fleet(fpath)
    except (ValueError, OSError) as e:
        print(f"errbook run: {e}", file=sys.stderr)
        return None


def _wait_and_merge(args: argparse.Namespace, root: Path, spool: Path, man: dict, jobs: dict, errors: list) -> int:
    from errbook.cli.ledger import report_merge
    from errbook.runbooks import fleetmerge, slurm
    from errbook.runbooks import spool as spool_mod
    try:
        finished = slurm.wait(spool, man, args.poll, out=sys.stderr)
    except KeyboardInterrupt:
        print(f"\nstopped waiting; the jobs keep running (scancel {' '.join(jobs.values())} stops them). "
              f"Merge later: errbook ledger --merge {spool}", file=sys.stderr)
        return ExitCode.INTERRUPTED
    lpath = Path(args.ledger) if args.ledger else None
    try:
        res = fleetmerge.merge(spool, root, lpath, settle=0 if not finished else 30)
    except (spool_mod.SpoolError, OSError) as e:
        print(f"errbook run: {e}", file=sys.stderr)
        return ExitCode.ERROR
    return report_merge(res, args.json, spool) or (ExitCode.ERROR if errors else ExitCode.OK)
