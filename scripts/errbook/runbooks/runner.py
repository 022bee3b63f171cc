"""`errbook run`: execute runbooks with papermill, in parallel, each in its own process with a deadline.

Every run ends as one of: passed, failed (a check failed), error (the notebook raised), crashed (the kernel
died), timeout. The outcome, per-tier results and the platform fingerprint go to the ledger; the executed
notebook is kept for the site.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from errbook.common import paths
from errbook.kb import entries, parameters, usable, verified
from errbook.machine import fingerprint
from errbook.machine import tiers as machine_tiers
from errbook.runbooks import ledger, ledgerrec, nbcap, proctree

# Run in a child process so a hang or a dead kernel cannot take the runner (and the other results) down.
# The child remembers the kernel's process so a dead kernel is reported by its signal or exit status.
_CHILD = r"""
import json, signal, sys
import papermill as pm
import jupyter_client.provisioning.local_provisioner as lp
from papermill.exceptions import PapermillExecutionError
kernels = []
_launch = lp.launch_kernel
def launch(*a, **k):
    p = _launch(*a, **k)
    kernels.append(p)
    return p
lp.launch_kernel = launch
def kernel_end():
    rc = kernels[-1].poll() if kernels else None
    if rc is None:
        return "kernel died"
    if rc < 0:
        try:
            return "kernel killed by " + signal.Signals(-rc).name
        except ValueError:
            return f"kernel killed by signal {-rc}"
    return f"kernel exited with status {rc}"
nb_in, nb_out, params, cell_timeout = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), float(sys.argv[4])
try:
    pm.execute_notebook(nb_in, nb_out, parameters=params, kernel_name="python3", progress_bar=False,
                        execution_timeout=cell_timeout, cwd=sys.argv[5])
except PapermillExecutionError as e:
    print(json.dumps({"papermill": "exception", "ename": e.ename, "evalue": str(e.evalue)[:2000]}))
    sys.exit(3)
except Exception as e:
    name = type(e).__name__
    kind = "crashed" if "DeadKernel" in name else ("timeout" if "Timeout" in name else "exception")
    evalue = kernel_end() if kind == "crashed" else str(e)[:2000]
    print(json.dumps({"papermill": kind, "ename": name, "evalue": evalue}))
    sys.exit(4)
"""
OUTPUT_TAIL = 64 * 1024   # bytes of the child's output kept for the record's reason
_STOP = threading.Event()  # set on Ctrl-C: every running runbook is killed with its kernel


def git_commit(root: Path) -> str:
    """HEAD (+dirty when tracked files changed); ERRBOOK_COMMIT overrides it for copies without .git."""
    if os.environ.get("ERRBOOK_COMMIT"):
        return os.environ["ERRBOOK_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        sha = out.stdout.strip()
        # Run outputs (the ledger, executed notebooks) do not make the checkout dirty.
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":!runbooks/ledger.jsonl", ":!docs/verification/runs"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return (sha or "unknown") + ("+dirty" if dirty and sha else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _last_json_line(text: str) -> dict:
    for line in reversed(text.strip().splitlines()):
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue
    return {}


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def _execute(cmd: list[str], env: dict, timeout: float, log_path: Path) -> tuple[int | None, str]:
    """Run the papermill child with a deadline for the whole runbook. Afterwards (in every case) kill what is
    left of the run: the kernel, and anything the runbook started. rc None means the deadline passed."""
    tag = uuid.uuid4().hex
    with open(log_path, "w+b") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=dict(env, **{proctree.TAG: tag}), start_new_session=True)
        deadline = time.monotonic() + timeout
        rc = None
        try:
            while rc is None and time.monotonic() < deadline and not _STOP.is_set():
                with contextlib.suppress(subprocess.TimeoutExpired):
                    rc = proc.wait(timeout=max(0.01, min(0.5, deadline - time.monotonic())))
        finally:                  # in every case, Ctrl-C included: leave nothing behind
            proctree.reap(proc.pid, tag)
            proc.wait()
        if _STOP.is_set() and rc is None:
            raise KeyboardInterrupt
        log.seek(max(0, log.seek(0, os.SEEK_END) - OUTPUT_TAIL))
        return rc, log.read().decode("utf-8", errors="replace")


def _read_result(path: Path) -> dict | None:
    """The result the runbook wrote (rb.finish), or None when there is none or it is malformed."""
    try:
        if not path.is_file() or path.stat().st_size > (16 << 20):
            return None
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(result, dict) or not isinstance(result.get("tiers"), dict):
        return None
    if any(ledgerrec.tier_problems(k, v) for k, v in result["tiers"].items()):
        return None
    if ledgerrec.fingerprint_problem(result.get("fingerprint", {})):
        return None
    return result


def run_one(e: entries.Entry, root: Path, tiers: str, timeout: float, out_dir: Path) -> dict:
    """Raises parameters.ParameterError, before anything runs, for parameters papermill would write as code."""
    ver = e["verification"]
    params = parameters.checked(ver.get("parameters"))
    nb_in = root / ver["runbook"]
    content = verified.digest(e, root)          # what this run verifies, taken before it starts
    fp = machine_tiers.detect()["fingerprint"]
    slug = fingerprint.entry_key(fp).replace(":", "-").replace(" ", "-")
    out_dir.mkdir(parents=True, exist_ok=True)
    nb_out = out_dir / f"{e.id}--{slug}.ipynb"
    # Papermill rewrites its output after every cell, and two runs of one entry on one platform share nb_out: each
    # run writes a temp file of its own (a dotfile, which the site skips) and renames it into place when done,
    # so a reader of nb_out sees one whole notebook, never a run in progress or two runs interleaved.
    nb_tmp = out_dir / f".{nb_out.stem}.{uuid.uuid4().hex}.tmp.ipynb"
    try:
        with tempfile.TemporaryDirectory(prefix="errbook-run-") as tmp:
            result_path = Path(tmp) / "result.json"
            params.update(entry_id=e.id, tiers=tiers, result_path=str(result_path))
            env = dict(os.environ, ERRBOOK_ROOT=str(root), PYTHONUNBUFFERED="1")
            t0 = time.time()
            cmd = [sys.executable, "-c", _CHILD, str(nb_in), str(nb_tmp), json.dumps(params), str(timeout), str(root)]
            rc, out = _execute(cmd, env, timeout, Path(tmp) / "child.log")
            secs = round(time.time() - t0, 2)
            result = _read_result(result_path)
        if nb_tmp.is_file():
            try:
                nbcap.cap_notebook(nb_tmp)
            except (OSError, ValueError) as ex:
                print(f"errbook run: could not cap the outputs of {nb_out}: {ex}", file=sys.stderr)
            os.replace(nb_tmp, nb_out)
    finally:
        nb_tmp.unlink(missing_ok=True)          # Ctrl-C, or a failed rename: no temp file is left behind
    info = _last_json_line(out) if rc not in (0, None) else {}
    if rc is None:
        outcome, why = "timeout", f"the runbook exceeded {timeout:g}s in all; it and its kernel were killed"
    elif rc < 0:
        outcome, why = "crashed", f"runner killed by {_signal_name(-rc)}"
    elif info.get("papermill") == "timeout":
        outcome, why = "timeout", info.get("evalue", "")
    elif info.get("papermill") == "crashed":
        outcome, why = "crashed", info.get("evalue", "kernel died")
    elif rc == 0 and result:
        tiers_out = result["tiers"]
        outcome = "failed" if any(v["outcome"] in ("failed", "error") for v in tiers_out.values()) else (
            "passed" if any(v["outcome"] == "passed" for v in tiers_out.values()) else "skipped")
        why = ""
    elif result and any(v["outcome"] in ("failed", "error") for v in result["tiers"].values()):
        outcome, why = "failed", info.get("evalue", "")
    elif rc == 0:
        outcome, why = "error", "the runbook recorded no valid result (did it call rb.finish()?)"
    else:
        outcome, why = "error", (info.get("ename", "") + ": " + info.get("evalue", "")).strip(": ") or out[-2000:]
    # Tiers of a run that never recorded a result are not 'skipped': they are unknown.
    tiers_out = result["tiers"] if result is not None else {t: {"outcome": outcome} for t in ver.get("tiers", [])}
    rec = {
        "entry": e.id,
        "runbook": ver["runbook"],
        "outcome": outcome,
        "tiers": tiers_out,
        "requested_tiers": tiers,
        "fingerprint": (result or {}).get("fingerprint", fp),
        "platform_label": fingerprint.label((result or {}).get("fingerprint", fp)),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": git_commit(root),
        "digest": content,
        "seconds": secs,
    }
    # The ledger names a notebook only where the site publishes it (docs/verification/runs/).
    if nb_out.resolve().is_relative_to(paths.executed_dir(root).resolve()):
        rec["notebook"] = str(nb_out.resolve().relative_to(root.resolve()))
    if why:
        rec["reason"] = why[-1500:]
    return rec


def out_dir_problem(out_dir: Path, root: Path) -> str:
    """Why executed notebooks must not go to out_dir, or "". Inside docs/ only docs/verification/runs/ itself
    will do: the site publishes the notebooks directly in it, escaped; it leaves out those in its subfolders,
    and elsewhere in docs/ MkDocs or mkdocs-jupyter would publish them as they are, outputs and all."""
    out, docs, runs = out_dir.resolve(), paths.docs_dir(root).resolve(), paths.executed_dir(root).resolve()
    if out != runs and out.is_relative_to(docs):
        where = runs.relative_to(root.resolve())
        return (f"inside docs/, where the site takes executed notebooks only from {where} itself; use {where} "
                "(the default) or a folder outside docs/")
    return ""


def changed(root: Path, pool: list[entries.Entry], tiers: str) -> list[tuple[entries.Entry, list[str]]]:
    """(entry, tiers) for every entry whose current content (verified.digest) has no record of this machine for
    the asked tiers that this machine can run: what `errbook run --changed` re-runs."""
    info = machine_tiers.detect()
    runnable = [t for t in tiers.split(",") if t in info["tiers"] and info["tiers"][t] is None]
    key = fingerprint.entry_key(info["fingerprint"])
    recs, _ = ledger.read(ledger.default_path(root))
    by_entry: dict[str, list[dict]] = {}
    for r in recs:
        by_entry.setdefault(r["entry"], []).append(dict(r, _key=fingerprint.entry_key(r["fingerprint"])))
    out = []
    for e in pool:
        todo = verified.unverified_tiers(e, by_entry.get(e.id, []), verified.digest(e, root), key, runnable)
        if todo:
            out.append((e, todo))
    return out


def select(root: Path, ids: list[str], klass: str | None, all_: bool, changed_tiers: str = "") -> list[entries.Entry]:
    good, warnings = usable.usable_entries(root)
    for w in warnings:
        print(f"errbook run: {w} (run errbook validate)", file=sys.stderr)
    pool = list(entries.active(good))
    if changed_tiers:
        return [e for e, _ in changed(root, pool, changed_tiers)]
    if all_:
        return pool
    if klass:
        return [e for e in pool if e.klass == klass]
    by_id = {e.id: e for e in pool}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise FileNotFoundError(f"no valid entries {missing}")
    return [by_id[i] for i in ids]


@dataclass
class Batch:
    """What run_many did: the records made (sorted by entry), those the ledger could not take (with why), and
    how many runbooks were refused before they ran (parameters that would be code)."""
    records: list[dict] = field(default_factory=list)
    unsaved: list[dict] = field(default_factory=list)
    save_errors: list[str] = field(default_factory=list)
    refused: int = 0


def run_many(chosen: list[entries.Entry], root: Path, tiers: str, timeout: float, out_dir: Path, jobs: int,
             ledger_path: Path | None, on_record: Callable[[dict], None] | None = None) -> Batch:
    """Run the runbooks, `jobs` at a time, appending each record to the ledger as it comes (a record the ledger
    cannot take is kept in Batch.unsaved: nothing is lost). Ctrl-C kills every running runbook with its kernel;
    the records already made are in the ledger."""
    batch = Batch()
    ex = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futs = {ex.submit(run_one, e, root, tiers, timeout, out_dir): e for e in chosen}
        for f in as_completed(futs):
            try:
                rec = f.result()
            except parameters.ParameterError as err:   # select() skips such entries; this is the second line
                print(f"errbook run: {futs[f].rel}: refused: {err}", file=sys.stderr)
                batch.refused += 1
                continue
            batch.records.append(rec)
            if ledger_path:
                try:
                    ledger.append(ledger_path, rec)
                except (OSError, ValueError) as err:   # LedgerWriteError (rolled back) or an invalid record
                    batch.unsaved.append(rec)
                    batch.save_errors.append(str(err))
            if on_record:
                on_record(rec)
    except KeyboardInterrupt:
        _STOP.set()               # the workers kill their runbooks; records already made are in the ledger
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    batch.records.sort(key=lambda r: r["entry"])
    return batch
