"""Platform detection: the one place that decides which tiers can run here and fingerprints the machine."""
from __future__ import annotations

import functools
import importlib.util
import os
import platform as _pf
import shutil

from . import facts, pyprobe

TIERS = ("static", "toolchain", "gpu", "rocm")


# The probes themselves live in facts.py / pyprobe.py (one reading of the machine for tiers and for
# `errbook doctor`); here they run with long timeouts and PyTorch is imported in-process, because the
# runbooks run in this interpreter.
amd_env = facts.amd_env


def _hipcc() -> dict | None:
    return facts.hipcc_info(timeout=20)


def _triton() -> dict | None:
    info = pyprobe.triton_info(do_import=True)
    if not info.get("installed"):
        return None
    out = {"version": info.get("version")}
    if info.get("error"):
        out["error"] = info["error"]
    else:
        out["amd_backend"] = bool(info.get("amd_backend"))
    return out


def _nvcc() -> dict | None:
    return facts.nvcc_info(timeout=20)


def _torch() -> dict | None:
    if importlib.util.find_spec("torch") is None:
        return None
    try:
        t = pyprobe.torch_runtime()
    except Exception as e:
        return {"version": None, "error": str(e)[:200]}
    info = {"version": t["version"], "hip": t["hip"], "cuda": t["cuda"], "available": t["available"]}
    if t["available"] and t["devices"]:
        d = t["devices"][0]
        info.update(device=d["name"], count=t["count"], capability=d["capability"], gcn_arch=d["gcn_arch"],
                    warp_size=d["warp_size"])
    if t.get("error"):
        info["error"] = t["error"]
    return info


def _rocm_host() -> dict:
    info: dict = facts.kfd_access()
    version = facts.rocm_version_of(os.environ.get("ROCM_PATH", "/opt/rocm"))
    if version and os.path.isfile(os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"), ".info", "version")):
        info["rocm_version"] = version
    if info["kfd"]:
        gfx = facts.rocminfo_gfx(timeout=30)
        if gfx is not None:
            info["gfx"] = gfx
    return info


def _nvidia_driver() -> str | None:
    rows = facts.nvidia_smi(timeout=20)
    return rows[0][1] if rows else None


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
