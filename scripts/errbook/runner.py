"""`errbook run`: execute runbooks with papermill, in parallel, each in its own process with a deadline.

Every run ends as one of: passed, failed (a check failed), error (the notebook raised), crashed (the kernel
died), timeout. The outcome, per-tier results and the platform fingerprint go to the ledger; the executed
notebook is kept for the site.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from . import entries, ledger, paths, platform

# Run in a child process so a hang or a dead kernel cannot take the runner (and the other results) down.
_CHILD = r"""
import json, sys, papermill as pm
from papermill.exceptions import PapermillExecutionError
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
    print(json.dumps({"papermill": kind, "ename": name, "evalue": str(e)[:2000]}))
    sys.exit(4)
"""


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


def run_one(e: entries.Entry, root: Path, tiers: str, timeout: float, out_dir: Path) -> dict:
    ver = e["verification"]
    nb_in = root / ver["runbook"]
    fp = platform.detect()["fingerprint"]
    slug = ledger.platform_key(fp).replace(":", "-").replace(" ", "-")
    out_dir.mkdir(parents=True, exist_ok=True)
    nb_out = out_dir / f"{e.id}--{slug}.ipynb"
    with tempfile.TemporaryDirectory(prefix="errbook-run-") as tmp:
        result_path = Path(tmp) / "result.json"
        params = dict(ver.get("parameters") or {})
        params.update(entry_id=e.id, tiers=tiers, result_path=str(result_path))
        env = dict(os.environ, ERRBOOK_ROOT=str(root), PYTHONUNBUFFERED="1")
        t0 = time.time()
        cmd = [sys.executable, "-c", _CHILD, str(nb_in), str(nb_out), json.dumps(params), str(timeout), str(root)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 30, env=env,
                                  start_new_session=True)
            rc, out = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as te:
            rc, out = None, str(te.stdout or "")
        secs = round(time.time() - t0, 2)
        result = json.loads(result_path.read_text()) if result_path.is_file() else None
    info = _last_json_line(out) if rc not in (0, None) else {}
    if rc is None:
        outcome, why = "timeout", f"runbook exceeded {timeout:.0f}s"
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
        outcome, why = "error", "the runbook did not call rb.finish(), so it recorded no result"
    else:
        outcome, why = "error", (info.get("ename", "") + ": " + info.get("evalue", "")).strip(": ") or out[-2000:]
    if result is None:
        # Tiers of a run that never recorded a result are not 'skipped': they are unknown.
        tiers_out = {t: {"outcome": outcome} for t in ver.get("tiers", [])}
    else:
        tiers_out = result["tiers"]
    rec = {
        "entry": e.id,
        "runbook": ver["runbook"],
        "outcome": outcome,
        "tiers": tiers_out,
        "requested_tiers": tiers,
        "fingerprint": (result or {}).get("fingerprint", fp),
        "platform_label": platform.label((result or {}).get("fingerprint", fp)),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": git_commit(root),
        "seconds": secs,
        "notebook": str(nb_out.relative_to(root)) if nb_out.is_relative_to(root) else str(nb_out),
    }
    if why:
        rec["reason"] = why[-1500:]
    return rec


def select(root: Path, ids: list[str], klass: str | None, all_: bool) -> list[entries.Entry]:
    loaded, errors = entries.load_all(root)
    for err in errors:
        print(f"errbook run: skipping unreadable {err.rel}:{err.line}: {err.message}", file=sys.stderr)
    pool = [e for e in entries.active(loaded)]
    if all_:
        return pool
    if klass:
        return [e for e in pool if e.klass == klass]
    by_id = {e.id: e for e in pool}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise FileNotFoundError(f"no entries {missing}")
    return [by_id[i] for i in ids]


def main(args, root: Path) -> int:
    chosen = select(root, args.entries, args.klass, args.all)
    try:
        from .runbook import _parse_tiers
        _parse_tiers(args.tier)
    except ValueError as e:
        print(f"errbook run: {e}", file=sys.stderr)
        return 2
    out_dir = Path(args.out) if args.out else paths.executed_dir(root)
    lpath = None if args.no_ledger else (Path(args.ledger) if args.ledger else ledger.default_path(root))
    records = []
    bar = None
    if not args.no_progress and not args.json:
        from tqdm import tqdm
        bar = tqdm(total=len(chosen), unit="runbook", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = {ex.submit(run_one, e, root, args.tier, args.timeout, out_dir): e for e in chosen}
        for f in as_completed(futs):
            rec = f.result()
            records.append(rec)
            if lpath:
                ledger.append(lpath, rec)
            if bar:
                bar.update(1)
                bar.write(f"{rec['entry']}: {rec['outcome']}  " +
                          " ".join(f"{t}={v['outcome']}" for t, v in rec["tiers"].items()) + f"  ({rec['seconds']}s)")
    if bar:
        bar.close()
    records.sort(key=lambda r: r["entry"])
    bad = [r for r in records if r["outcome"] in ("failed", "error", "crashed", "timeout")]
    if args.json:
        print(json.dumps({"records": records}, indent=1))
    else:
        counts: dict[str, int] = {}
        for r in records:
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        print("runbooks: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
        for r in bad:
            print(f"  {r['entry']} {r['outcome']}: {r.get('reason', '')[:300]}")
    return 1 if bad else 0
