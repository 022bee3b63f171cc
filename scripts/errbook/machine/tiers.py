"""Which runbook tiers this machine can run (and which tools a check may need), and its fingerprint.

Once called `platform.py`, a name that shadowed the standard library's `platform` module."""
from __future__ import annotations

import functools
import importlib.util
import os
import platform as _pf
import shutil
from pathlib import Path

from errbook.machine import fingerprint, pyprobe
from errbook.machine.facts import readers

TIERS = ("static", "toolchain", "gpu", "rocm")


# The probes themselves live in facts/readers.py and pyprobe.py (one reading of the machine for tiers and for
# `errbook doctor`); here they run with long timeouts and PyTorch is imported in-process, because the
# runbooks run in this interpreter.
amd_env = readers.amd_env


def _hipcc() -> dict | None:
    return readers.hipcc_info(timeout=20)


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
    return readers.nvcc_info(timeout=20)


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
    info: dict = readers.kfd_access()
    version = readers.rocm_version_of(os.environ.get("ROCM_PATH", "/opt/rocm"))
    if version and os.path.isfile(os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"), ".info", "version")):
        info["rocm_version"] = version
    if info["kfd"]:
        gfx = readers.rocminfo_gfx(timeout=30)
        if gfx is not None:
            info["gfx"] = gfx
    return info


def _nvidia_driver() -> str | None:
    rows = readers.nvidia_smi(timeout=20)
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
    info["fingerprint"] = fingerprint.make(info)
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
        "torch-gpu": None if t.get("available") else ("PyTorch sees no GPU" if t.get("version") else "PyTorch is not "
                                                                                                     "installed, so "
                                                                                                     "no GPU can be "
                                                                                                     "used"),
        "torch-cuda": None if t.get("available") and t.get("cuda") and not t.get("hip") else "no CUDA GPU through "
                                                                                             "PyTorch",
        "torch-rocm": None if t.get("available") and t.get("hip") else "no ROCm GPU through PyTorch",
        "cmake": None if shutil.which("cmake") else "CMake is not installed",
        "node": None if shutil.which("node") else "Node.js is not installed",
        "rocminfo": None if r.get("gfx") else "no AMD GPU visible to rocminfo (/dev/kfd missing or not accessible)",
        # Checks that drive the distribution's own Python or ROCm's hipify-perl (not pip-installable): a file test,
        # so detection stays cheap; the check itself reports what the tool then does.
        "system-torch": None if any(Path(d, "torch", "__init__.py").is_file() for d in SYSTEM_SITE)
        else "the system Python has no torch (Debian: apt-get install python3-torch)",
        "hipify-perl": None if hipify_perl() else "hipify-perl is not installed (ROCm's HIPIFY; set HIPIFY_PERL)",
    }


SYSTEM_SITE = ("/usr/lib/python3/dist-packages", "/usr/local/lib/python3/dist-packages")


def hipify_perl() -> str | None:
    """ROCm's hipify-perl: $HIPIFY_PERL, on PATH, or under /opt/rocm (runbooks call this to find it)."""
    for c in (os.environ.get("HIPIFY_PERL"), shutil.which("hipify-perl"), "/opt/rocm/bin/hipify-perl"):
        if c and os.path.isfile(c):
            return c
    return None


def tier_availability(info: dict) -> dict[str, str | None]:
    n = needs_available(info)
    return {
        "static": None,
        "toolchain": None if (n["hipcc"] is None or n["triton-amd"] is None) else "no AMD toolchain (hipcc or "
                                                                                  "Triton's AMD backend)",
        "gpu": n["torch-gpu"],
        "rocm": None if (n["torch-rocm"] is None or n["rocminfo"] is None) else "no AMD GPU with ROCm on this machine",
    }


def parse(tiers: str | list[str] | tuple[str, ...]) -> list[str]:
    """Tiers from a comma-separated string or a list; ValueError names the unknown ones."""
    names = [t.strip() for t in tiers.split(",") if t.strip()] if isinstance(tiers, str) else list(tiers)
    bad = [t for t in names if t not in TIERS]
    if bad:
        raise ValueError(f"unknown tier(s) {bad}; tiers are {TIERS}")
    return names
