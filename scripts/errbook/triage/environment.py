"""Environment evidence in a log: lines that state the GPU target, the ROCm or PyTorch version, or environment
variables. They re-rank candidates through the entries' triggers (a log from a gfx1100 machine makes an entry
about gfx90a less likely; a stated ROCm release outside an entry's applies_to range counts against it).

The fact patterns run as extra prefilter patterns (their matching lines are collected as scan notes), so a
multi-gigabyte log is read once. engine.js applies the same patterns and the same arithmetic.
"""
from __future__ import annotations

import re

from errbook.kb import versions

CAP = 20
EXTRAS = [
    ("gfx", r"(?:gfx9[0-9a-f]{2}|gfx1[0-2][0-9a-f]{2}|gfx8[0-9]{2})", False, CAP),
    ("rocm", r"(?:rocm[-_ /]?v?|hip version: ?)[0-9]+\.[0-9]+", True, CAP),
    ("torch", r"(?:torch|pytorch)(?: version)?(?:==|: ?| )v?[0-9]+\.[0-9]+", True, CAP),
    ("env", r"(?:HSA_|HIP_|ROCM_|ROCR_|HCC_|AMD_|MIOPEN_|ROCBLAS_|HIPBLASLT_|NCCL_|RCCL_|PYTORCH_|TORCH_|CUDA_|"
            r"VLLM_|TRITON_|GPU_)[A-Z0-9_]*=[^ ]*", False, CAP),
]
_GFX = re.compile(r"gfx(?:9[0-9a-f]{2}|1[0-2][0-9a-f]{2}|8[0-9]{2})", re.ASCII)
_ROCM = re.compile(r"(?:rocm[-_ /]?v?|hip version: ?)([0-9]+\.[0-9]+(?:\.[0-9]+)?)", re.ASCII | re.IGNORECASE)
_TORCH = re.compile(r"(?:torch|pytorch)(?: version)?(?:==|: ?| )v?([0-9]+\.[0-9]+(?:\.[0-9]+)?)",
                    re.ASCII | re.IGNORECASE)
_ENV = re.compile(r"((?:HSA_|HIP_|ROCM_|ROCR_|HCC_|AMD_|MIOPEN_|ROCBLAS_|HIPBLASLT_|NCCL_|RCCL_|PYTORCH_|TORCH_|"
                  r"CUDA_|VLLM_|TRITON_|GPU_)[A-Z0-9_]*)=([^ ]*)", re.ASCII)
PLUS, MINUS, LOW, HIGH = 15, 30, -60, 30     # score points per corroboration / contradiction, and the clamp
# What assets/engine.js ports this module with (the bundle's `logfacts` part; engine.js compiles gfx and env with
# the g flag, rocm and torch with i, as IGNORECASE here).
JS_SPEC = {"gfx": _GFX.pattern, "rocm": _ROCM.pattern, "torch": _TORCH.pattern, "env": _ENV.pattern,
           "plus": PLUS, "minus": MINUS, "low": LOW, "high": HIGH}


def from_notes(notes: dict) -> dict:
    """Facts from the collected lines: {'gfx': [...], 'rocm': '6.2.4', 'torch': '2.5.1', 'env': [...]}."""
    facts: dict = {}
    gfx = sorted({g for line in notes.get("gfx", []) for g in _GFX.findall(line)})
    if gfx:
        facts["gfx"] = gfx
    for key, rx in (("rocm", _ROCM), ("torch", _TORCH)):
        for line in notes.get(key, []):
            m = rx.search(line)
            if m:
                facts[key] = m.group(1)
                break
    env = sorted({m.group(1) for line in notes.get("env", []) for m in _ENV.finditer(line)})
    if env:
        facts["env"] = env
    return facts


def profile(e) -> dict:
    """What of an entry's triggers and applies_to the log facts can speak to."""
    t = e.get("triggers") or {}
    archs = [a for a in t.get("gpu_archs") or [] if a != "any"]
    rocm = [r for r in t.get("rocm_versions") or [] if r != "any"]
    torch = [f["versions"] for f in t.get("frameworks") or [] if f.get("name") == "pytorch" and f.get("versions")]
    for a in e.get("applies_to") or []:
        if a.get("versions") and a["versions"] != "any":
            if a.get("component") == "rocm":
                rocm.append(a["versions"])
            elif a.get("component") == "pytorch":
                torch.append(a["versions"])
    env = sorted({v["name"] for v in t.get("env") or []})
    return {k: v for k, v in (("archs", archs), ("rocm", rocm), ("torch", torch), ("env", env)) if v}


def arch_matches(gfx: str, archs: list[str]) -> bool:
    return any(gfx == a or (a.endswith("-generic") and gfx.startswith(a[:-len("-generic")])) for a in archs)


def _in_range(v: str, rng) -> bool | None:
    """A range that cannot be read says nothing (unknown), as in engine.js; triage reads only entries that
    passed the schema and validate names the range."""
    try:
        return versions.in_range(v, rng)
    except versions.RangeError:
        return None


def adjust(prof: dict, facts: dict) -> tuple[int, list[str]]:
    """(score points, reasons) for one entry."""
    plus, minus, why = 0, 0, []
    machine = set(facts.get("from_machine", ()))     # facts a --facts file filled in, said as such
    names = "this machine has" if "gfx" in machine else "the log names"
    if prof.get("archs") and facts.get("gfx"):
        hit = [g for g in facts["gfx"] if arch_matches(g, prof["archs"])]
        if hit:
            plus += 1
            why.append(f"{names} {hit[0]}, which this entry's trigger lists")
        else:
            minus += 1
            why.append(f"{names} {', '.join(facts['gfx'][:3])}; this entry is about {', '.join(prof['archs'][:4])}")
    for key, label in (("rocm", "ROCm"), ("torch", "PyTorch")):
        if prof.get(key) and facts.get(key):
            inside = [_in_range(facts[key], r) for r in prof[key]]
            if any(x is True for x in inside):
                plus += 1
                why.append(f"{label} {facts[key]} is in the range this entry applies to")
            elif all(x is False for x in inside):
                minus += 1
                why.append(f"{label} {facts[key]} is outside the range this entry applies to ({'; '.join(prof[key])})")
    if prof.get("env") and facts.get("env"):
        both = [v for v in prof["env"] if v in facts["env"]]
        if both:
            plus += 1
            sets = f"this machine has {both[0]} set" if "env" in machine else f"the log sets {both[0]}"
            why.append(f"{sets}, which this entry's trigger names")
    return max(LOW, min(HIGH, PLUS * plus - MINUS * minus)), why
