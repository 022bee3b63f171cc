"""Issue 28: the fleet spool is untrusted input (H1, M5, L2, L5, L6, L7, L8), and a fuzz test of the merge.

Compute jobs running runbook code write the spool, so the merge (`errbook ledger --merge`) must publish no
file from outside it, trust no task's word about which entry it ran, and never hang or crash on what it finds.
Spools are built by hand (the merge only reads files); Slurm is a few fake commands on PATH. Subprocess
timeouts are ceilings that only catch hangs.
"""
import contextlib
import json
import multiprocessing
import os
import random
import shutil
import stat
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import REPO, errbook, make_root
from errbook.runbooks import fleetmerge, ledger, slurm, slurmstate
from errbook.runbooks.spool import manifest_problem, write_json

RUN = "20261201T000000Z-abc12345"
SECRET = "SECRET-3f9a0c-do-not-publish"
CEILING = 180          # seconds for one command: far beyond any real merge, only a hang reaches it
ENTRIES = ("RMN-0001", "RMN-0002", "RMN-0003")


def _notebook(tag: str) -> str:
    return json.dumps({"cells": [], "metadata": {"tag": tag}, "nbformat": 4, "nbformat_minor": 5})


def _record(n: int, **over) -> dict:
    """Task n's own record, as slurmtask.task_main writes it."""
    e = ENTRIES[n]
    rec = {"entry": e, "runbook": f"runbooks/compile/{e}.ipynb", "outcome": "passed",
           "tiers": {"static": {"outcome": "passed"}}, "fingerprint": {"platform": "cpu"},
           "platform_label": "CPU", "date": "2026-12-01T00:01:00Z", "commit": "c0ffee",
           "notebook": f"docs/verification/runs/{e}--cpu.ipynb",
           "slurm": {"run": RUN, "task": n, "job": f"77_{n}", "node": "gpu-a01",
                     "notebook": f"nb/{n}/{e}--cpu.ipynb"}}
    for k, v in over.items():
        if k.startswith("slurm_"):
            rec["slurm"][k[6:]] = v
        else:
            rec[k] = v
    return rec


def make_spool(path: Path, run: str = RUN) -> Path:
    """A spool after three finished tasks of job array 77, each with its record and notebook."""
    for d in ("tasks", "logs", "nb"):
        (path / d).mkdir(parents=True)
    tasks = [{"task": i, "class": "mi300x", "index": i, "entry": e, "runbook": f"runbooks/compile/{e}.ipynb",
              "tiers": "static", "timeout": 60, "entry_tiers": ["static"]} for i, e in enumerate(ENTRIES)]
    write_json(path / "manifest.json", {
        "format": 1, "run": run, "created": "2026-12-01T00:00:00Z", "root": "/nowhere", "commit": "c0ffee",
        "tasks": tasks, "classes": {"mi300x": {"options": {}, "tasks": [0, 1, 2], "job": "77"}}})
    for i, e in enumerate(ENTRIES):
        write_record(path, i, _record(i))
        (path / "nb" / str(i)).mkdir()
        (path / "nb" / str(i) / f"{e}--cpu.ipynb").write_text(_notebook(f"task {i}"))
        (path / "logs" / f"77_{i}.out").write_text(f"errbook task {i}: passed\n")
    return path


def write_record(spool: Path, n: int, rec: dict) -> None:
    (spool / "tasks" / f"{n}.jsonl").write_text(json.dumps(rec) + "\n")


FAKE_SLURM = {
    "squeue": "#!/bin/sh\nexit 0\n",                                       # nothing pending or running
    "sacct": "#!/bin/sh\nfor i in 0 1 2 3 4 5 6 7 8 9; do "
             "echo \"77_$i|COMPLETED|gpu-a01|0:0|2026-12-01T00:00:05|2026-12-01T00:10:05\"; done\n",
    "scontrol": "#!/bin/sh\nexit 1\n",
    "sbatch": "#!/bin/sh\necho 'sbatch: error: no cluster here' >&2\nexit 1\n",
}


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name, body in FAKE_SLURM.items():
        (bin_ / name).write_text(body)
        (bin_ / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("ERRBOOK_CACHE", str(tmp_path / "cache"))
    outside = tmp_path / "outside"
    outside.mkdir()
    creds = outside / "credentials.json"
    creds.write_text(json.dumps({"aws_secret_access_key": SECRET}))
    return SimpleNamespace(tmp=tmp_path, root=make_root(tmp_path / "root"), outside=outside, creds=creds,
                           spool=make_spool(tmp_path / "spool"))


def _limited():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))     # a runaway read must not eat the host


def merge(f, spool: Path | None = None, *args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "errbook.cli", "--root", str(f.root), "ledger", "--merge",
                           str(spool or f.spool), "--settle", "0", *args], capture_output=True, timeout=CEILING,
                          preexec_fn=_limited)


def runs(root: Path) -> dict[str, bytes]:
    """Every file under docs/verification/runs/ (what is not a regular file shows as such, unread)."""
    d = root / "docs" / "verification" / "runs"
    out = {}
    for top, _, files in os.walk(d):
        for x in files:
            p = Path(top) / x
            out[str(p.relative_to(d))] = p.read_bytes() if _regular(p) else b"(not a regular file)"
    return dict(sorted(out.items()))


def _regular(p: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(p).st_mode)
    except OSError:
        return False


def records(root: Path) -> list[dict]:
    recs, problems = ledger.read(root / "runbooks" / "ledger.jsonl")
    assert problems == []
    return recs


def no_traceback(r):
    assert b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")[-3000:]


def nothing_from_outside(root: Path) -> None:
    passwd = Path("/etc/passwd").read_bytes()[:64]
    for name, data in runs(root).items():
        assert SECRET.encode() not in data and passwd not in data, f"{name} was published from outside the spool"


# ------------------------------------------------------------------ H1: only the task's own notebook

def test_a_clean_spool_publishes_each_task_notebook(fleet):
    r = merge(fleet)
    no_traceback(r)
    assert r.returncode == 0, r.stderr
    assert runs(fleet.root) == {f"{e}--cpu.ipynb": _notebook(f"task {i}").encode() for i, e in enumerate(ENTRIES)}
    assert [x["notebook"] for x in records(fleet.root)] == [f"docs/verification/runs/{e}--cpu.ipynb" for e in ENTRIES]


def _plant(f, how: str) -> str:
    """Make task 0's notebook hostile; returns what its record's slurm.notebook says."""
    nb = f.spool / "nb" / "0" / "RMN-0001--cpu.ipynb"
    if how == "absolute /etc/passwd":
        return "/etc/passwd"
    if how == "absolute credentials":
        return str(f.creds)
    if how == "dot-dot":
        return "nb/0/../../outside/credentials.json"
    if how == "symlink to /etc/passwd":
        nb.unlink()
        nb.symlink_to("/etc/passwd")
    elif how == "symlink to credentials":
        nb.unlink()
        nb.symlink_to(f.creds)
    elif how == "symlinked folder":
        shutil.rmtree(nb.parent)
        (f.outside / "RMN-0001--cpu.ipynb").write_text(json.dumps({"token": SECRET}))
        nb.parent.symlink_to(f.outside, target_is_directory=True)
    elif how == "another task's notebook":
        return "nb/1/RMN-0002--cpu.ipynb"
    return "nb/0/RMN-0001--cpu.ipynb"


@pytest.mark.parametrize("how", ["absolute /etc/passwd", "absolute credentials", "dot-dot", "symlink to /etc/passwd",
                                 "symlink to credentials", "symlinked folder", "another task's notebook"])
def test_merge_publishes_no_file_from_outside_the_spool(fleet, how):
    write_record(fleet.spool, 0, _record(0, slurm_notebook=_plant(fleet, how)))
    r = merge(fleet)
    no_traceback(r)
    nothing_from_outside(fleet.root)
    # Reported, exit 2; task 0 is recorded without a notebook, and the other tasks as usual.
    assert r.returncode == 2 and b"task 0 (RMN-0001)" in r.stderr and b"no notebook published" in r.stderr
    assert runs(fleet.root) == {f"{e}--cpu.ipynb": _notebook(f"task {i}").encode()
                                for i, e in enumerate(ENTRIES) if i}
    recs = records(fleet.root)
    assert [x["entry"] for x in recs] == list(ENTRIES) and "notebook" not in recs[0]


def test_the_record_does_not_choose_where_its_notebook_is_written(fleet):
    # The published name comes from the checked source, never from the record's own `notebook` field ...
    write_record(fleet.spool, 0, _record(0, notebook="docs/verification/runs/RMN-0009--rocm-gfx942.ipynb"))
    r = merge(fleet)
    no_traceback(r)
    assert r.returncode == 0, r.stderr
    assert sorted(runs(fleet.root)) == [f"{e}--cpu.ipynb" for e in ENTRIES]
    assert records(fleet.root)[0]["notebook"] == "docs/verification/runs/RMN-0001--cpu.ipynb"
    # ... and a record whose `notebook` leaves the site is refused before anything is written.
    write_record(fleet.spool, 0, _record(0, notebook="../outside/planted.ipynb"))
    (fleet.root / "runbooks" / "ledger.jsonl").unlink()
    before = sorted(p.name for p in fleet.outside.iterdir())
    r = merge(fleet)
    no_traceback(r)
    assert sorted(p.name for p in fleet.outside.iterdir()) == before
    assert r.returncode == 2 and b"task 0: tasks/0.jsonl:1: notebook: must be a notebook under" in r.stderr
    assert [x["entry"] for x in records(fleet.root)] == ["RMN-0002", "RMN-0003"]


# ------------------------------------------------------------------ M5: the task's word about its entry

@pytest.mark.parametrize("claim", [{"entry": "RMN-0042", "runbook": "runbooks/compile/RMN-0042.ipynb"},
                                   {"runbook": "runbooks/runtime/RMN-0002.ipynb"}])
def test_a_record_of_another_entry_than_the_manifest_gave_is_refused(fleet, claim):
    write_record(fleet.spool, 1, _record(1, **claim))
    r = merge(fleet)
    no_traceback(r)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert "task 1: its record is of" in err and "not merged" in err and claim["runbook"] in err
    recs = records(fleet.root)
    assert [(x["entry"], x["runbook"]) for x in recs] == [
        ("RMN-0001", "runbooks/compile/RMN-0001.ipynb"), ("RMN-0003", "runbooks/compile/RMN-0003.ipynb")]
    assert not any("RMN-0042" in name for name in runs(fleet.root))


# ------------------------------------------------------------------ L2: malformed manifests

def _manifest(spool: Path) -> dict:
    return json.loads((spool / "manifest.json").read_text())


MANIFESTS = {
    "tasks of numbers": (lambda m: m.update(tasks=[1, 2, 3]), "tasks[0]: must be a mapping"),
    "no classes": (lambda m: m.pop("classes"), "classes: must be a mapping"),
    "task of an unknown class": (lambda m: m["tasks"][1].update({"class": "h100"}), "tasks[1].class"),
    "run id not a string": (lambda m: m.update(run=5), "run: must be a run id"),
    "task number a string": (lambda m: m["tasks"][0].update(task="0"), "tasks[0].task"),
    "job id an option": (lambda m: m["classes"]["mi300x"].update(job="--help"), "classes.mi300x.job"),
    "entry not an id": (lambda m: m["tasks"][2].update(entry=["RMN-0003"]), "tasks[2].entry"),
    "timeout nan": (lambda m: m["tasks"][2].update(timeout=float("nan")), "tasks[2].timeout"),
}


@pytest.mark.parametrize("case", sorted(MANIFESTS))
def test_a_malformed_manifest_is_a_message_and_exit_2(fleet, case):
    change, expect = MANIFESTS[case]
    m = _manifest(fleet.spool)
    change(m)
    (fleet.spool / "manifest.json").write_text(json.dumps(m))
    r = merge(fleet)
    no_traceback(r)
    assert r.returncode == 2 and b"manifest.json: " + expect.encode() in r.stderr, r.stderr
    assert records(fleet.root) == []


@pytest.mark.parametrize("text", ["[" * 100000,
                                  '{"format": 1, "run": "r", "tasks": [], "classes": {}, "x": 1' + "9" * 5000 + "}",
                                  "\ufeff{}", "{\"format\": 1,\n\"run\": }"])
def test_an_unreadable_manifest_is_a_message_and_exit_2(fleet, text):
    (fleet.spool / "manifest.json").write_text(text)
    r = merge(fleet)
    no_traceback(r)
    assert r.returncode == 2 and b"manifest.json" in r.stderr


# ------------------------------------------------------------------ L5: the run id is the key across copies

def _merge_in_child(spool, root, lp, barrier):
    # Every merge reads the ledger before any appends (the barrier), as two merges started at once can.
    real, calls = ledger.read, []

    def read(path):
        out = real(path)
        if Path(path) == lp and not calls:
            calls.append(1)
            with contextlib.suppress(Exception):
                barrier.wait(60)
        return out
    ledger.read = read
    states = {f"77_{i}": slurmstate.TaskState("COMPLETED", "COMPLETED", "gpu-a01", "0:0", None, None, "sacct")
              for i in range(3)}
    fleetmerge.merge(spool, root, lp, settle=0, query=lambda jobs: slurmstate.Snapshot(True, {}, dict(states)))


def test_two_copies_of_one_spool_merged_at_once_add_each_task_once(tmp_path):
    root = make_root(tmp_path / "root")
    copies = [make_spool(tmp_path / "a" / "spool"), make_spool(tmp_path / "b" / "spool")]    # same run id
    lp = root / "runbooks" / "ledger.jsonl"
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(4)
    procs = [ctx.Process(target=_merge_in_child, args=(copies[i % 2], root, lp, barrier)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(CEILING)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    recs = records(root)
    assert sorted((x["slurm"]["run"], x["slurm"]["task"]) for x in recs) == [(RUN, n) for n in range(3)]
    assert sorted(runs(root)) == [f"{e}--cpu.ipynb" for e in ENTRIES]
    assert not [p for p in (root / "docs" / "verification" / "runs").iterdir() if p.name.startswith(".")]


# ------------------------------------------------------------------ L6: FIFOs, regular files only

FIFOS = {   # where: (exit code, what stderr must say)
    "manifest.json": (2, b"manifest.json: cannot be read: not a regular file"),
    "tasks/0.jsonl": (2, b"task 0 (RMN-0001): tasks/0.jsonl: not a regular file: not merged"),
    "tasks/0.start.json": (2, b"tasks/0.start.json: not a regular file: ignored"),
    "tasks/0.signal.json": (2, b"tasks/0.signal.json: not a regular file: ignored"),
    "logs/77_0.out": (2, b"logs/77_0.out: not a regular file: ignored"),
    "nb/0/RMN-0001--cpu.ipynb": (2, b"nb/0/RMN-0001--cpu.ipynb: not a regular file: no notebook published"),
    "merge.lock": (0, b""),
}


@pytest.mark.parametrize("where", sorted(FIFOS))
def test_a_fifo_in_the_spool_neither_hangs_the_merge_nor_is_read(fleet, where):
    p = fleet.spool / where
    if where.startswith(("tasks/0.s", "logs/")):
        (fleet.spool / "tasks" / "0.jsonl").unlink()          # a task without a record: these files are read
    if p.exists():
        p.unlink()
    os.mkfifo(p)
    r = merge(fleet)
    no_traceback(r)
    rc, said = FIFOS[where]
    assert r.returncode == rc and said in r.stderr, r.stderr
    if where != "manifest.json":
        merged = [x["entry"] for x in records(fleet.root)]
        assert merged == (["RMN-0002", "RMN-0003"] if where == "tasks/0.jsonl" else list(ENTRIES))


@pytest.mark.parametrize("show", [True, False])
def test_a_fifo_as_the_tally_file(fleet, show):
    fifo = fleet.tmp / "tally.jsonl"
    os.mkfifo(fifo)
    log = next(REPO.glob("errata/corpus/real/RMN-0001-*.log"))
    args = ["--show-tally", "--tally", str(fifo)] if show else ["--tally", str(fifo), str(log)]
    r = errbook("triage", *args, root=fleet.root, timeout=CEILING)
    no_traceback(r)
    assert b"not a regular file" in r.stderr
    assert r.returncode == (2 if show else 0), r.stderr


# ------------------------------------------------------------------ L7: the fleet file's YAML rules

BOMB = "env:\n  A: &a \"lol\"\n" + "".join(
    f"  {c}: &{c.lower()} [{', '.join(['*' + p.lower()] * 9)}]\n" for p, c in zip("ABCDEFGH", "BCDEFGHI", strict=True))


def test_an_alias_bomb_in_the_fleet_file_is_refused_with_its_line(fleet):
    import subprocess
    import sys
    fl = fleet.tmp / "fleet.yaml"
    fl.write_text("classes:\n  mi300x: {partition: gpu}\n" + BOMB)
    r = subprocess.run([sys.executable, "-m", "errbook.cli", "--root", str(fleet.root), "run", "RMN-0001",
                        "--slurm", "--no-wait", "--fleet", str(fl), "--spool", str(fleet.tmp / "s2")],
                       capture_output=True, timeout=CEILING, preexec_fn=_limited)
    no_traceback(r)
    assert r.returncode == 2 and f"{fl}:4: YAML anchor '&a' is not allowed".encode() in r.stderr, r.stderr


@pytest.mark.parametrize("text, expect", [
    ("classes:\n  a: &x {gpus: 1}\n  b: *x\n", ":2: YAML anchor '&x'"),
    ("classes:\n  a:\n    partition: gpu\n    partition: cpu\n", ":4: duplicate key 'partition'"),
    ("gpus: " + "9" * 100 + "\n", ":1: integer literal of 100 characters"),
    ("classes:\n  a:\n    env: {X: [1, 2]}\n", ":3: classes.a.env: env values must be strings or numbers"),
    ("classes:\n  a:\n    timeout: .nan\n", ":3: classes.a.timeout: timeout must be a number of seconds > 0"),
    ("classes:\n  a:\n    timeout: -5\n", ":3: classes.a.timeout: timeout must be a number of seconds > 0"),
    ("classes:\n  a: {partitoin: batch}\n", ":2: classes.a.partitoin: unknown key 'partitoin'"),
])
def test_the_fleet_file_is_read_with_the_entries_yaml_rules(tmp_path, text, expect):
    fl = tmp_path / "fleet.yaml"
    fl.write_text(text)
    with pytest.raises(slurm.FleetError) as e:
        slurm.load_fleet(fl)
    assert str(e.value).startswith(f"{fl}{expect}")


def test_a_fifo_as_the_fleet_file(fleet):
    fifo = fleet.tmp / "fleet.yaml"
    os.mkfifo(fifo)
    r = errbook("run", "RMN-0001", "--slurm", "--no-wait", "--fleet", str(fifo), "--spool", str(fleet.tmp / "s"),
                root=fleet.root, timeout=CEILING)
    no_traceback(r)
    assert r.returncode == 2 and f"{fifo}: not a regular file".encode() in r.stderr, r.stderr


def test_every_other_yaml_file_has_the_same_rules(tmp_path):
    from errbook.kb import stale
    from errbook.triage import corpus, evaluate
    root = make_root(tmp_path / "root")
    (root / "errata" / "releases.yaml").write_text("rocm: &r {newest: '7.0'}\nhip: *r\n")
    r = errbook("stale", root=root, timeout=CEILING)
    no_traceback(r)
    assert r.returncode == 2 and b"releases.yaml:1: YAML anchor '&r' is not allowed" in r.stderr, r.stderr
    with pytest.raises(ValueError, match="releases.yaml:1: YAML anchor"):
        stale.load_releases(root)
    label = tmp_path / "x.yaml"
    label.write_text("expect: &e RMN-0001\nthread: *e\n")
    with pytest.raises(evaluate.LabelError, match=r"x.yaml:1: YAML anchor '&e'"):
        evaluate._label(label)
    real = root / "errata" / "corpus" / "real"
    real.mkdir(parents=True)
    (real / "RMN-0001-1.log").write_text("x\n")
    (real / "RMN-0001-1.yaml").write_text("expect: &e RMN-0001\nthread: *e\n")
    assert corpus.labelled_logs(root, ("real",))[0]["expect"] == "none"      # a broken label is skipped


# ------------------------------------------------------------------ L8: run --timeout

@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "-inf"])
@pytest.mark.parametrize("slurm_", [False, True])
def test_a_timeout_that_is_not_a_positive_duration_is_a_usage_error(fleet, value, slurm_):
    lp = fleet.tmp / "ledger.jsonl"
    args = ["run", "RMN-0001", f"--timeout={value}"] + (["--slurm", "--no-wait", "--spool", str(fleet.tmp / "s")]
                                                          if slurm_ else ["--ledger", str(lp), "--no-progress"])
    r = errbook(*args, root=fleet.root, timeout=CEILING)
    no_traceback(r)
    assert r.returncode == 2 and b"--timeout" in r.stderr and b"seconds" in r.stderr, r.stderr
    assert not lp.exists() and not (fleet.tmp / "s").exists()


# ------------------------------------------------------------------ fuzz

def _mutations(f, rng: random.Random):
    """Random changes to the spool: groups of [(what, apply)]. The test itself never writes through a symlink nor
    outside the spool (a target inside a folder that was replaced by a link is left alone), and reads only
    regular files: the merge's inputs are hostile, the test's own steps must not be."""
    task = rng.randrange(3)
    rel_files = ["manifest.json", f"tasks/{task}.jsonl", f"tasks/{task}.start.json", f"tasks/{task}.signal.json",
                 f"logs/77_{task}.out", f"nb/{task}/{ENTRIES[task]}--cpu.ipynb"]
    hostile_values = [None, True, 0, -1, 2 ** 70, 1e308, float("nan"), "", "x" * 5000, "../" * 10 + "etc/passwd",
                      "/etc/passwd", str(f.creds), [], {}, [[[[]]]], {"a": {"b": {}}}, "\u202e\x1b[2J\x07",
                      "RMN-0042", "runbooks/compile/RMN-0042.ipynb", f"nb/{task}/../../outside/credentials.json",
                      f"nb/{task}/{ENTRIES[task]}--cpu.ipynb",
                      f"nb/{(task + 1) % 3}/{ENTRIES[(task + 1) % 3]}--cpu.ipynb"]
    spool_real = os.path.realpath(f.spool)

    def fresh(rel):
        """The path, emptied for a new file; None when it lies behind a link (then nothing is done)."""
        p = f.spool / rel
        parent = os.path.realpath(p.parent)
        if os.path.commonpath([parent, spool_real]) != spool_real or not p.parent.is_dir():
            return None
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        elif os.path.lexists(p):
            os.unlink(p)
        return p

    def write(p, data: bytes):
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(data)

    def set_json_field(rel):
        def go():
            p = f.spool / rel
            try:
                data = json.loads(p.read_text()) if _regular(p) else {}
            except ValueError:
                data = {}
            target = data
            # Walk into a random nested mapping or list of the file, then replace one value there.
            for _ in range(rng.randrange(4)):
                kids = list(target.items()) if isinstance(target, dict) else list(enumerate(target)) \
                    if isinstance(target, list) else []
                kids = [(k, v) for k, v in kids if isinstance(v, (dict, list)) and v]
                if not kids:
                    break
                target = rng.choice(kids)[1]
            v = rng.choice(hostile_values)
            if isinstance(target, dict):
                keys = list(target) + ["entry", "runbook", "notebook", "run", "task", "job", "at", "fingerprint"]
                target[rng.choice(keys)] = v
            elif isinstance(target, list) and target:
                target[rng.randrange(len(target))] = v
            text = json.dumps(data, allow_nan=True) + ("\n" if rel.endswith(".jsonl") else "")
            if (q := fresh(rel)) is not None:
                write(q, text.encode())
        return go

    def task_record(**over):
        def go():
            if (q := fresh(f"tasks/{task}.jsonl")) is not None:
                write(q, (json.dumps(_record(task, **over)) + "\n").encode())
        return go

    def replace(rel, kind):
        def go():
            p = fresh(rel)
            if p is None:
                return
            if kind == "fifo":
                os.mkfifo(p)
            elif kind == "dir":
                p.mkdir()
            elif kind in ("dangling", "passwd", "creds", "devzero"):
                p.symlink_to({"dangling": f.tmp / "no-such-file", "passwd": Path("/etc/passwd"),
                              "creds": f.creds, "devzero": Path("/dev/zero")}[kind])
            elif kind == "bytes":
                write(p, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))))
            elif kind == "truncate":
                write(p, b'{"format": 1, "run": "r')
            elif kind == "unreadable":
                write(p, b"{}")
                p.chmod(0)
        return go

    def link_folder(d):
        def go():
            p = fresh(d)
            if p is None:
                return
            planted = Path(tempfile.mkdtemp(dir=f.outside, prefix="planted-"))   # new each time, never rewritten
            for i, e in enumerate(ENTRIES):                  # what a planted folder would offer
                (planted / f"{e}--cpu.ipynb").write_text(json.dumps({"key": SECRET}))
                (planted / f"{i}.jsonl").write_text(json.dumps(_record(i)) + "\n")
            p.symlink_to(planted, target_is_directory=True)
        return go

    def drop_record():
        fresh(f"tasks/{task}.jsonl")                  # emptied: the merge then reads start, signal and log

    kinds = ["fifo", "dir", "dangling", "passwd", "creds", "devzero", "bytes", "truncate", "unreadable"]
    fields = ["slurm_notebook", "notebook", "entry", "runbook"]
    return [   # groups of like changes, so that each kind of change comes up as often
        [(f"json field of {rel}", set_json_field(rel)) for rel in rel_files[:4]],
        [(f"{k} at {rel}", replace(rel, k)) for rel in rel_files for k in kinds],
        [(f"{d}/ a symlinked folder", link_folder(d)) for d in ("nb", "tasks", f"nb/{task}", "logs")],
        [(f"task {task} record: {k}={v!r:.60}", task_record(**{k: v})) for k in fields for v in hostile_values],
        [(f"task {task} wrote no record", drop_record)],
    ]


FUZZ_CASES = 80


@pytest.mark.slow
def test_fuzz_the_spool(fleet):
    """Random changes to a spool, 1 to 3 at a time, then a merge: it must exit 0 (merged) or 2 (with a message),
    print no traceback, end before the ceiling, publish nothing from outside the spool, write nothing outside
    the checkout, and record each task at most once, as the entry the manifest gave it."""
    rng = random.Random(2028)
    pristine = fleet.tmp / "pristine"
    shutil.copytree(fleet.spool, pristine, symlinks=True)
    outside_before = {p.name: p.read_bytes() for p in fleet.outside.iterdir()}
    for case in range(FUZZ_CASES):
        for d in (fleet.spool, fleet.root / "docs" / "verification" / "runs"):
            for top, dirs, files in os.walk(d):            # undo chmod 0 before removing (links untouched)
                for x in dirs + files:
                    if not os.path.islink(os.path.join(top, x)):
                        os.chmod(os.path.join(top, x), 0o755 if x in dirs else 0o644)
            shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(pristine, fleet.spool, symlinks=True)
        (fleet.root / "runbooks" / "ledger.jsonl").unlink(missing_ok=True)
        did = []
        for _ in range(rng.randint(1, 3)):
            what, go = rng.choice(rng.choice(_mutations(fleet, rng)))
            go()
            did.append(what)
        try:
            mp = fleet.spool / "manifest.json"
            man = json.loads(mp.read_text()) if _regular(mp) else None
            usable = man is not None and not manifest_problem(man)
            given = {t["task"]: t["entry"] for t in man["tasks"]} if usable else {}
        except (OSError, ValueError, RecursionError):
            given = {}
        r = merge(fleet)
        label = f"case {case}: {did}: exit {r.returncode}\n{r.stderr.decode(errors='replace')[-2000:]}"
        assert b"Traceback" not in r.stderr, label
        assert r.returncode in (0, 2), label
        assert r.returncode == 0 or r.stderr.strip(), label
        nothing_from_outside(fleet.root)
        for name in runs(fleet.root):
            assert "/" not in name and name.endswith("--cpu.ipynb"), label
        assert {p.name: p.read_bytes() for p in fleet.outside.iterdir() if p.name in outside_before} == \
            outside_before, label
        recs, problems = ledger.read(fleet.root / "runbooks" / "ledger.jsonl")
        assert problems == [], label
        keys = [(x["slurm"]["run"], x["slurm"]["task"]) for x in recs]
        assert len(keys) == len(set(keys)), label
        # A record is of the entry the manifest gave its task, never of one a task claims; no manifest, no record.
        assert all(x["entry"] == given.get(x["slurm"]["task"]) for x in recs), label
