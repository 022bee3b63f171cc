"""What Slurm says about a fleet run's job arrays: squeue (pending and running tasks), sacct (final states) and
scontrol (what the controller still remembers), parsed into TaskState and Snapshot."""
from __future__ import annotations

import datetime as dt
import re
import subprocess
from dataclasses import dataclass, field


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


def run_cmd(cmd: list[str], timeout: float = 60) -> tuple[int, str, str]:
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
    rc, out, err = run_cmd(["sacct", "-n", "-P", "-X", "-j", ",".join(job_ids),
                         "--format=JobID,State,NodeList,ExitCode,Start,End"])
    if rc == 0:
        snap.states.update(parse_sacct(out))
    else:
        snap.notes.append(f"sacct: {(err or out).strip()[:200]}")
    # The controller keeps finished jobs for MinJobAge (300 s by default): it fills what sacct has not (yet).
    for job in job_ids:
        rc, out, err = run_cmd(["scontrol", "show", "job", "-o", job])
        if rc == 0:
            for k, v in parse_scontrol(out).items():
                snap.states.setdefault(k, v)
    return snap


def snapshot_active(jobs: list[str], notes: list[str] | None = None) -> dict[str, str] | None:
    """{'123_4': 'RUNNING'} for every pending/running task of these array jobs; None if squeue cannot answer."""
    active: dict[str, str] = {}
    for job in jobs:
        rc, out, err = run_cmd(["squeue", "-h", "-r", "-o", "%i|%T", "-j", job])
        if rc != 0:
            if "Invalid job id" in err:         # the controller no longer knows the job: nothing active
                continue
            if notes is not None:
                notes.append(f"squeue: {(err or out).strip()[:200]}")
            return None
        active.update(parse_squeue(out))
    return active
