"""Merge a fleet spool (see slurm.py, spool.py) into the ledger: one record per finished task, exactly once.

A record's key is its spool's run id and task number (`slurm.run`, `slurm.task`; `slurm.job` is the Slurm
array task, e.g. 123_4). Whether a key is in the ledger is decided under the ledger's own lock, just before
the append (ledger.append_new), so merges at once, of one spool or of two copies of it, add each task once.

The spool is untrusted input: compute jobs running runbook code write it. The manifest is checked field by
field (spool.load_manifest); every file is opened inside the spool, never through a symlink, and only if it
is a regular file (regfile.open_beneath: a FIFO cannot hang the merge); a task's own record must be of the
entry and runbook the manifest gave that task; and a notebook is published only from
`nb/<task>/<entry>--<platform>.ipynb`, copied from the file descriptor that was checked. Anything else is
reported as a problem (exit 2), and the other tasks are merged.

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

import contextlib
import datetime as dt
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Literal

from errbook.common import paths, regfile
from errbook.runbooks import ledger, ledgerrec
from errbook.runbooks.slurmstate import Snapshot, TaskState, snapshot
from errbook.runbooks.spool import MAX_TASK_FILE_BYTES, job_ids, load_manifest, task_job, utcnow

BASE_OUTCOMES = ("passed", "failed", "error", "crashed", "timeout", "skipped")
STATE_OUTCOME = {"TIMEOUT": "timeout", "DEADLINE": "timeout", "CANCELLED": "crashed", "PREEMPTED": "crashed",
                 "NODE_FAIL": "crashed", "OUT_OF_MEMORY": "crashed", "BOOT_FAIL": "crashed", "REVOKED": "crashed",
                 "FAILED": "error", "COMPLETED": "error"}
# Where a task leaves its executed notebook (slurmtask.task_main; the platform part is runner.run_one's slug).
NOTEBOOK_RE = re.compile(r"nb/([0-9]+)/(RMN-[0-9]{4})--([A-Za-z0-9_+()-][A-Za-z0-9._+()-]{0,119})\.ipynb")
MAX_NOTEBOOK_BYTES = 256 << 20      # run notebooks are capped (nbcap) far below this
ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
          "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "SPECIAL_EXIT", "RESV_DEL_HOLD"}


def allowed_outcomes() -> set[str]:
    """The outcomes the ledger reader accepts (ledgerrec.OUTCOMES)."""
    return set(ledgerrec.OUTCOMES)


def outcome_for(state: str, started: bool, allowed: set[str]) -> str:
    named = state.lower()
    if named in allowed and named not in BASE_OUTCOMES:
        return named
    if not started:
        return "skipped"
    return STATE_OUTCOME.get(state, "crashed")


def _task_json(spool: Path, rel: str, problems: list[str] | None):
    """A JSON file the task wrote, or None (missing, unusable; one that must not be read is a problem)."""
    try:
        raw = regfile.read_beneath(spool, rel, MAX_TASK_FILE_BYTES)
    except FileNotFoundError:
        return None
    except OSError as e:
        if problems is not None:
            problems.append(f"{e}: ignored")
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


def _log_tail(spool: Path, job: str | None, problems: list[str], limit: int = 700) -> str:
    if not job:
        return ""
    try:
        fd = regfile.open_beneath(spool, f"logs/{job}.out")
    except FileNotFoundError:
        return ""
    except OSError as e:
        problems.append(f"{e}: ignored")
        return ""
    try:
        size = os.fstat(fd).st_size
        return os.pread(fd, limit, max(0, size - limit)).decode("utf-8", errors="replace").strip()
    except OSError:
        return ""
    finally:
        os.close(fd)


def _seconds(a: str | None, b: str | None) -> float | None:
    if a is None or b is None:
        return None
    try:
        f = "%Y-%m-%dT%H:%M:%SZ"
        return max(0.0, (dt.datetime.strptime(b, f) - dt.datetime.strptime(a, f)).total_seconds())
    except (TypeError, ValueError):
        return None


def _is_date(d) -> bool:
    return isinstance(d, str) and bool(ledgerrec.DATE_RE.fullmatch(d)) and _seconds(d, d) is not None


def synthesize(spool: Path, man: dict, t: dict, job: str, st: TaskState | None, allowed: set[str],
               problems: list[str] | None = None) -> dict:
    """The record of a task that wrote none."""
    n = t["task"]
    problems = [] if problems is None else problems
    start = _task_json(spool, f"tasks/{n}.start.json", problems)
    sig = _task_json(spool, f"tasks/{n}.signal.json", problems)
    # What the task wrote is used only where it has the type and form a record needs.
    start = start if isinstance(start, dict) else None
    sig = sig if isinstance(sig, dict) else None
    started = start is not None
    tail = _log_tail(spool, job, problems)
    outcome = _synth_outcome(st, started, tail, allowed)
    why = _synth_reason(job, st, start, sig, tail, outcome)
    date = next((d for d in ((st.end if st else None), (sig or {}).get("at"))
                 if _is_date(d)), None) or utcnow()
    fp = (start or {}).get("fingerprint")
    fp = fp if started and not ledgerrec.fingerprint_problem(fp) else {"platform": "unknown"}
    label = (start or {}).get("platform_label")
    commit = next((c for c in ((start or {}).get("commit"), man.get("commit"))
                   if isinstance(c, str) and ledgerrec.COMMIT_RE.fullmatch(c)), "unknown")
    tiers = {x: {"outcome": outcome} for x in t.get("entry_tiers") or []}
    if outcome == "skipped":
        tiers = {x: {"outcome": "skipped", "reason": "the Slurm task never started"} for x in tiers}
    rec = {"entry": t["entry"], "runbook": t["runbook"], "outcome": outcome, "tiers": tiers,
           "requested_tiers": t["tiers"], "fingerprint": fp,
           "platform_label": (label if isinstance(label, str) else "")[:200] if started
           else "not run (the task never started)",
           "date": date, "commit": commit,
           "reason": why[-3000:]}
    secs = _seconds((st.start if st else None) or (start or {}).get("started"), date)
    if secs is not None and started:
        rec["seconds"] = secs
    return rec


def _synth_outcome(st: TaskState | None, started: bool, tail: str, allowed: set[str]) -> str:
    # Without a state Slurm forgot the task (no accounting, and older than the controller's MinJobAge).
    outcome = outcome_for(st.state, started, allowed) if st else ("crashed" if started else "skipped")
    if not started and tail and outcome == "skipped":
        outcome = "error"                   # the batch script ran and failed before the task could start
    return outcome


def _synth_reason(job: str, st: TaskState | None, start: dict | None, sig: dict | None, tail: str, outcome: str) -> str:
    """What happened to a task that wrote no record, in words, with its log's tail."""
    state = st.state if st else "UNKNOWN"
    node = (st.node if st else "") or (start or {}).get("node", "")
    what = f"Slurm task {job}" + (f" on {node}" if node else "")
    if st:
        what += f" ended {st.detail or state}" + (f" (exit {st.exit_code})" if st.exit_code else "")
    else:
        what += " ended; Slurm no longer knows its state (no accounting, and the controller has forgotten it)"
    if start is not None:
        why = f"{what}; the runbook wrote no record"
        if isinstance(sig, dict):
            why += f"; the task received {sig.get('signal')} at {sig.get('at')}"
    elif tail:
        why = f"{what} before the task started"
    else:
        why = f"{what} without starting (cancelled while pending, or never scheduled)"
    if tail and outcome != "skipped":
        why += ". Log tail: " + tail
    return why


def _key(rec: dict) -> tuple | None:
    s = rec.get("slurm")
    if isinstance(s, dict) and isinstance(s.get("run"), str) and isinstance(s.get("task"), int):
        return (s["run"], s["task"])
    return None


def _show(v, n: int = 80) -> str:
    return repr(v)[:n]


def _own_record(spool: Path, t: dict, problems: list[str]) -> dict | None | Literal[False]:
    """The task's own record; None when it wrote none; False when it cannot be used (a problem says why)."""
    n = t["task"]
    rel = f"tasks/{n}.jsonl"
    try:
        fd = regfile.open_beneath(spool, rel)
    except FileNotFoundError:
        return None
    except OSError as e:
        problems.append(f"task {n} ({t['entry']}): {e}: not merged")
        return False
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(fd).st_size
        if size > MAX_TASK_FILE_BYTES:         # a task writes one record of a few KiB
            problems.append(f"task {n} ({t['entry']}): {rel}: {size} bytes, more than a task's record can be: "
                            "not merged")
            return False
        recs, bad = ledger.parse(f, rel)
    problems += [f"task {n}: {p}" for p in bad]
    if not recs:
        return False if bad else None
    rec = recs[-1]
    # The record is the task's word: it must be about the runbook the manifest gave the task.
    if rec["entry"] != t["entry"] or rec["runbook"] != t["runbook"]:
        problems.append(f"task {n}: its record is of {_show(rec['entry'])} ({_show(rec['runbook'])}), but the "
                        f"manifest gave task {n} {t['entry']} ({t['runbook']}): not merged")
        return False
    return rec


def _plan(spool: Path, man: dict, snap: Snapshot, done: set, allowed: set[str], problems: list[str]):
    """(records to append, keys already merged, unfinished task labels, undetermined task numbers)."""
    todo, already, unfinished, undetermined = [], [], [], []
    for t in man["tasks"]:
        n = t["task"]
        job = task_job(man, t)
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
        own = _own_record(spool, t, problems)
        if own is False:
            continue
        st = snap.states.get(job)
        if own is not None:
            rec = own
        elif not snap.reachable:
            unfinished.append(f"{label}: no record, and Slurm cannot be asked whether it still runs")
            continue
        elif st is not None and st.state in ACTIVE:
            unfinished.append(f"{label}: {st.state.lower()}")
            continue
        elif st is None and isinstance(_task_json(spool, f"tasks/{n}.start.json", None), dict):
            undetermined.append(n)
            rec = synthesize(spool, man, t, job, None, allowed, problems)
        else:
            rec = synthesize(spool, man, t, job, st, allowed, problems)
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
        todo.append((t, rec))
    return todo, already, unfinished, undetermined


def _stage_notebook(spool: Path, root: Path, t: dict, rec: dict, problems: list[str]) -> tuple | None:
    """(temporary copy, final path) of the task's notebook, or None. The record's own `notebook` field is never
    used: the published name is the checked source's name, in docs/verification/runs/."""
    claimed = rec["slurm"].pop("notebook", None)
    rec.pop("notebook", None)
    if claimed is None:
        return None
    n = t["task"]
    m = NOTEBOOK_RE.fullmatch(claimed) if isinstance(claimed, str) else None
    if not m or m[1] != str(n) or m[2] != t["entry"] or ".." in claimed:
        problems.append(f"task {n} ({t['entry']}): slurm.notebook {_show(claimed)} is not "
                        f"nb/{n}/{t['entry']}--<platform>.ipynb: no notebook published")
        return None
    try:
        src = regfile.open_beneath(spool, claimed)
    except FileNotFoundError:
        return None                           # the task's notebook is gone: the record stands without one
    except OSError as e:
        problems.append(f"task {n} ({t['entry']}): notebook {e}: no notebook published")
        return None
    name = claimed.rsplit("/", 1)[1]
    dest = paths.executed_dir(root) / name
    tmp = None
    try:
        size = os.fstat(src).st_size
        if size > MAX_NOTEBOOK_BYTES:
            raise OSError(f"{claimed}: {size} bytes, more than the {MAX_NOTEBOOK_BYTES >> 20} MiB limit")
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=dest.parent)
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), 0o644)     # as a copy made under the usual umask (mkstemp gives 0600)
            left = MAX_NOTEBOOK_BYTES + 1
            while left > 0 and (chunk := os.read(src, min(left, 1 << 20))):
                out.write(chunk)
                left -= len(chunk)
        if left <= 0:
            raise OSError(f"{claimed}: grew past the {MAX_NOTEBOOK_BYTES >> 20} MiB limit")
    except OSError as e:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        problems.append(f"task {n} ({t['entry']}): notebook not published: {e}")
        return None
    finally:
        os.close(src)
    rec["slurm"]["notebook"] = claimed
    rec["notebook"] = str(paths.executed_dir(Path(".")) / name)
    return tmp, dest


def merge(spool: Path, root: Path, lpath: Path | None = None, settle: float = 10,
          query=snapshot) -> dict:
    """Merge every finished task of a spool into the ledger (default runbooks/ledger.jsonl of root)."""
    man = load_manifest(spool)
    lpath = lpath or ledger.default_path(root)
    allowed = allowed_outcomes()
    jobs = job_ids(man)
    deadline = time.monotonic() + settle
    while True:
        snap = query(jobs)
        existing, bad = ledger.read(lpath)
        done = {k for k in map(_key, existing) if k}
        problems: list[str] = []
        todo, already, unfinished, undetermined = _plan(spool, man, snap, done, allowed, problems)
        # A task that just ended may not be in sacct yet: ask again for a while before calling it unknown.
        if not undetermined or time.monotonic() >= deadline:
            break
        time.sleep(min(5.0, max(0.5, deadline - time.monotonic())))
    staged = {}
    try:
        for t, rec in todo:
            got = _stage_notebook(spool, root, t, rec, problems)
            if got:
                staged[id(rec)] = got

        def publish(rec: dict) -> None:        # under the ledger's lock, once the record is known to be new
            if id(rec) in staged:
                os.replace(*staged[id(rec)])
                del staged[id(rec)]

        added, present, failed = ledger.append_new(lpath, [r for _, r in todo], _key, publish)
    finally:
        for tmp, _ in staged.values():        # notebooks of records not written (already there, or refused)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    already += [_key(r) for r in present]
    for rec, why in failed:
        s = rec["slurm"]
        problems.append(f"task {s['task']} ({rec.get('entry')}): not merged: {why}")
    return {"run": man["run"], "added": added, "already": [list(k) for k in already],
            "unfinished": unfinished, "problems": problems,
            "notes": snap.notes + [f"the ledger has unreadable lines: {p}" for p in bad], "ledger": str(lpath)}
