"""Platform detection: the one place that decides which tiers can run here and fingerprints the machine."""
from __future__ import annotations

import functools
import importlib.util
import os
import platform as _pf
import re
import shutil
import subprocess

TIERS = ("static", "toolchain", "gpu", "rocm")


def _run(cmd: list[str], timeout: float = 20, env: dict | None = None) -> str:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return (r.stdout or "") + (r.stderr or "")
    except (OSError, subprocess.SubprocessError):
        return ""


def amd_env() -> dict:
    """Environment for hipcc: force the AMD platform (hipcc otherwise picks nvcc when it finds a CUDA toolkit)."""
    env = dict(os.environ)
    env["HIP_PLATFORM"] = "amd"
    return env


def _hipcc() -> dict | None:
    path = shutil.which("hipcc")
    if not path:
        return None
    out = _run([path, "--version"], env=amd_env())
    hip = re.search(r"HIP version: (\S+)", out)
    clang = re.search(r"clang version (\S+)", out)
    return {"path": path, "hip_version": hip.group(1) if hip else None, "clang": clang.group(1) if clang else None}


def _triton() -> dict | None:
    if importlib.util.find_spec("triton") is None:
        return None
    try:
        import triton
        from triton.backends import backends
    except Exception as e:  # a broken install is reported, not fatal
        return {"version": None, "error": str(e)[:200]}
    return {"version": triton.__version__, "amd_backend": "amd" in backends}


def _nvcc() -> dict | None:
    path = shutil.which("nvcc")
    if not path:
        return None
    m = re.search(r"release (\S+),", _run([path, "--version"]))
    return {"path": path, "version": m.group(1) if m else None}


def _torch() -> dict | None:
    if importlib.util.find_spec("torch") is None:
        return None
    try:
        import torch
    except Exception as e:
        return {"version": None, "error": str(e)[:200]}
    info = {"version": torch.__version__, "hip": getattr(torch.version, "hip", None),
            "cuda": getattr(torch.version, "cuda", None), "available": False}
    try:
        info["available"] = bool(torch.cuda.is_available())
        if info["available"]:
            p = torch.cuda.get_device_properties(0)
            info.update(device=p.name, count=torch.cuda.device_count(),
                        capability=f"{p.major}.{p.minor}",
                        gcn_arch=getattr(p, "gcnArchName", None),
                        warp_size=getattr(p, "warp_size", None))
    except Exception as e:
        info["error"] = str(e)[:200]
    return info


def _rocm_host() -> dict:
    info: dict = {"kfd": os.path.exists("/dev/kfd"), "kfd_rw": os.access("/dev/kfd", os.R_OK | os.W_OK)}
    rocm = os.environ.get("ROCM_PATH", "/opt/rocm")
    vfile = os.path.join(rocm, ".info", "version")
    if os.path.isfile(vfile):
        info["rocm_version"] = open(vfile, encoding="utf-8").read().strip()
    if info["kfd"] and shutil.which("rocminfo"):
        out = _run(["rocminfo"], timeout=30)
        archs = sorted(set(re.findall(r"Name:\s+(gfx[0-9a-f]+)", out)))
        info["gfx"] = archs
    return info


def _nvidia_driver() -> str | None:
    if not shutil.which("nvidia-smi"):
        return None
    out = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]).strip()
    return out.splitlines()[0] if out else None


@functools.lru_cache(maxsize=1)
def detect() -> dict:
    torch = _torch()
    rocm = _rocm_host()
    info = {
        "machine": _pf.machine(),
        "os": _pf.platform(terse=True),
        "python": _pf.python_version(),
        "toolchains": {k: v for k, v in (("hipcc", _hipcc()), ("triton", _triton()), ("nvcc", _nvcc())) if v},
        "torch": torch,
        "rocm": rocm,
        "nvidia_driver": _nvidia_driver(),
    }
    info["tiers"] = tier_availability(info)
    info["fingerprint"] = fingerprint(info)
    return info


def needs_available(info: dict) -> dict[str, str | None]:
    """For each 'needs' a check may declare: None when available, else the reason it is not."""
    tc, t, r = info["toolchains"], info["torch"] or {}, info["rocm"]
    hip = tc.get("hipcc")
    tri = tc.get("triton") or {}
    return {
        "hipcc": None if hip and hip.get("clang") else "hipcc (HIP-Clang) is not installed",
        "triton-amd": None if tri.get("amd_backend") else "Triton with its AMD backend is not installed",
        "torch": None if t.get("version") else "PyTorch is not installed",
        "torch-gpu": None if t.get("available") else ("PyTorch sees no GPU" if t.get("version") else "PyTorch is not installed, so no GPU can be used"),
        "torch-cuda": None if t.get("available") and t.get("cuda") and not t.get("hip") else "no CUDA GPU through PyTorch",
        "torch-rocm": None if t.get("available") and t.get("hip") else "no ROCm GPU through PyTorch",
        "cmake": None if shutil.which("cmake") else "CMake is not installed",
        "node": None if shutil.which("node") else "Node.js is not installed",
        "rocminfo": None if r.get("gfx") else "no AMD GPU visible to rocminfo (/dev/kfd missing or not accessible)",
    }


def tier_availability(info: dict) -> dict[str, str | None]:
    n = needs_available(info)
    return {
        "static": None,
        "toolchain": None if (n["hipcc"] is None or n["triton-amd"] is None) else "no AMD toolchain (hipcc or Triton's AMD backend)",
        "gpu": n["torch-gpu"],
        "rocm": None if (n["torch-rocm"] is None or n["rocminfo"] is None) else "no AMD GPU with ROCm on this machine",
    }


def fingerprint(info: dict) -> dict:
    """The short facts a ledger record keeps about where a run happened."""
    t = info.get("torch") or {}
    tc = info.get("toolchains", {})
    fp = {"machine": info.get("machine"), "os": info.get("os")}
    if t.get("available"):
        fp["gpu"] = t.get("device")
        if t.get("hip"):
            fp.update(platform="rocm", arch=(t.get("gcn_arch") or "").split(":")[0], rocm=t.get("hip"))
        else:
            fp.update(platform="cuda", capability=t.get("capability"), cuda=t.get("cuda"),
                      driver=info.get("nvidia_driver"))
        fp["torch"] = t.get("version")
    else:
        fp["platform"] = "cpu"
    if info.get("rocm", {}).get("rocm_version"):
        fp["rocm_host"] = info["rocm"]["rocm_version"]
    if "hipcc" in tc:
        fp["hipcc"] = f"HIP {tc['hipcc'].get('hip_version')} / clang {tc['hipcc'].get('clang')}"
    if (tc.get("triton") or {}).get("version"):
        fp["triton"] = tc["triton"]["version"]
    return fp


def label(fp: dict) -> str:
    """Human label for a fingerprint, e.g. 'CUDA · NVIDIA H200' or 'CPU · hipcc 5.2'."""
    plat = fp.get("platform")
    if plat == "cuda":
        return f"CUDA · {fp.get('gpu')}"
    if plat == "rocm":
        return f"ROCm {fp.get('rocm')} · {fp.get('arch') or fp.get('gpu')}"
    return "CPU (no GPU)"
