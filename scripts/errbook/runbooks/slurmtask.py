"""One array task of a fleet run, on a compute node: run one runbook and write its record to the task's own
ledger file in the spool (`python -m errbook.runbooks.slurmtask task SPOOL CLASS`, from the batch script)."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from pathlib import Path

from errbook.common import paths
from errbook.machine import fingerprint
from errbook.machine import tiers as machine_tiers
from errbook.runbooks import ledger, runner
from errbook.runbooks.spool import load_manifest, utcnow, write_json


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
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        os._exit(128 + signum)

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
        signal.signal(s, on_signal)
    root = Path(man["classes"][klass]["options"].get("root") or man["root"])
    fp = machine_tiers.detect()["fingerprint"]
    visible = {k: os.environ[k] for k in ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
                                          "GPU_DEVICE_ORDINAL") if k in os.environ}
    write_json(tdir / f"{n}.start.json", {
        "task": n, "job": job, "node": node, "started": utcnow(), "fingerprint": fp,
        "platform_label": fingerprint.label(fp), "commit": runner.git_commit(root),
        "restart": os.environ.get("SLURM_RESTART_COUNT", "0"), "visible_devices": visible, "pid": os.getpid()})
    print(f"errbook task {n} ({t['entry']}, class {klass}) as {job} on {node}: {fingerprint.label(fp)}", flush=True)
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
    print("usage: python -m errbook.runbooks.slurmtask task SPOOL CLASS   (run by the batch script of errbook run "
          "--slurm)",
          file=sys.stderr)
    sys.exit(2)
