"""The spool of a fleet run (`errbook run --slurm`): a folder on storage that the submitting host and the compute
nodes share, and its manifest. Compute jobs running runbook code write the spool, so the manifest is checked
field by field before anything uses it, and every read goes through common.regfile.

    manifest.json            what was submitted: run id, root, tasks (entry, tiers, class, array index), job ids
    job-<class>.sh           the batch script of that class's job array
    logs/<job>_<index>.out   each task's stdout/stderr (sbatch --output)
    tasks/<n>.start.json     written by task n when it starts: node, job, platform fingerprint, commit
    tasks/<n>.signal.json    written by task n when Slurm signals it (scancel, time limit, preemption)
    tasks/<n>.jsonl          task n's own ledger (one record): tasks never write the shared ledger
    nb/<n>/                  task n's executed notebook
"""
from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
from pathlib import Path

from errbook.common import regfile
from errbook.errors import ErrbookError
from errbook.runbooks import ledgerrec

MANIFEST = "manifest.json"
FORMAT = 1


class SpoolError(ErrbookError, ValueError):
    """A spool that cannot be merged: no manifest, or one that is not what errbook run --slurm writes (exit 2)."""


MAX_MANIFEST_BYTES = 64 << 20   # about 300 bytes a task
MAX_TASK_FILE_BYTES = 1 << 20   # tasks/<n>.jsonl (one record), tasks/<n>.start.json, tasks/<n>.signal.json


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
        why = _class_problem(name, c, len(tasks))
        if why:
            return why
    for i, t in enumerate(tasks):
        why = _task_problem(i, t, classes)
        if why:
            return why
    return None


def _class_problem(name, c, n_tasks: int) -> str | None:
    where = f"classes.{name if isinstance(name, str) and CLASS_RE.fullmatch(name) else '?'}"
    if not isinstance(name, str) or not CLASS_RE.fullmatch(name):
        return f"{where}: a node class name is letters, digits, . _ - (at most 41)"
    if not isinstance(c, dict):
        return f"{where}: must be a mapping"
    if c.get("job") is not None and not (isinstance(c["job"], str) and JOB_RE.fullmatch(c["job"])):
        return f"{where}.job: must be a Slurm job id (digits) or null"
    if not isinstance(c.get("tasks"), list) or not all(_int(n) and n < n_tasks for n in c["tasks"]):
        return f"{where}.tasks: must be a list of task numbers"
    if not isinstance(c.get("options", {}), dict):
        return f"{where}.options: must be a mapping"
    return None


def _task_problem(i: int, t, classes: dict) -> str | None:
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
    if not isinstance(to, (int, float)) or type(to) not in (int, float) or not math.isfinite(to) or to <= 0:
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


def job_ids(man: dict) -> list[str]:
    return [c["job"] for c in man["classes"].values() if c.get("job")]
