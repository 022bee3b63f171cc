"""Merge a fleet spool (see slurm.py) into the ledger: one record per finished task, exactly once.

A record's key is its spool's run id and task number (`slurm.run`, `slurm.task`; `slurm.job` is the Slurm
array task, e.g. 123_4). The merge holds an exclusive lock on the spool while it reads the ledger, so two
merges of one spool cannot both append a task; a task already in the ledger is never appended again.

What each task becomes:
- it wrote its own record  -> that record (the runbook's outcome), with the Slurm state added;
- still pending or running -> nothing yet (listed as unfinished; merge again later);
- started, no record       -> Slurm's state decides: TIMEOUT/DEADLINE -> timeout, CANCELLED, PREEMPTED,
                              NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL -> crashed, FAILED or COMPLETED -> error
                              (the batch script or the task failed; the log's tail is kept as the reason).
                              If the ledger reader allows an outcome named after the state (e.g. "cancelled"),
                              that name is used instead;
- never started            -> skipped, with the reason (cancelled while pending, or the batch script failed).
The exact Slurm state is always kept in `slurm.state`.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import time
from pathlib import Path

from . import ledger, slurm

BASE_OUTCOMES = ("passed", "failed", "error", "crashed", "timeout", "skipped")
STATE_OUTCOME = {"TIMEOUT": "timeout", "DEADLINE": "timeout", "CANCELLED": "crashed", "PREEMPTED": "crashed",
                 "NODE_FAIL": "crashed", "OUT_OF_MEMORY": "crashed", "BOOT_FAIL": "crashed", "REVOKED": "crashed",
                 "FAILED": "error", "COMPLETED": "error"}
ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
          "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "SPECIAL_EXIT", "RESV_DEL_HOLD"}


def allowed_outcomes() -> set[str]:
    """The outcomes the ledger reader accepts (a stricter reader may define them; else the base six)."""
    try:
        from . import ledgerrec                              # present once the hardened reader is merged
        return set(ledgerrec.OUTCOMES)
    except ImportError:
        return set(BASE_OUTCOMES)


def outcome_for(state: str, started: bool, allowed: set[str]) -> str:
    named = state.lower()
    if named in allowed and named not in BASE_OUTCOMES:
        return named
    if not started:
        return "skipped"
    return STATE_OUTCOME.get(state, "crashed")


def _log_tail(spool: Path, job: str | None, limit: int = 700) -> str:
    if not job:
        return ""
    p = spool / "logs" / f"{job}.out"
    try:
        with open(p, "rb") as f:
            f.seek(max(0, os.path.getsize(p) - limit))
            return f.read().decode("utf-8", errors="replace").strip()
    except OSError:
        return ""


def _seconds(a: str | None, b: str | None) -> float | None:
    import datetime as dt
    try:
        f = "%Y-%m-%dT%H:%M:%SZ"
        return max(0.0, (dt.datetime.strptime(b, f) - dt.datetime.strptime(a, f)).total_seconds())
    except (TypeError, ValueError):
        return None


def synthesize(spool: Path, man: dict, t: dict, job: str, st: slurm.TaskState | None, allowed: set[str]) -> dict:
    """The record of a task that wrote none."""
    n = t["task"]
    start = slurm.read_json(spool / "tasks" / f"{n}.start.json")
    sig = slurm.read_json(spool / "tasks" / f"{n}.signal.json")
    started = isinstance(start, dict)
    tail = _log_tail(spool, job)
    state = st.state if st else "UNKNOWN"
    node = (st.node if st else "") or (start or {}).get("node", "")
    if st:
        outcome = outcome_for(state, started, allowed)
    else:       # Slurm forgot it (no accounting, and older than the controller's MinJobAge)
        outcome = "crashed" if started else "skipped"
    if not started and tail and outcome == "skipped":
        outcome = "error"                   # the batch script ran and failed before the task could start
    what = f"Slurm task {job}" + (f" on {node}" if node else "")
    if st:
        what += f" ended {st.detail or state}" + (f" (exit {st.exit_code})" if st.exit_code else "")
    else:
        what += " ended; Slurm no longer knows its state (no accounting, and the controller has forgotten it)"
    if started:
        why = f"{what}; the runbook wrote no record"
        if isinstance(sig, dict):
            why += f"; the task received {sig.get('signal')} at {sig.get('at')}"
    elif tail:
        why = f"{what} before the task started"
    else:
        why = f"{what} without starting (cancelled while pending, or never scheduled)"
    if tail and outcome != "skipped":
        why += ". Log tail: " + tail
    date = (st.end if st else None) or (sig or {}).get("at") or slurm.utcnow()
    fp = start["fingerprint"] if started and isinstance(start.get("fingerprint"), dict) else {"platform": "unknown"}
    tiers = {x: {"outcome": outcome} for x in t.get("entry_tiers") or []}
    if outcome == "skipped":
        tiers = {x: {"outcome": "skipped", "reason": "the Slurm task never started"} for x in tiers}
    rec = {"entry": t["entry"], "runbook": t["runbook"], "outcome": outcome, "tiers": tiers,
           "requested_tiers": t["tiers"], "fingerprint": fp,
           "platform_label": start.get("platform_label", "") if started else "not run (the task never started)",
           "date": date, "commit": (start or {}).get("commit") or man.get("commit") or "unknown",
           "reason": why[-3000:]}
    secs = _seconds((st.start if st else None) or (start or {}).get("started"), date)
    if secs is not None and started:
        rec["seconds"] = secs
    return rec


def _key(rec: dict) -> tuple | None:
    s = rec.get("slurm")
    if isinstance(s, dict) and isinstance(s.get("run"), str) and isinstance(s.get("task"), int):
        return (s["run"], s["task"])
    return None


def _own_record(spool: Path, n: int, problems: list[str]) -> dict | None:
    recs, bad = ledger.read(spool / "tasks" / f"{n}.jsonl")
    problems += [f"task {n}: {p}" for p in bad]
    return recs[-1] if recs else None


def _plan(spool: Path, man: dict, snap: slurm.Snapshot, done: set, allowed: set[str], problems: list[str]):
    """(records to append, keys already merged, unfinished task labels, undetermined task numbers)."""
    todo, already, unfinished, undetermined = [], [], [], []
    for t in man["tasks"]:
        n = t["task"]
        job = slurm.task_job(man, t)
        if job is None:
            continue                          # its class was never submitted: there is no run to record
        key = (man["run"], n)
        label = f"{job} {t['entry']} (task {n})"
        if key in done:
            already.append(key)
            continue
        if job in snap.active:                # pending, running, completing, requeued: not done yet
            unfinished.append(f"{label}: {snap.active[job].lower()}")
            continue
        own = _own_record(spool, n, problems)
        st = snap.states.get(job)
        if own is not None:
            rec = own
        elif not snap.reachable:
            unfinished.append(f"{label}: no record, and Slurm cannot be asked whether it still runs")
            continue
        elif st is not None and st.state in ACTIVE:
            unfinished.append(f"{label}: {st.state.lower()}")
            continue
        elif st is None and (spool / "tasks" / f"{n}.start.json").is_file():
            undetermined.append(n)
            rec = synthesize(spool, man, t, job, None, allowed)
        else:
            rec = synthesize(spool, man, t, job, st, allowed)
        if not isinstance(rec.get("slurm"), dict):
            rec["slurm"] = {}
        s = rec["slurm"]
        s.update(run=man["run"], task=n, job=job, array_job=job.split("_")[0], array_index=t["index"],
                 **{"class": t["class"]})
        if st is not None:
            s.update(state=st.state, state_source=st.source)
            if st.node and not s.get("node"):
                s["node"] = st.node
            if st.exit_code:
                s["exit_code"] = st.exit_code
        elif "state" not in s:
            s["state"] = "UNKNOWN"
        todo.append(rec)
    return todo, already, unfinished, undetermined


def merge(spool: Path, root: Path, lpath: Path | None = None, settle: float = 10,
          query=slurm.snapshot) -> dict:
    """Merge every finished task of a spool into the ledger (default runbooks/ledger.jsonl of root)."""
    man = slurm.load_manifest(spool)
    lpath = lpath or ledger.default_path(root)
    allowed = allowed_outcomes()
    jobs = slurm.job_ids(man)
    with open(spool / "merge.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        problems: list[str] = []
        deadline = time.monotonic() + settle
        while True:
            snap = query(jobs)
            existing, bad = ledger.read(lpath)
            done = {k for k in map(_key, existing) if k}
            problems = []
            todo, already, unfinished, undetermined = _plan(spool, man, snap, done, allowed, problems)
            # A task that just ended may not be in sacct yet: ask again for a while before calling it unknown.
            if not undetermined or time.monotonic() >= deadline:
                break
            time.sleep(min(5.0, max(0.5, deadline - time.monotonic())))
        added = []
        for rec in todo:
            s = rec["slurm"]
            src = spool / s["notebook"] if s.get("notebook") else None
            if src is not None and src.is_file() and rec.get("notebook"):
                dest = root / rec["notebook"]
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
            else:
                rec.pop("notebook", None)
            try:
                ledger.append(lpath, rec)
            except (ValueError, OSError) as e:
                problems.append(f"task {s['task']} ({rec.get('entry')}): not merged: {e}")
                continue
            added.append(rec)
    return {"run": man["run"], "added": added, "already": [list(k) for k in already],
            "unfinished": unfinished, "problems": problems,
            "notes": snap.notes + [f"the ledger has unreadable lines: {p}" for p in bad], "ledger": str(lpath)}
