"""A throwaway single-node Slurm cluster on localhost for the tests: munged, slurmctld and slurmd from Debian's
packages (munge, slurm-wlm; `bash scripts/bootstrap.sh install` installs them), no systemd.

Everything lives in one temporary folder: the munge key and socket (slurm.conf points AuthInfo at that socket,
so the machine's own munged, if any, is left alone), slurm.conf on free ports, state, spool and logs. The
daemons run in the foreground as children of the test, munged as the munge user, slurmctld and slurmd as root.
stop() cancels every job, stops the daemons, kills any process still carrying this cluster's SLURM_CONF in its
environment (job steps included) or naming its folder on its command line (munged) and reports them, so a test
run leaves nothing behind. Nothing here touches the machine's services: Debian's munge, slurmctld and slurmd
units stay stopped and disabled (scripts/bootstrap.sh keeps the packages from starting or enabling them).
"""
from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SBIN = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/bin"])
PROGRAMS = ("munged", "slurmctld", "slurmd", "slurmstepd", "sbatch", "squeue", "scontrol", "scancel", "sinfo")
# Waits are on events; a limit only catches a hang, and a loaded 2-core machine needs a generous one (issue 28 L12;
# tests/hostile/test_suite_timing.py checks this file too).
HANG = 180


def unavailable() -> str | None:
    """Why a cluster cannot be started here, or None."""
    missing = [p for p in PROGRAMS if not shutil.which(p, path=SBIN)]
    if missing:
        return (f"Slurm/munge programs not installed ({', '.join(missing)}); "
                "`bash scripts/bootstrap.sh install` installs Debian's slurm-wlm and munge")
    if os.geteuid() != 0:
        return "slurmd must run as root (SlurmUser=root) and munged as the munge user: run the test as root"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "the munge user does not exist (the munge package creates it)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(pred, timeout: float, what: str, step: float = 0.2):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise TimeoutError(f"{what} not ready after {timeout:.0f}s")


class Cluster:
    def __init__(self, cpus: int = 4):
        self.cpus = cpus
        self.base = Path(tempfile.mkdtemp(prefix="errbook-slurm-", dir="/tmp"))
        self.base.chmod(0o755)                           # munged (not root) must reach its socket folder
        self.conf = self.base / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf), PATH=SBIN)
        self.procs: dict[str, subprocess.Popen] = {}
        self.leftovers: list[str] = []

    def which(self, prog: str) -> str:
        return shutil.which(prog, path=SBIN)

    def run(self, *cmd: str, timeout: float = HANG) -> subprocess.CompletedProcess:
        return subprocess.run([self.which(cmd[0]), *cmd[1:]], env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    # ------------------------------------------------------------ start
    def start(self) -> Cluster:
        try:
            self._munge()
            self._slurm()
        except Exception:
            self.stop()
            raise
        return self

    def _munge(self) -> None:
        m = self.base / "munge"
        m.mkdir(mode=0o755)
        key = m / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        pw = pwd.getpwnam("munge")
        for p in (m, key):
            os.chown(p, pw.pw_uid, pw.pw_gid)
        self.socket = m / "munge.socket"
        log = open(self.base / "munged.out", "wb")  # noqa: SIM115 (the daemon writes it until stop())
        self.procs["munged"] = subprocess.Popen(
            [self.which("munged"), "-F", f"--socket={self.socket}", f"--key-file={key}",
             f"--pid-file={m / 'munged.pid'}", f"--log-file={m / 'munged.log'}", f"--seed-file={m / 'munged.seed'}"],
            user=pw.pw_uid, group=pw.pw_gid, extra_groups=[], stdout=log, stderr=subprocess.STDOUT,
            env={"PATH": SBIN}, start_new_session=True)
        _wait(lambda: self.socket.exists() or self._died("munged"), HANG, "munged")

    def _died(self, name: str) -> bool:
        p = self.procs[name]
        if p.poll() is not None:
            logs = "\n".join(f.read_text(errors="replace")[-1500:] for f in self.base.rglob("*.log") if f.is_file())
            raise RuntimeError(f"{name} exited with {p.returncode}:\n{logs}")
        return False

    def _slurm(self) -> None:
        b = self.base
        for d in ("state", "spool", "log"):
            (b / d).mkdir()
        self.ctld_port, self.slurmd_port = _free_port(), _free_port()
        self.conf.write_text(f"""\
ClusterName=errbooktest
SlurmctldHost=localhost
SlurmctldPort={self.ctld_port}
SlurmdPort={self.slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.socket}
StateSaveLocation={b}/state
SlurmdSpoolDir={b}/spool
SlurmctldPidFile={b}/slurmctld.pid
SlurmdPidFile={b}/slurmd.pid
SlurmctldLogFile={b}/log/slurmctld.log
SlurmdLogFile={b}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SlurmdParameters=config_overrides
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
KillWait=5
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
""")
        for name, cmd in (("slurmctld", [self.which("slurmctld"), "-D", "-i", "-f", str(self.conf)]),
                          ("slurmd", [self.which("slurmd"), "-D", "-N", "localhost", "-f", str(self.conf)])):
            out = open(b / f"{name}.out", "wb")  # noqa: SIM115 (the daemon writes it until stop())
            self.procs[name] = subprocess.Popen(cmd, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                                start_new_session=True)
            if name == "slurmctld":
                _wait(lambda: self._died("slurmctld") or self.run("scontrol", "ping").returncode == 0,
                      HANG, "slurmctld")

        def idle():
            self._died("slurmd")
            r = self.run("sinfo", "-h", "-n", "localhost", "-o", "%T")
            return r.returncode == 0 and r.stdout.strip() == "idle"
        _wait(idle, HANG, "the node (sinfo: idle)", step=0.3)

    # ------------------------------------------------------------ stop
    def _ours(self) -> list[int]:
        """Processes started by this cluster: the daemons (munged is given no SLURM_CONF, but its command line
        names this cluster's folder), job steps and jobs (they carry its SLURM_CONF)."""
        mark = f"SLURM_CONF={self.conf}".encode()
        folder = str(self.base).encode()
        mine = []
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == os.getpid():
                continue
            try:
                env = Path(f"/proc/{d}/environ").read_bytes()
                cmd = Path(f"/proc/{d}/cmdline").read_bytes()
            except OSError:
                continue
            if mark in env.split(b"\0") or any(a.startswith(folder) or (b"=" + folder) in a for a in cmd.split(b"\0")):
                mine.append(int(d))
        return mine

    def daemons_running(self) -> list[str]:
        """This cluster's daemons (munged, slurmctld, slurmd) that are still alive, by name and pid."""
        return [f"{name} {p.pid}" for name, p in self.procs.items() if p.poll() is None]

    def stop(self) -> list[str]:
        """Stop everything; returns descriptions of processes that had to be killed after the daemons stopped."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            try:
                jobs = self.run("squeue", "-h", "-o", "%A", timeout=HANG).stdout.split()
                if jobs:
                    self.run("scancel", *sorted(set(jobs)), timeout=HANG)
                    _wait(lambda: not self.run("squeue", "-h", timeout=HANG).stdout.strip(), HANG, "job cancellation")
            except (subprocess.SubprocessError, TimeoutError, OSError):
                pass
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        left = []
        for pid in self._ours():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                left.append(f"{pid}: {cmd[:200]}")
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.leftovers = left
        shutil.rmtree(self.base, ignore_errors=True)
        return left
