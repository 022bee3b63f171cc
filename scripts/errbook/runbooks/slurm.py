"""`errbook run --slurm`: runbooks on a fleet of GPU nodes, as Slurm job arrays, merged into one ledger.

One array task runs one runbook on one node class. Slurm gives every task of a job array the same options
(partition, constraint, time limit, GPUs), so each node class is submitted as its own job array; with one
node class (the usual case) that is one job array. Everything a run needs and leaves lives in a spool folder
on storage that the submitting host and the compute nodes share (spool.py). Here: the fleet file (node classes
and their sbatch options), the batch scripts, submission and waiting (what Slurm says: slurmstate.py). Each
task runs slurmtask.py on its node.

The submitter (or `errbook ledger --merge SPOOL` later) merges the spool into runbooks/ledger.jsonl with
fleetmerge.merge: exactly once per task, and a task that died without a record is recorded with the state
Slurm gives it (sacct, or scontrol while the controller still remembers the job).
"""
from __future__ import annotations

import datetime as dt
import math
import re
import secrets
import shlex
import socket
import sys
import time
from pathlib import Path
from typing import Any

from errbook.common import paths, regfile
from errbook.errors import ErrbookError
from errbook.kb import yamlpos
from errbook.runbooks.slurmstate import run_cmd, snapshot_active
from errbook.runbooks.spool import FORMAT, MANIFEST, job_ids, task_job, utcnow, write_json

# Keys a node class (or the top level of a fleet file, as defaults for every class) may set.
CLASS_KEYS = {
    "partition": str, "constraint": str, "account": str, "qos": str, "time": (str, int),
    "gpus": int, "gres": str, "cpus": int, "mem": str, "max_parallel": int,
    "sbatch": list, "modules": list, "setup": list, "env": dict,
    "launcher": str, "python": str, "pythonpath": str, "root": str, "tiers": str, "timeout": (int, float),
}
TOP_KEYS = {"spool": str, "classes": dict}


class FleetError(ErrbookError, ValueError):
    """A fleet file or option that cannot be used (exit 2)."""


MAX_FLEET_BYTES = 1 << 20       # a fleet file is a few dozen lines


def _check_keys(where, d: dict, allowed: dict) -> None:
    """where(key) -> 'file:line: field' for messages."""
    for k, v in d.items():
        if k not in allowed:
            raise FleetError(f"{where(k)}: unknown key {k!r} (known: {', '.join(sorted(allowed))})")
        want = allowed[k]
        if not isinstance(v, want) or isinstance(v, bool):
            names = " or ".join(t.__name__ for t in (want if isinstance(want, tuple) else (want,)))
            raise FleetError(f"{where(k)}: {k} must be {names}, not {type(v).__name__}")
        if k in ("sbatch", "modules", "setup") and not all(isinstance(x, str) for x in v):
            raise FleetError(f"{where(k)}: {k} must be a list of strings")
        if k == "env" and not all(isinstance(x, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", x) for x in v):
            raise FleetError(f"{where(k)}: env names must be shell variable names")
        if k == "env" and not all(type(x) in (str, int, float) for x in v.values()):
            raise FleetError(f"{where(k)}: env values must be strings or numbers")
        if k == "timeout" and not (math.isfinite(v) and v > 0):
            raise FleetError(f"{where(k)}: timeout must be a number of seconds > 0")


def load_fleet(path: Path | None) -> dict:
    """{'spool': str|None, 'classes': {name: options}} from a fleet file; no file: one class 'default'.
    Read with the entries' YAML rules (yamlpos: no anchors or aliases, bounded depth and integers)."""
    if path is None:
        return {"spool": None, "classes": {"default": {}}}
    try:
        text = regfile.read_regular(path, MAX_FLEET_BYTES).decode("utf-8")
        located = yamlpos.load(text, "a fleet file")
    except UnicodeDecodeError as e:
        raise FleetError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    except yamlpos.YamlError as e:
        raise FleetError(f"{path}:{e.line}: {e.message}") from None
    data = located.data or {}
    if not isinstance(data, dict):
        raise FleetError(f"{path}:1: a fleet file is a mapping")

    def at(*field):
        return lambda k: f"{path}:{located.line_of(field + (k,))}: " + ".".join(map(str, field + (k,)))

    top = {k: v for k, v in data.items() if k not in CLASS_KEYS}
    defaults = {k: v for k, v in data.items() if k in CLASS_KEYS}
    _check_keys(at(), top, TOP_KEYS)
    _check_keys(at(), defaults, CLASS_KEYS)
    classes = data.get("classes") or {"default": {}}
    out = {}
    for name, opts in classes.items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,40}", name):
            raise FleetError(f"{at('classes')(name)}: node class name {name!r} must be letters, digits, . _ - "
                             "(at most 41)")
        opts = opts or {}
        if not isinstance(opts, dict):
            raise FleetError(f"{at('classes')(name)}: must be a mapping")
        _check_keys(at("classes", name), opts, CLASS_KEYS)
        out[name] = {**defaults, **opts}
    return {"spool": data.get("spool"), "classes": out}


def default_fleet_file(root: Path) -> Path | None:
    p = root / ".errbook" / "fleet.yaml"
    return p if p.is_file() else None


def sbatch_args(name: str, opts: dict, n_tasks: int, spool: Path, timeout: float) -> list[str]:
    arr = f"0-{n_tasks - 1}" + (f"%{opts['max_parallel']}" if opts.get("max_parallel") else "")
    minutes = math.ceil((timeout + 600) / 60)       # the runbook's own deadline plus start-up and detection
    args = [f"--array={arr}", f"--job-name=errbook-{name}", f"--output={spool}/logs/%A_%a.out",
            "--open-mode=append", f"--chdir={spool}", "--nodes=1", "--ntasks=1",
            f"--time={opts.get('time', minutes)}"]           # an int is minutes; a string as sbatch takes it
    for key, flag in (("partition", "--partition"), ("constraint", "--constraint"), ("account", "--account"),
                      ("qos", "--qos"), ("cpus", "--cpus-per-task"), ("mem", "--mem"), ("gres", "--gres")):
        if opts.get(key) not in (None, ""):
            args.append(f"{flag}={opts[key]}")
    if opts.get("gpus"):
        args.append(f"--gpus-per-node={opts['gpus']}")
    return args + list(opts.get("sbatch") or [])


def batch_script(spool: Path, name: str, opts: dict, pythonpath: str) -> str:
    q = shlex.quote
    lines = ["#!/bin/bash",
             f"# errbook fleet: node class {name}; one array task runs one runbook (generated by errbook run --slurm)",
             "set -u"]
    lines += [f"module load {q(m)}" for m in opts.get("modules") or []]
    lines += list(opts.get("setup") or [])
    lines += [f"export {k}={q(str(v))}" for k, v in (opts.get("env") or {}).items()]
    pp = opts.get("pythonpath") or pythonpath
    lines.append(f'export PYTHONPATH={q(pp)}"${{PYTHONPATH:+:$PYTHONPATH}}"')
    launcher = opts.get("launcher") or ""
    python = opts.get("python") or sys.executable
    lines.append(f"exec {launcher + ' ' if launcher else ''}{q(python)} -m errbook.runbooks.slurmtask task "
                 f"{q(str(spool))} {q(name)}")
    return "\n".join(lines) + "\n"


def _pythonpath() -> str:
    return str(paths.PACKAGE_DIR.parent)


def new_run_id() -> str:
    """Unique per submission: the merge's record key is (run id, task number), whatever the spool is called."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(4)


def prepare(root: Path, chosen: list, fleet: dict, class_names: list[str] | None, overrides: dict,
            tiers: str, timeout: float, spool: Path, run_id: str | None = None) -> dict:
    """Write the manifest and batch scripts of a new spool; nothing is submitted yet."""
    from errbook.runbooks import runner
    classes = fleet["classes"]
    names = class_names or list(classes)
    unknown = [n for n in names if n not in classes]
    if unknown:
        raise FleetError(f"no node class {unknown} in the fleet file (classes: {', '.join(classes)})")
    if spool.exists() and any(spool.iterdir()):
        raise FleetError(f"spool folder {spool} exists and is not empty")
    for sub in ("logs", "tasks", "nb"):
        (spool / sub).mkdir(parents=True, exist_ok=True)
    man: dict[str, Any] = {"format": FORMAT, "run": run_id or new_run_id(), "created": utcnow(), "root": str(root),
           "commit": runner.git_commit(root), "submit_host": socket.gethostname(), "tasks": [], "classes": {}}
    for name in names:
        opts = {**classes[name], **{k: v for k, v in overrides.items() if v not in (None, [], "")}}
        if overrides.get("sbatch"):
            opts["sbatch"] = list(classes[name].get("sbatch") or []) + list(overrides["sbatch"])
        c_tiers = opts.get("tiers") or tiers
        c_timeout = float(opts.get("timeout") or timeout)
        task_ids = []
        for i, e in enumerate(chosen):
            n = len(man["tasks"])
            man["tasks"].append({"task": n, "class": name, "index": i, "entry": e.id,
                                 "runbook": e["verification"]["runbook"], "tiers": c_tiers, "timeout": c_timeout,
                                 "entry_tiers": list(e["verification"].get("tiers") or [])})
            task_ids.append(n)
        script = spool / f"job-{name}.sh"
        script.write_text(batch_script(spool, name, opts, _pythonpath()), encoding="utf-8")
        script.chmod(0o755)
        man["classes"][name] = {"options": opts, "tasks": task_ids, "job": None,
                                "sbatch": ["sbatch", "--parsable"] + sbatch_args(name, opts, len(task_ids), spool,
                                                                                 c_timeout) + [str(script)]}
    write_json(spool / MANIFEST, man)
    return man


def submit(spool: Path, man: dict) -> list[str]:
    """sbatch every class's job array; job ids go into the manifest as soon as each is known."""
    errors = []
    for name, c in man["classes"].items():
        if c.get("job"):
            continue
        rc, out, err = run_cmd(c["sbatch"], timeout=120)
        m = re.match(r"\s*(\d+)", out)
        if rc != 0 or not m:
            errors.append(f"sbatch for class {name} failed (exit {rc}): {(err or out).strip()[:500]}")
            continue
        c["job"] = m.group(1)
        c["submitted"] = utcnow()
        write_json(spool / MANIFEST, man)
    return errors


def wait(spool: Path, man: dict, poll: float, out=sys.stderr) -> bool:
    """Poll squeue until no task of the spool's job arrays is pending or running; False if Slurm stopped answering."""
    jobs = job_ids(man)
    total = sum(1 for t in man["tasks"] if task_job(man, t))
    last, failures = None, 0
    while True:
        snap = snapshot_active(jobs)
        if snap is None:
            failures += 1
            if failures >= 10:
                print("slurm: squeue stopped answering; the jobs may still run. Merge later with "
                      f"errbook ledger --merge {spool}", file=out)
                return False
        else:
            failures = 0
            counts: dict[str, int] = {}
            for s in snap.values():
                counts[s] = counts.get(s, 0) + 1
            done = total - len(snap)
            line = (f"slurm: {done}/{total} finished"
                    + "".join(f", {v} {k.lower()}" for k, v in sorted(counts.items())))
            if line != last:
                print(f"{time.strftime('%H:%M:%S')} {line}", file=out, flush=True)
                last = line
            if not snap:
                return True
        time.sleep(poll)
