"""errbook run --slurm and errbook ledger --merge: against a real single-node Slurm (slurmcluster.py), and the
merge rules for every way a task can end (without Slurm: states given to the merge directly)."""
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import slurmcluster
from conftest import BASE_ENTRY, REPO, make_root
from errbook.kb import scaffold
from errbook.machine import tiers
from errbook.runbooks import fleetmerge, ledger, slurm, slurmstate
from errbook.runbooks.spool import load_manifest, read_json, write_json

FAST = ("RMN-0001", "RMN-0002", "RMN-0003")         # real compile runbooks whose static tier takes seconds
SLEEPER = "RMN-0009"                                # a runbook that would run for minutes: the one we kill


@pytest.fixture(scope="module")
def cluster():
    why = slurmcluster.unavailable()
    if why:
        pytest.skip(why)
    c = slurmcluster.Cluster(cpus=4).start()
    yield c
    left = c.stop()
    assert left == [], f"processes left after the cluster stopped: {left}"


def _copy_entry(root: Path, eid: str) -> None:
    src = next(REPO.glob(f"errata/*/{eid}.yaml"))
    data = yaml.safe_load(src.read_text(encoding="utf-8"))
    data.update(related=[], aliases=[])                     # the throwaway root holds only these entries
    klass = src.parent.name
    (root / "errata" / klass).mkdir(parents=True, exist_ok=True)
    (root / "runbooks" / klass).mkdir(parents=True, exist_ok=True)
    (root / "errata" / klass / f"{eid}.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    shutil.copy(REPO / data["verification"]["runbook"], root / data["verification"]["runbook"])


@pytest.fixture
def fleet_root(tmp_path):
    root = make_root(tmp_path / "root")
    for eid in FAST[1:]:
        _copy_entry(root, eid)
    base = yaml.safe_load(BASE_ENTRY.read_text(encoding="utf-8"))
    d = dict(base, id=SLEEPER, aliases=[], related=[])
    d["verification"] = {"runbook": f"runbooks/compile/{SLEEPER}.ipynb", "tiers": ["static"]}
    (root / "errata" / "compile" / f"{SLEEPER}.yaml").write_text(yaml.safe_dump(d, allow_unicode=True))
    body = '@rb.check("static", "runs for minutes")\ndef _():\n    import time\n    time.sleep(300)'
    nb = scaffold.build_notebook(SLEEPER, "fixture", "A runbook that runs until it is killed.", [("code", body)])
    scaffold.write_notebook(root / "runbooks" / "compile" / f"{SLEEPER}.ipynb", nb)
    return root


def _cli(cluster, root, *args, **kw):
    env = dict(cluster.env, ERRBOOK_COMMIT="fleettest")
    return subprocess.Popen([sys.executable, "-m", "errbook.cli", "--root", str(root), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _until(pred, timeout, what):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        v = pred()
        if v:
            return v
        time.sleep(0.3)
    raise AssertionError(f"{what} did not happen in {timeout}s")


def test_job_array_with_a_killed_task_merges_one_record_per_task(cluster, fleet_root, tmp_path):
    spool = tmp_path / "spool"
    ids = [*FAST, SLEEPER]
    t0 = time.monotonic()
    p = _cli(cluster, fleet_root, "run", *ids, "--tier", "static", "--slurm", "--spool", str(spool),
             "--poll", "1", "--timeout", "240", "--json")
    try:
        job = _until(lambda: (read_json(spool / "manifest.json") or {}).get("classes", {})
                     .get("default", {}).get("job"), 30, "submission")
        man = load_manifest(spool)
        assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{8}", man["run"])      # unique per submission, not the folder
        assert [t["entry"] for t in man["tasks"]] == ids and man["classes"]["default"]["sbatch"][2] == "--array=0-3"
        victim = f"{job}_{ids.index(SLEEPER)}"
        _until(lambda: (spool / "tasks" / f"{ids.index(SLEEPER)}.start.json").is_file(), 60, "the sleeper's start")
        q = cluster.run("squeue", "-r", "-h", "-o", "%i %T", "-j", job).stdout
        assert f"{victim} RUNNING" in q, q
        assert cluster.run("scancel", victim).returncode == 0
        out, err = p.communicate(timeout=180)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    took = time.monotonic() - t0
    assert p.returncode == 1, err                             # one task crashed: the run reports it
    assert f"submitted job array {job}" in err and "4/4 finished" in err

    recs, problems = ledger.read(fleet_root / "runbooks" / "ledger.jsonl")
    assert problems == []
    assert len(recs) == 4 and sorted(r["entry"] for r in recs) == sorted(ids)
    keys = {(r["slurm"]["run"], r["slurm"]["task"]) for r in recs}
    assert len(keys) == 4
    by = {r["entry"]: r for r in recs}
    here = tiers.detect()["fingerprint"]["platform"]
    for i, eid in enumerate(ids):
        r = by[eid]
        assert r["slurm"]["job"] == f"{job}_{i}" and r["slurm"]["node"] == "localhost"
        assert r["fingerprint"]["platform"] == here and r["commit"] == "fleettest"
    for eid in FAST:
        assert by[eid]["outcome"] == "passed", by[eid]
        assert by[eid]["tiers"]["static"]["outcome"] == "passed"
        assert by[eid]["slurm"]["state"] == "COMPLETED"
        assert (fleet_root / by[eid]["notebook"]).is_file()
    killed = by[SLEEPER]
    allowed = fleetmerge.allowed_outcomes()
    assert killed["outcome"] == ("cancelled" if "cancelled" in allowed else "crashed")
    assert killed["slurm"]["state"] == "CANCELLED"
    assert killed["tiers"] == {"static": {"outcome": killed["outcome"]}}
    assert f"Slurm task {victim} on localhost ended CANCELLED" in killed["reason"]
    assert "received SIGTERM" in killed["reason"]
    out_json = json.loads(out)
    assert sorted(r["entry"] for r in out_json["added"]) == sorted(ids) and out_json["unfinished"] == []

    # Merging again adds nothing, and the ledger is byte-for-byte the same.
    before = (fleet_root / "runbooks" / "ledger.jsonl").read_bytes()
    m = _cli(cluster, fleet_root, "ledger", "--merge", str(spool), "--json")
    out, err = m.communicate(timeout=60)
    assert m.returncode == 0, err
    again = json.loads(out)
    assert again["added"] == [] and len(again["already"]) == 4
    assert (fleet_root / "runbooks" / "ledger.jsonl").read_bytes() == before
    print(f"\nfleet run of {len(ids)} tasks with one killed: {took:.1f}s")


def test_no_wait_then_merge_only_what_has_finished(cluster, fleet_root, tmp_path):
    spool = tmp_path / "spool"
    p = _cli(cluster, fleet_root, "run", "RMN-0001", SLEEPER, "--tier", "static", "--slurm", "--spool", str(spool),
             "--no-wait", "--json")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    sub = json.loads(out)
    job = sub["jobs"]["default"]
    assert sub["spool"] == str(spool)
    ledger_path = fleet_root / "runbooks" / "ledger.jsonl"

    def merge():
        m = _cli(cluster, fleet_root, "ledger", "--merge", str(spool), "--json", "--settle", "0")
        o, e = m.communicate(timeout=60)
        assert m.returncode == 0, e
        return json.loads(o)

    # While both run (or wait), the merge records nothing and says what is unfinished.
    _until(lambda: (spool / "tasks" / "1.start.json").is_file(), 60, "the sleeper's start")
    res = merge()
    assert {u.split()[0] for u in res["unfinished"]} >= {f"{job}_1"}
    assert all(r["entry"] == "RMN-0001" for r in res["added"])
    _until(lambda: (spool / "tasks" / "0.jsonl").is_file(), 90, "the fast task's record")
    _until(lambda: f"{job}_0" not in cluster.run("squeue", "-h", "-r", "-o", "%i", "-j", job).stdout, 30,
           "the fast task leaving the queue")
    res = merge()
    recs, _ = ledger.read(ledger_path)
    assert [r["entry"] for r in recs] == ["RMN-0001"] and recs[0]["outcome"] == "passed"
    assert res["unfinished"] and res["unfinished"][0].startswith(f"{job}_1 ")
    # Time limit for the sleeper is far away: cancel it, then the last merge records it, once.
    assert cluster.run("scancel", f"{job}_1").returncode == 0
    _until(lambda: not cluster.run("squeue", "-h", "-j", job).stdout.strip(), 30, "the cancellation")
    res = merge()
    assert [r["entry"] for r in res["added"]] == [SLEEPER] and res["unfinished"] == []
    assert merge()["added"] == []
    recs, problems = ledger.read(ledger_path)
    assert problems == [] and [r["entry"] for r in recs] == ["RMN-0001", SLEEPER]


# ------------------------------------------------------------------ without Slurm

def _spool(tmp_path, n=3, run="20261201T000000Z-abc12345") -> tuple[Path, dict]:
    """A spool as errbook run --slurm leaves it, with job 77 submitted for n runbooks."""
    spool = tmp_path / "spool"
    for d in ("tasks", "logs", "nb"):
        (spool / d).mkdir(parents=True)
    tasks = [{"task": i, "class": "mi300x", "index": i, "entry": f"RMN-000{i + 1}",
              "runbook": f"runbooks/compile/RMN-000{i + 1}.ipynb", "tiers": "static,rocm", "timeout": 60,
              "entry_tiers": ["static", "rocm"]} for i in range(n)]
    man = {"format": 1, "run": run, "created": "2026-12-01T00:00:00Z", "root": str(tmp_path),
           "commit": "c0ffee", "tasks": tasks,
           "classes": {"mi300x": {"options": {}, "tasks": list(range(n)), "job": "77"}}}
    write_json(spool / "manifest.json", man)
    return spool, man


def _start(spool, n, gfx="gfx942"):
    write_json(spool / "tasks" / f"{n}.start.json", {
        "task": n, "job": f"77_{n}", "node": "gpu-a01", "started": "2026-12-01T00:00:05Z", "commit": "c0ffee",
        "fingerprint": {"platform": "rocm", "arch": gfx, "rocm": "6.4.1", "gpu": "AMD Instinct MI300X"},
        "platform_label": f"ROCm 6.4.1 · {gfx}"})


def _own(spool, n, outcome="passed"):
    ledger.append(spool / "tasks" / f"{n}.jsonl", {
        "entry": f"RMN-000{n + 1}", "runbook": f"runbooks/compile/RMN-000{n + 1}.ipynb", "outcome": outcome,
        "tiers": {"static": {"outcome": outcome}}, "fingerprint": {"platform": "rocm", "arch": "gfx942"},
        "date": "2026-12-01T00:01:00Z", "commit": "c0ffee", "slurm": {"job": f"77_{n}", "node": "gpu-a01"}})


def _snap(active=None, **states):
    return lambda jobs: slurmstate.Snapshot(True, dict(active or {}), {
        k.replace("t", "77_"): slurmstate.TaskState(v.split()[0], v, "gpu-a01", "0:15", "2026-12-01T00:00:05Z",
                                               "2026-12-01T00:10:05Z", "sacct") for k, v in states.items()})


def test_merge_outcomes_by_slurm_state(tmp_path):
    spool, _ = _spool(tmp_path, 3)
    _own(spool, 0)
    _start(spool, 1)
    _start(spool, 2)
    write_json(spool / "tasks" / "1.signal.json", {"signal": "SIGTERM", "at": "2026-12-01T00:10:00Z"})
    lp = tmp_path / "ledger.jsonl"
    res = fleetmerge.merge(spool, tmp_path, lp, settle=0,
                           query=_snap(t0="COMPLETED", t1="TIMEOUT", t2="PREEMPTED"))
    by = {r["entry"]: r for r in res["added"]}
    assert by["RMN-0001"]["outcome"] == "passed" and by["RMN-0001"]["slurm"]["state"] == "COMPLETED"
    t = by["RMN-0002"]
    assert t["outcome"] == "timeout" and t["tiers"] == {"static": {"outcome": "timeout"},
                                                        "rocm": {"outcome": "timeout"}}
    assert t["fingerprint"]["arch"] == "gfx942" and t["date"] == "2026-12-01T00:10:05Z" and t["seconds"] == 600
    assert "received SIGTERM at 2026-12-01T00:10:00Z" in t["reason"]
    pre = by["RMN-0003"]
    assert pre["outcome"] == ("preempted" if "preempted" in fleetmerge.allowed_outcomes() else "crashed")
    assert pre["slurm"]["state"] == "PREEMPTED" and pre["slurm"]["array_job"] == "77"
    recs, problems = ledger.read(lp)
    assert problems == [] and len(recs) == 3
    # Idempotent: the same spool again, with states now forgotten by Slurm, adds nothing.
    again = fleetmerge.merge(spool, tmp_path, lp, settle=0, query=_snap())
    assert again["added"] == [] and len(again["already"]) == 3 and len(ledger.read(lp)[0]) == 3


def test_concurrent_merges_and_two_submissions_into_one_ledger(tmp_path):
    import multiprocessing
    lp = tmp_path / "ledger.jsonl"
    spools = []
    for k, run in enumerate(("20261201T000000Z-aaaaaaaa", "20261201T000001Z-bbbbbbbb")):
        spool, _ = _spool(tmp_path / str(k), 3, run)            # same folder name, same task numbers
        for n in range(3):
            _own(spool, n)
        spools.append(spool)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=fleetmerge.merge, args=(spools[i % 2], tmp_path, lp),
                         kwargs={"settle": 0, "query": _snap(t0="COMPLETED", t1="COMPLETED", t2="COMPLETED")})
             for i in range(6)]
    for pr in procs:
        pr.start()
    for pr in procs:
        pr.join(60)
    recs, problems = ledger.read(lp)
    assert problems == [] and len(recs) == 6
    assert sorted((r["slurm"]["run"][-8:], r["slurm"]["task"]) for r in recs) == [
        (x, n) for x in ("aaaaaaaa", "bbbbbbbb") for n in range(3)]


def test_merge_waits_for_running_and_unreachable_slurm(tmp_path):
    spool, _ = _spool(tmp_path, 2)
    _start(spool, 0)
    _own(spool, 1)
    lp = tmp_path / "ledger.jsonl"
    # Task 0 is still running: only task 1 (which wrote its record) is merged.
    res = fleetmerge.merge(spool, tmp_path, lp, settle=0, query=_snap(active={"77_0": "RUNNING"}, t1="COMPLETED"))
    assert [r["entry"] for r in res["added"]] == ["RMN-0002"] and res["unfinished"] == ["77_0 RMN-0001 (task 0): "
                                                                                        "running"]
    # Slurm cannot be asked: a task without a record is left for later, never guessed dead.
    res = fleetmerge.merge(spool, tmp_path, lp, settle=0, query=lambda jobs: slurmstate.Snapshot(False))
    assert res["added"] == [] and "cannot be asked" in res["unfinished"][0]
    # Requeued after preemption: pending again, so still unfinished.
    res = fleetmerge.merge(spool, tmp_path, lp, settle=0, query=_snap(active={"77_0": "PENDING"}))
    assert res["added"] == [] and res["unfinished"] == ["77_0 RMN-0001 (task 0): pending"]
    assert len(ledger.read(lp)[0]) == 1


def test_merge_tasks_that_never_started_or_failed_before_starting(tmp_path):
    spool, _ = _spool(tmp_path, 3)
    (spool / "logs" / "77_1.out").write_text("/bin/bash: line 4: module: command not found\n")
    lp = tmp_path / "ledger.jsonl"
    res = fleetmerge.merge(spool, tmp_path, lp, settle=0,
                           query=_snap(t0="CANCELLED by 1000", t1="FAILED", t2="NODE_FAIL"))
    by = {r["entry"]: r for r in res["added"]}
    never = by["RMN-0001"]
    assert never["outcome"] == ("cancelled" if "cancelled" in fleetmerge.allowed_outcomes() else "skipped")
    assert never["fingerprint"] == {"platform": "unknown"} and "without starting" in never["reason"]
    assert "CANCELLED by 1000" in never["reason"] and "seconds" not in never
    failed = by["RMN-0002"]
    assert failed["outcome"] == "error" and "module: command not found" in failed["reason"]
    assert by["RMN-0003"]["slurm"]["state"] == "NODE_FAIL"
    assert ledger.read(lp)[1] == []


def test_merge_of_a_started_task_that_slurm_forgot(tmp_path):
    spool, _ = _spool(tmp_path, 1)
    _start(spool, 0)
    lp = tmp_path / "ledger.jsonl"
    res = fleetmerge.merge(spool, tmp_path, lp, settle=0, query=_snap())
    r = res["added"][0]
    assert r["outcome"] == "crashed" and r["slurm"]["state"] == "UNKNOWN" and "no longer knows" in r["reason"]


def test_parsers_on_slurm_output():
    # squeue -h -r -o '%i|%T' and scontrol show job -o, as slurm-wlm 22.05 printed them in the cluster fixture.
    assert slurmstate.parse_squeue("5_2|RUNNING\n5_3|PENDING\n") == {"5_2": "RUNNING", "5_3": "PENDING"}
    line = ("JobId=9 ArrayJobId=5 ArrayTaskId=3 JobName=errbook-default UserId=root(0) JobState=CANCELLED "
            "Reason=None Dependency=(null) ExitCode=0:15 RunTime=00:00:06 StartTime=2026-12-01T04:18:15 "
            "EndTime=2026-12-01T04:18:21 NodeList=localhost BatchHost=localhost")
    st = slurmstate.parse_scontrol(line + "\nJobId=5 ArrayJobId=5 ArrayTaskId=4-6 JobState=PENDING ExitCode=0:0\n")
    assert st["5_3"].state == "CANCELLED" and st["5_3"].exit_code == "0:15" and st["5_3"].node == "localhost"
    assert {k for k, v in st.items() if v.state == "PENDING"} == {"5_4", "5_5", "5_6"}
    # sacct -n -P -X --format=JobID,State,NodeList,ExitCode,Start,End (the field layout of sacct(1), 22.05)
    sa = slurmstate.parse_sacct("5_0|COMPLETED|gpu-a01|0:0|2026-12-01T04:18:15|2026-12-01T04:18:20\n"
                           "5_[7-8]|CANCELLED by 1000|None assigned|0:0|Unknown|2026-12-01T04:19:00\n")
    assert sa["5_0"].state == "COMPLETED" and sa["5_8"].detail == "CANCELLED by 1000" and sa["5_7"].node == ""
    assert sa["5_7"].start is None
    assert slurmstate.expand_indices("[1-7:3,9]%2") == [1, 4, 7, 9]


def test_fleet_file_classes_and_sbatch_arguments(tmp_path):
    f = tmp_path / "fleet.yaml"
    f.write_text("account: abc123\nmodules: [rocm/6.2.4]\nclasses:\n"
                 "  mi250x: {partition: batch, gpus: 1, constraint: gfx90a}\n"
                 "  mi300x: {partition: mi300, gpus: 1, time: '0:45:00', sbatch: ['--qos=debug'],\n"
                 "           launcher: 'apptainer exec --rocm -B /lustre errbook.sif', python: python3}\n")
    fleet = slurm.load_fleet(f)
    assert set(fleet["classes"]) == {"mi250x", "mi300x"}
    a = slurm.sbatch_args("mi250x", fleet["classes"]["mi250x"], 5, tmp_path, 600)
    assert "--array=0-4" in a and "--partition=batch" in a and "--constraint=gfx90a" in a
    assert "--gpus-per-node=1" in a and "--account=abc123" in a and "--time=20" in a
    b = slurm.sbatch_args("mi300x", fleet["classes"]["mi300x"], 2, tmp_path, 600)
    assert "--time=0:45:00" in b and b[-1] == "--qos=debug"
    script = slurm.batch_script(tmp_path, "mi300x", fleet["classes"]["mi300x"], "/shared/errbook/scripts")
    assert "module load rocm/6.2.4" in script
    assert script.rstrip().endswith("exec apptainer exec --rocm -B /lustre errbook.sif python3 -m "
                                    f"errbook.runbooks.slurmtask task {tmp_path} mi300x")
    f.write_text("classes:\n  mi300x: {partitoin: batch}\n")
    with pytest.raises(slurm.FleetError, match="unknown key 'partitoin'"):
        slurm.load_fleet(f)


def test_slurm_options_need_slurm(mini_root):
    from conftest import errbook
    r = errbook("run", "RMN-0001", "--partition", "gpu", root=mini_root)
    assert r.returncode == 2 and b"--partition only apply with --slurm" in r.stderr
