"""`errbook run --slurm`: runbooks on a fleet of GPU nodes, as Slurm job arrays, merged into one ledger.

One array task runs one runbook on one node class. Slurm gives every task of a job array the same options
(partition, constraint, time limit, GPUs), so each node class is submitted as its own job array; with one
node class (the usual case) that is one job array. Everything a run needs and leaves lives in a spool folder
on storage that the submitting host and the compute nodes share:

    manifest.json            what was submitted: run id, root, tasks (entry, tiers, class, array index), job ids
    job-<class>.sh           the batch script of that class's job array
    logs/<job>_<index>.out   each task's stdout/stderr (sbatch --output)
    tasks/<n>.start.json     written by task n when it starts: node, job, platform fingerprint, commit
    tasks/<n>.signal.json    written by task n when Slurm signals it (scancel, time limit, preemption)
    tasks/<n>.jsonl          task n's own ledger (one record): tasks never write the shared ledger
    nb/<n>/                  task n's executed notebook

The submitter (or `errbook ledger --merge SPOOL` later) merges the spool into runbooks/ledger.jsonl with
fleetmerge.merge: exactly once per task, and a task that died without a record is recorded with the state
Slurm gives it (sacct, or scontrol while the controller still remembers the job).
"""
from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import ledgerrec, paths, regfile, yamlpos

MANIFEST = "manifest.json"
FORMAT = 1
DEFAULT_TIERS = "static,toolchain,gpu,rocm"

# Keys a node class (or the top level of a fleet file, as defaults for every class) may set.
CLASS_KEYS = {
    "partition": str, "constraint": str, "account": str, "qos": str, "time": (str, int),
    "gpus": int, "gres": str, "cpus": int, "mem": str, "max_parallel": int,
    "sbatch": list, "modules": list, "setup": list, "env": dict,
    "launcher": str, "python": str, "pythonpath": str, "root": str, "tiers": str, "timeout": (int, float),
}
TOP_KEYS = {"spool": str, "classes": dict}


class FleetError(ValueError):
    """A fleet file or option that cannot be used (exit 2)."""


class SpoolError(ValueError):
    """A spool that cannot be merged: no manifest, or one that is not what errbook run --slurm writes (exit 2)."""


MAX_FLEET_BYTES = 1 << 20       # a fleet file is a few dozen lines
MAX_MANIFEST_BYTES = 64 << 20   # about 300 bytes a task
MAX_TASK_FILE_BYTES = 1 << 20   # tasks/<n>.jsonl (one record), tasks/<n>.start.json, tasks/<n>.signal.json


# ---------------------------------------------------------------- configuration

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
    lines.append(f"exec {launcher + ' ' if launcher else ''}{q(python)} -m errbook.slurm task {q(str(spool))} {q(name)}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- spool

def utcnow() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_json(path: Path, data) -> None:
    """Whole file or nothing: readers on other hosts never see half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


RUN_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]{0,63}")
CLASS_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,40}")
JOB_RE = re.compile(r"[0-9]{1,18}")


def _int(v) -> bool:
    return type(v) is int and v >= 0


def manifest_problem(m) -> str | None:
    """'field: why' for the first thing the merge (or a task) could not use safely, else None."""
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        return f"not a format-{FORMAT} manifest of errbook run --slurm"
    if not isinstance(m.get("run"), str) or not RUN_RE.fullmatch(m["run"]):
        return "run: must be a run id (letters, digits, . _ -; at most 64)"
    classes, tasks = m.get("classes"), m.get("tasks")
    if not isinstance(classes, dict):
        return "classes: must be a mapping of node class to its job"
    if not isinstance(tasks, list):
        return "tasks: must be a list"
    for name, c in classes.items():
        where = f"classes.{name if isinstance(name, str) and CLASS_RE.fullmatch(name) else '?'}"
        if not isinstance(name, str) or not CLASS_RE.fullmatch(name):
            return f"{where}: a node class name is letters, digits, . _ - (at most 41)"
        if not isinstance(c, dict):
            return f"{where}: must be a mapping"
        if c.get("job") is not None and not (isinstance(c["job"], str) and JOB_RE.fullmatch(c["job"])):
            return f"{where}.job: must be a Slurm job id (digits) or null"
        if not isinstance(c.get("tasks"), list) or not all(_int(n) and n < len(tasks) for n in c["tasks"]):
            return f"{where}.tasks: must be a list of task numbers"
        if not isinstance(c.get("options", {}), dict):
            return f"{where}.options: must be a mapping"
    for i, t in enumerate(tasks):
        where = f"tasks[{i}]"
        if not isinstance(t, dict):
            return f"{where}: must be a mapping"
        if t.get("task") != i or type(t.get("task")) is not int:
            return f"{where}.task: must be {i} (its place in the list)"
        if not isinstance(t.get("class"), str) or t["class"] not in classes:
            return f"{where}.class: must be one of the manifest's classes"
        ct = classes[t["class"]]["tasks"]
        if not _int(t.get("index")) or t["index"] >= len(ct) or ct[t["index"]] != i:
            return f"{where}.index: must be the task's place in classes.{t['class']}.tasks"
        if not isinstance(t.get("entry"), str) or not ledgerrec.ENTRY_RE.fullmatch(t["entry"]):
            return f"{where}.entry: must be an entry id (RMN-NNNN)"
        if not isinstance(t.get("runbook"), str) or not ledgerrec.RUNBOOK_RE.fullmatch(t["runbook"]):
            return f"{where}.runbook: must be runbooks/<class>/RMN-NNNN.ipynb"
        if not isinstance(t.get("tiers"), str) or len(t["tiers"]) > 200:
            return f"{where}.tiers: must be a comma-separated list of tiers"
        to = t.get("timeout")
        if type(to) not in (int, float) or not math.isfinite(to) or to <= 0:
            return f"{where}.timeout: must be a number of seconds > 0"
        et = t.get("entry_tiers", [])
        if not isinstance(et, list) or not all(x in ledgerrec.TIERS for x in et):
            return f"{where}.entry_tiers: must be a list of tiers ({', '.join(ledgerrec.TIERS)})"
    return None


def load_manifest(spool: Path) -> dict:
    try:
        raw = regfile.read_beneath(spool, MANIFEST, MAX_MANIFEST_BYTES)
    except FileNotFoundError:
        raise SpoolError(f"{spool} is not an errbook spool (no {MANIFEST})") from None
    except OSError as e:
        raise SpoolError(f"{spool / MANIFEST}: cannot be read: {e.strerror or e}") from None
    try:
        m = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise SpoolError(f"{spool / MANIFEST}: not valid JSON (nested too deeply)") from None
    except ValueError as e:            # JSONDecodeError (with its line), UnicodeDecodeError, a huge integer
        where = f":{e.lineno}" if isinstance(e, json.JSONDecodeError) else ""
        raise SpoolError(f"{spool / MANIFEST}{where}: not valid JSON ({getattr(e, 'msg', None) or e})") from None
    why = manifest_problem(m)
    if why:
        raise SpoolError(f"{spool / MANIFEST}: {why}")
    return m


def task_job(man: dict, t: dict) -> str | None:
    """'<array job id>_<index>' of a task, None when its class was never submitted."""
    job = man["classes"][t["class"]].get("job")
    return f"{job}_{t['index']}" if job else None


# ---------------------------------------------------------------- Slurm queries

@dataclass
class TaskState:
    state: str                      # COMPLETED, CANCELLED, TIMEOUT, ... (first word of Slurm's state)
    detail: str = ""                # e.g. "CANCELLED by 0"
    node: str = ""
    exit_code: str = ""
    start: str | None = None        # UTC, YYYY-MM-DDTHH:MM:SSZ
    end: str | None = None
    source: str = ""                # sacct | scontrol


@dataclass
class Snapshot:
    reachable: bool                             # squeue answered: the states below are current
    active: dict[str, str] = field(default_factory=dict)       # job_index -> PENDING/RUNNING/...
    states: dict[str, TaskState] = field(default_factory=dict)  # job_index -> final (or current) state
    notes: list[str] = field(default_factory=list)


def _run(cmd: list[str], timeout: float = 60) -> tuple[int, str, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except FileNotFoundError:
        return 127, "", f"{cmd[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, "", f"{cmd[0]}: no answer in {timeout:.0f}s"


def _local_to_utc(s: str | None) -> str | None:
    """Slurm prints times in the local time zone without an offset; 'Unknown'/'None' mean no time."""
    if not s or not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", s):
        return None
    t = dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").astimezone(dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def expand_indices(spec: str) -> list[int]:
    """Array index specs as Slurm prints them: '4', '[2-5,9]', '2-5:2%3'."""
    spec = spec.split("%")[0].strip("[]")
    out: list[int] = []
    for part in filter(None, spec.split(",")):
        m = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part)
        if not m:
            continue
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
        out.extend(range(a, b + 1, int(m.group(3) or 1)))
    return out


def parse_squeue(text: str) -> dict[str, str]:
    """`squeue -h -r -o %i|%T` lines -> {'123_4': 'RUNNING'}."""
    out = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) >= 2 and "_" in parts[0]:
            job, idx = parts[0].split("_", 1)
            for i in expand_indices(idx):
                out[f"{job}_{i}"] = parts[1]
    return out


def parse_sacct(text: str) -> dict[str, TaskState]:
    """`sacct -n -P -X --format=JobID,State,NodeList,ExitCode,Start,End` lines."""
    out = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 6 or "_" not in parts[0]:
            continue
        job, idx = parts[0].split("_", 1)
        st = TaskState(state=parts[1].split()[0] if parts[1].strip() else "UNKNOWN", detail=parts[1].strip(),
                       node=parts[2] if parts[2] not in ("None assigned", "") else "", exit_code=parts[3],
                       start=_local_to_utc(parts[4]), end=_local_to_utc(parts[5]), source="sacct")
        for i in expand_indices(idx):
            out[f"{job}_{i}"] = st
    return out


def _field(line: str, key: str) -> str:
    m = re.search(rf"(?:^|\s){key}=(\S*)", line)
    return m.group(1) if m else ""


def parse_scontrol(text: str) -> dict[str, TaskState]:
    """`scontrol show job -o <array job>` lines (one per task, or per pending range)."""
    out = {}
    for line in text.splitlines():
        job, idx = _field(line, "ArrayJobId"), _field(line, "ArrayTaskId")
        if not job or not idx:
            continue
        state = _field(line, "JobState") or "UNKNOWN"
        node = _field(line, "BatchHost") or _field(line, "NodeList")
        st = TaskState(state=state, detail=state, node="" if node == "(null)" else node,
                       exit_code=_field(line, "ExitCode"), start=_local_to_utc(_field(line, "StartTime")),
                       end=_local_to_utc(_field(line, "EndTime")), source="scontrol")
        for i in expand_indices(idx):
            out[f"{job}_{i}"] = st
    return out


def snapshot(job_ids: list[str]) -> Snapshot:
    """What Slurm says now about these array jobs: active tasks (squeue), and states (sacct, else scontrol)."""
    snap = Snapshot(reachable=True)
    if not job_ids:
        return snap
    active = snapshot_active(job_ids, snap.notes)
    if active is None:
        snap.reachable = False
        return snap
    snap.active = active
    rc, out, err = _run(["sacct", "-n", "-P", "-X", "-j", ",".join(job_ids),
                         "--format=JobID,State,NodeList,ExitCode,Start,End"])
    if rc == 0:
        snap.states.update(parse_sacct(out))
    else:
        snap.notes.append(f"sacct: {(err or out).strip()[:200]}")
    # The controller keeps finished jobs for MinJobAge (300 s by default): it fills what sacct has not (yet).
    for job in job_ids:
        rc, out, err = _run(["scontrol", "show", "job", "-o", job])
        if rc == 0:
            for k, v in parse_scontrol(out).items():
                snap.states.setdefault(k, v)
    return snap


# ---------------------------------------------------------------- submission

def _pythonpath() -> str:
    return str(paths.PACKAGE_DIR.parent)


def new_run_id() -> str:
    """Unique per submission: the merge's record key is (run id, task number), whatever the spool is called."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(4)


def prepare(root: Path, chosen: list, fleet: dict, class_names: list[str] | None, overrides: dict,
            tiers: str, timeout: float, spool: Path, run_id: str | None = None) -> dict:
    """Write the manifest and batch scripts of a new spool; nothing is submitted yet."""
    from . import runner
    classes = fleet["classes"]
    names = class_names or list(classes)
    unknown = [n for n in names if n not in classes]
    if unknown:
        raise FleetError(f"no node class {unknown} in the fleet file (classes: {', '.join(classes)})")
    if spool.exists() and any(spool.iterdir()):
        raise FleetError(f"spool folder {spool} exists and is not empty")
    for sub in ("logs", "tasks", "nb"):
        (spool / sub).mkdir(parents=True, exist_ok=True)
    man = {"format": FORMAT, "run": run_id or new_run_id(), "created": utcnow(), "root": str(root),
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
        rc, out, err = _run(c["sbatch"], timeout=120)
        m = re.match(r"\s*(\d+)", out)
        if rc != 0 or not m:
            errors.append(f"sbatch for class {name} failed (exit {rc}): {(err or out).strip()[:500]}")
            continue
        c["job"] = m.group(1)
        c["submitted"] = utcnow()
        write_json(spool / MANIFEST, man)
    return errors


def job_ids(man: dict) -> list[str]:
    return [c["job"] for c in man["classes"].values() if c.get("job")]


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


def snapshot_active(jobs: list[str], notes: list[str] | None = None) -> dict[str, str] | None:
    """{'123_4': 'RUNNING'} for every pending/running task of these array jobs; None if squeue cannot answer."""
    active: dict[str, str] = {}
    for job in jobs:
        rc, out, err = _run(["squeue", "-h", "-r", "-o", "%i|%T", "-j", job])
        if rc != 0:
            if "Invalid job id" in err:         # the controller no longer knows the job: nothing active
                continue
            if notes is not None:
                notes.append(f"squeue: {(err or out).strip()[:200]}")
            return None
        active.update(parse_squeue(out))
    return active


# ---------------------------------------------------------------- CLI entry points

def _overrides(args) -> dict:
    return {"partition": args.partition, "constraint": args.constraint, "account": args.account,
            "time": args.time, "gpus": args.gpus, "sbatch": args.sbatch_arg or []}


def main(args, root: Path) -> int:
    """`errbook run --slurm ...`"""
    from . import fleetmerge, runner
    from .runbook import _parse_tiers
    try:
        _parse_tiers(args.tier)
        fpath = Path(args.fleet) if args.fleet else default_fleet_file(root)
        fleet = load_fleet(fpath)
    except (ValueError, OSError) as e:
        print(f"errbook run: {e}", file=sys.stderr)
        return 2
    if not shutil.which("sbatch"):
        print("errbook run: --slurm needs Slurm's sbatch on PATH (run it on a login node of the cluster)",
              file=sys.stderr)
        return 2
    chosen = runner.select(root, args.entries, args.klass, args.all)
    if not chosen:
        print("errbook run: no runbooks selected", file=sys.stderr)
        return 2
    run_id = new_run_id()
    base = Path(fleet["spool"]) if fleet.get("spool") else root / ".errbook" / "spool"
    spool = Path(args.spool).resolve() if args.spool else (base / run_id).resolve()
    try:
        man = prepare(root, chosen, fleet, args.node_class, _overrides(args), args.tier, args.timeout, spool,
                      run_id)
    except (FleetError, OSError) as e:
        print(f"errbook run: {e}", file=sys.stderr)
        return 2
    errors = submit(spool, man)
    for err in errors:
        print(f"errbook run: {err}", file=sys.stderr)
    jobs = {n: c["job"] for n, c in man["classes"].items() if c.get("job")}
    for n, c in man["classes"].items():
        if c.get("job"):
            print(f"submitted job array {c['job']} (node class {n}, {len(c['tasks'])} runbook(s)); "
                  f"spool {spool}", file=sys.stderr, flush=True)
    if not jobs:
        return 2
    if args.no_wait:
        if args.json:
            print(json.dumps({"spool": str(spool), "run": man["run"], "jobs": jobs}, indent=1))
        else:
            print(f"spool: {spool}\njobs: " + " ".join(jobs.values())
                  + f"\nmerge when they are done: errbook ledger --merge {spool}")
        return 2 if errors else 0
    try:
        finished = wait(spool, man, args.poll, out=sys.stderr)
    except KeyboardInterrupt:
        print(f"\nstopped waiting; the jobs keep running (scancel {' '.join(jobs.values())} stops them). "
              f"Merge later: errbook ledger --merge {spool}", file=sys.stderr)
        return 130
    lpath = Path(args.ledger) if args.ledger else None
    try:
        res = fleetmerge.merge(spool, root, lpath, settle=0 if not finished else 30)
    except (SpoolError, OSError) as e:
        print(f"errbook run: {e}", file=sys.stderr)
        return 2
    return report(res, args.json, spool) or (2 if errors else 0)


def report(res: dict, as_json: bool, spool: Path) -> int:
    recs = res["added"]
    if as_json:
        print(json.dumps({"spool": str(spool), **{k: v for k, v in res.items()}}, indent=1, ensure_ascii=False))
    else:
        for r in res["added"]:
            s = r.get("slurm", {})
            print(f"merged {s.get('job', '?'):>10} {r['entry']} {r['outcome']:<8} on {s.get('node') or '?'}"
                  + (f"  ({r['reason'][:200]})" if r.get("reason") and r["outcome"] != "passed" else ""))
        print(f"ledger: {len(res['added'])} new record(s), {len(res['already'])} already merged, "
              f"{len(res['unfinished'])} task(s) not finished" + (f", {len(res['problems'])} problem(s)"
                                                                    if res["problems"] else ""))
        for p in res["problems"]:
            print(f"  problem: {p}", file=sys.stderr)
        for u in res["unfinished"]:
            print(f"  not finished: {u}", file=sys.stderr)
    bad = [r for r in recs if r["outcome"] not in ("passed", "skipped")]
    if res["problems"]:
        return 2
    return 1 if bad else 0


def merge_main(args, root: Path) -> int:
    """`errbook ledger --merge SPOOL`"""
    from . import fleetmerge
    spool = Path(args.merge).resolve()
    try:
        res = fleetmerge.merge(spool, root, None, settle=args.settle)
    except (SpoolError, OSError) as e:
        print(f"errbook ledger: {e}", file=sys.stderr)
        return 2
    rc = report(res, args.json, spool)
    return 2 if rc == 2 else 0


# ---------------------------------------------------------------- the array task

def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def task_main(spool: Path, klass: str) -> int:
    """One array task: run one runbook and write its record to the task's own ledger file."""
    from . import ledger, platform, runner
    man = load_manifest(spool)
    index = int(os.environ["SLURM_ARRAY_TASK_ID"])
    n = man["classes"][klass]["tasks"][index]
    t = man["tasks"][n]
    job = f"{os.environ.get('SLURM_ARRAY_JOB_ID', '?')}_{index}"
    node = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    tdir = spool / "tasks"

    def on_signal(signum, _frame):
        # Slurm sends SIGTERM to cancel, at the time limit and on preemption, then SIGKILL after KillWait.
        # Leave a note, stop the runbook's processes (they would outlive us as orphans), and write no record.
        write_json(tdir / f"{n}.signal.json", {"signal": signal.Signals(signum).name, "at": utcnow(),
                                               "job": job, "node": node})
        for pid in _descendants(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(128 + signum)

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
        signal.signal(s, on_signal)
    root = Path(man["classes"][klass]["options"].get("root") or man["root"])
    fp = platform.detect()["fingerprint"]
    visible = {k: os.environ[k] for k in ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
                                          "GPU_DEVICE_ORDINAL") if k in os.environ}
    write_json(tdir / f"{n}.start.json", {
        "task": n, "job": job, "node": node, "started": utcnow(), "fingerprint": fp,
        "platform_label": platform.label(fp), "commit": runner.git_commit(root),
        "restart": os.environ.get("SLURM_RESTART_COUNT", "0"), "visible_devices": visible, "pid": os.getpid()})
    print(f"errbook task {n} ({t['entry']}, class {klass}) as {job} on {node}: {platform.label(fp)}", flush=True)
    e = runner.select(root, [t["entry"]], None, False)[0]
    out_dir = spool / "nb" / str(n)
    rec = runner.run_one(e, root, t["tiers"], float(t["timeout"]), out_dir)
    made = sorted(out_dir.glob(f"{e.id}--*.ipynb"))
    rec["slurm"] = {"run": man["run"], "task": n, "job": job, "node": node, "class": klass,
                    "restart": os.environ.get("SLURM_RESTART_COUNT", "0")}
    if visible:
        rec["slurm"]["visible_devices"] = ",".join(f"{k}={v}" for k, v in visible.items())
    rec.pop("notebook", None)
    if len(made) == 1:
        # The merge copies the notebook to where local runs keep theirs; the record already names that place.
        rec["slurm"]["notebook"] = f"nb/{n}/{made[0].name}"
        rec["notebook"] = str(paths.executed_dir(Path(".")) / made[0].name)
    ledger.append(tdir / f"{n}.jsonl", rec)
    print(f"errbook task {n}: {rec['outcome']}", flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "task":
        sys.exit(task_main(Path(sys.argv[2]), sys.argv[3]))
    print("usage: python -m errbook.slurm task SPOOL CLASS   (run by the batch script of errbook run --slurm)",
          file=sys.stderr)
    sys.exit(2)
