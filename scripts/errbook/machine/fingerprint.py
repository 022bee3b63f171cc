"""A run's platform fingerprint: how it is made, and the one place that classifies it.

A fingerprint is the short dict of facts a ledger record keeps about where a runbook ran (`make`). Every reader
that groups or names runs goes through `kind` and the three views below, so the ledger, the entry pages, the
verification matrix and the CLI cannot disagree about which platform a record belongs to:
- `label`: the words a person reads ("CUDA · NVIDIA H200", "ROCm 6.2 · gfx942", "CPU (no GPU)");
- `entry_key`: the group of an entry page's verification table and of `errbook run --changed` (one per GPU
  model or AMD architecture: "cuda:NVIDIA H200", "rocm:gfx942", "cpu"), also the executed notebook's name;
- `fleet_key` / `fleet_label`: a column of the verification matrix (kind, architecture or GPU, ROCm version).
"""
from __future__ import annotations

from typing import Any

KINDS = ("rocm", "cuda", "cpu")


def make(info: dict) -> dict:
    """The fingerprint of a machine as tiers.detect() describes it."""
    t = info.get("torch") or {}
    tc = info.get("toolchains", {})
    fp: dict[str, Any] = {"machine": info.get("machine"), "os": info.get("os")}
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


def kind(fp: Any) -> str:
    """rocm, cuda or cpu: a fingerprint that names no GPU platform (or is not a mapping) is a CPU run."""
    plat = fp.get("platform") if isinstance(fp, dict) else None
    return plat if plat in ("rocm", "cuda") else "cpu"


def label(fp: dict) -> str:
    """Human label for a fingerprint, e.g. 'CUDA · NVIDIA H200' or 'ROCm 6.2.41133 · gfx942'."""
    k = kind(fp)
    if k == "cuda":
        return f"CUDA · {fp.get('gpu')}"
    if k == "rocm":
        return f"ROCm {fp.get('rocm')} · {fp.get('arch') or fp.get('gpu')}"
    return "CPU (no GPU)"


def entry_key(fp: dict) -> str:
    """The platform group of a record on an entry page and in `errbook run --changed`."""
    k = kind(fp)
    if k == "cuda":
        return f"cuda:{fp.get('gpu')}"
    if k == "rocm":
        return f"rocm:{fp.get('arch') or fp.get('gpu')}"
    return "cpu"


def fleet_key(fp: Any) -> tuple[str, str, str]:
    """Matrix column of a ledger record: (kind, architecture or GPU, software version)."""
    k = kind(fp)
    if k == "rocm":
        return ("rocm", str(fp.get("arch") or fp.get("gpu") or "?"), str(fp.get("rocm") or fp.get("rocm_host") or "?"))
    if k == "cuda":
        return ("cuda", str(fp.get("gpu") or "?"), "")
    return ("cpu", "", "")


def fleet_label(key: tuple) -> str:
    k, what, ver = key
    if k == "rocm":
        return f"{what} · ROCm {ver}"
    if k == "cuda":
        return f"CUDA · {what}"
    return "CPU (no GPU)"
