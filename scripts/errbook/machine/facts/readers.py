"""Small readers of this machine, shared by the facts probes and by tiers.py (the runbook tiers): files read as
regular files only (never blocking on a FIFO), commands run with timeouts, tools found as hipcc finds them."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

from errbook.common import regfile


def read_text(path: str, limit: int = 1 << 20) -> str:
    """A machine file (/proc, /sys, <rocm>/.info/version) as text. Regular files only, opened without blocking:
    a FIFO in the place of <rocm>/.info/version would otherwise hang doctor and run (OSError instead)."""
    return regfile.read_head(path, limit).decode("utf-8", "replace")


def run_cmd(cmd: list[str], timeout: float, env: dict | None = None) -> tuple[int, str]:
    """(exit status, stdout+stderr); raises OSError / subprocess.TimeoutExpired for the caller to record."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    return r.returncode, (r.stdout or "") + (r.stderr or "")


def props(path: str) -> dict[str, int]:
    out = {}
    for line in read_text(path, 65536).splitlines():
        parts = line.split()
        if len(parts) == 2 and re.fullmatch(r"-?[0-9]+", parts[1]):
            out[parts[0]] = int(parts[1])
    return out


def rocm_version_of(prefix: str) -> str | None:
    """Version of a ROCm tree: <prefix>/.info/version ('6.2.0-66'), else the directory name (rocm-6.2.0)."""
    try:
        v = read_text(os.path.join(prefix, ".info", "version"), 256).strip().splitlines()
        if v and re.match(r"[0-9]", v[0]):
            return v[0].strip()
    except OSError:
        pass
    m = re.search(r"rocm-([0-9][0-9.]*)", os.path.basename(os.path.normpath(prefix)))
    return m.group(1).rstrip(".") if m else None


def kfd_access() -> dict:
    return {"kfd": os.path.exists("/dev/kfd"), "kfd_rw": os.access("/dev/kfd", os.R_OK | os.W_OK)}


def rocminfo_agents(text: str) -> tuple[list[str], list[str]]:
    """(gfx names of GPU agents, their marketing names) from rocminfo's output."""
    gfx = re.findall(r"^\s*Name:\s+(gfx[0-9a-f]+)\s*$", text, re.M)
    names = [n.strip() for n in re.findall(r"^\s*Marketing Name:\s+(.+)$", text, re.M)]
    return gfx, names


def rocminfo_gfx(timeout: float = 20) -> list[str] | None:
    """Sorted distinct gfx targets rocminfo lists; None when rocminfo is absent or fails."""
    exe = shutil.which("rocminfo")
    if not exe:
        return None
    try:
        _, out = run_cmd([exe], timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return sorted(set(rocminfo_agents(out)[0]))


def amd_env() -> dict:
    """Environment for hipcc: force the AMD platform (hipcc otherwise picks nvcc when it finds a CUDA toolkit)."""
    env = dict(os.environ)
    env["HIP_PLATFORM"] = "amd"
    return env


def hipcc_info(timeout: float = 20) -> dict | None:
    path = shutil.which("hipcc")
    if not path:
        return None
    try:
        _, out = run_cmd([path, "--version"], timeout, env=amd_env())
    except (OSError, subprocess.SubprocessError):
        out = ""
    hip = re.search(r"HIP version: (\S+)", out)
    clang = re.search(r"clang version (\S+)", out)
    return {"path": path, "hip_version": hip.group(1) if hip else None, "clang": clang.group(1) if clang else None}


def nvcc_path() -> str | None:
    """nvcc as hipcc's platform detection looks for it: $CUDA_PATH/bin/nvcc (default /usr/local/cuda), or PATH."""
    cand = os.path.join(os.environ.get("CUDA_PATH") or "/usr/local/cuda", "bin", "nvcc")
    if os.access(cand, os.X_OK):
        return cand
    return shutil.which("nvcc")


def nvcc_info(timeout: float = 20) -> dict | None:
    path = shutil.which("nvcc")
    if not path:
        return None
    try:
        _, out = run_cmd([path, "--version"], timeout)
    except (OSError, subprocess.SubprocessError):
        out = ""
    m = re.search(r"release (\S+),", out)
    return {"path": path, "version": m.group(1) if m else None}


def nvidia_smi(timeout: float = 20) -> list[tuple[str, str]] | None:
    """[(gpu name, driver version)] from nvidia-smi; None when it is absent or fails."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        rc, out = run_cmd([exe, "--query-gpu=name,driver_version", "--format=csv,noheader"], timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    if rc != 0:
        return None
    rows = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.rsplit(",", 1)]
        if len(parts) == 2 and parts[0]:
            rows.append((parts[0], parts[1]))
    return rows


def hip_clang_path() -> str | None:
    """The clang++ hipcc's platform detection tries before it considers nvcc (hipvars.pm / hipBin): the
    HIP-Clang directory ($HIP_CLANG_PATH, else <ROCM_PATH>/llvm/bin when it exists, else <ROCM_PATH>/bin,
    with ROCM_PATH derived from hipcc's location as hipvars.pm does), then clang++ on PATH."""
    env = os.environ
    if env.get("HIP_CLANG_PATH"):
        dirs = [env["HIP_CLANG_PATH"]]
    else:
        hipcc = shutil.which("hipcc")
        hip_path = env.get("HIP_PATH") or (os.path.dirname(os.path.dirname(os.path.realpath(hipcc))) if hipcc else "")
        if env.get("ROCM_PATH"):
            rocm = env["ROCM_PATH"]
        elif hip_path == "/usr":
            rocm = "/usr"
        elif hip_path and os.path.exists(os.path.join(hip_path, "..", "bin", "rocm_agent_enumerator")):
            rocm = os.path.dirname(hip_path)
        elif hip_path and os.path.exists(os.path.join(hip_path, "bin", "rocm_agent_enumerator")):
            rocm = hip_path
        else:
            rocm = "/opt/rocm"
        dirs = [os.path.join(rocm, "llvm", "bin") if os.path.exists(os.path.join(rocm, "llvm", "bin"))
                else os.path.join(rocm, "bin")]
    for d in dirs:
        c = os.path.join(d, "clang++")
        if os.access(c, os.X_OK):
            return c
    return shutil.which("clang++")
