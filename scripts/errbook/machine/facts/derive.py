"""Derived facts: computed from other facts, for a machine's own collection and for a saved facts file alike.

Pure: `derive` reads only the values it is given. Evaluating another machine's saved facts must never look at
this machine (its files, its paths). Only collect() passes `resolve`, which turns a library path into its install
prefix through the local filesystem (symlinks resolved); without it the prefix is read from the path's text.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable

from errbook.machine.facts.gfx import override_target

# every fact derive() can fill (the vocabulary says "(derived)" for them)
DERIVED = ("gpu.amd_count", "gpu.gfx", "gpu.override_gfx", "gpu.runtime_gfx", "gpu.not_in_pytorch_rocm_arch",
           "torch.missing_gfx", "rocblas.missing_gfx", "torch.rocblas_missing_gfx", "miopen.missing_kdb_gfx",
           "libs.amdhip64_prefixes", "machine.kind")
_OV = "env.HSA_OVERRIDE_GFX_VERSION"

Put = Callable[[str, object, list[str]], None]


def derive(values: dict, sources: dict | None = None, resolve: Callable[[str], str] | None = None) -> None:
    """Fill derived facts that are missing and whose inputs are known (a facts file from an older collector,
    or a hand-written fixture, gets them too). values: name -> value; sources: name -> source (updated).
    resolve: a library path -> its install prefix on this machine (collect() only); default: lexical_prefix."""
    sources = sources if sources is not None else {}

    def put(name, value, inputs):
        if name not in values:
            values[name] = value
            sources[name] = "derived from " + ", ".join(inputs)

    for rule in (_amd_count, _no_gpu_gfx, _override, _pytorch_rocm_arch, _torch_missing, _library_missing,
                 _miopen_missing):
        rule(values, put)
    _amdhip_prefixes(values, put, resolve or lexical_prefix)
    _machine_kind(values, put)


def _base(t: str) -> str:
    return t.split(":")[0].strip()


def _amd_count(values: dict, put: Put) -> None:
    if "gpu.amd_count" not in values:
        known = [values[k] for k in ("gpu.kfd_count", "gpu.pci_amd_count") if isinstance(values.get(k), int)]
        if known:
            put("gpu.amd_count", max(known), ["gpu.kfd_count", "gpu.pci_amd_count"])


def _no_gpu_gfx(values: dict, put: Put) -> None:
    if "gpu.gfx" not in values and values.get("gpu.kfd_count") == 0 and values.get("gpu.pci_amd_count") == 0:
        put("gpu.gfx", [], ["gpu.kfd_count", "gpu.pci_amd_count"])


def _override(values: dict, put: Put) -> None:
    """The target HSA_OVERRIDE_GFX_VERSION names, and the targets the runtime will report."""
    if _OV not in values:
        return
    put("gpu.override_gfx", override_target(values[_OV]), [_OV])
    if "gpu.gfx" in values and isinstance(values["gpu.gfx"], list):
        ov = values[_OV]
        if ov is None:
            put("gpu.runtime_gfx", list(values["gpu.gfx"]), ["gpu.gfx", _OV])
        elif override_target(ov) and values["gpu.gfx"]:
            put("gpu.runtime_gfx", [override_target(ov)], ["gpu.gfx", _OV])
        elif override_target(ov):
            put("gpu.runtime_gfx", [], ["gpu.gfx", _OV])


def _pytorch_rocm_arch(values: dict, put: Put) -> None:
    rt = values.get("gpu.runtime_gfx")
    if isinstance(rt, list) and "env.PYTORCH_ROCM_ARCH" in values:
        arch = values["env.PYTORCH_ROCM_ARCH"]
        listed = {_base(a) for a in re.split(r"[;\s]+", arch or "") if a.strip()}
        put("gpu.not_in_pytorch_rocm_arch", [g for g in rt if arch is not None and g not in listed],
            ["gpu.runtime_gfx", "env.PYTORCH_ROCM_ARCH"])


def _torch_missing(values: dict, put: Put) -> None:
    rt = values.get("gpu.runtime_gfx")
    if isinstance(rt, list) and "torch.arch_list" in values and "torch.build" in values:
        al = values["torch.arch_list"]
        ok = values["torch.build"] == "rocm" and isinstance(al, list) and al
        put("torch.missing_gfx", [g for g in rt if ok and g not in {_base(a) for a in al}],
            ["gpu.runtime_gfx", "torch.arch_list", "torch.build"])


def _library_missing(values: dict, put: Put) -> None:
    rt = values.get("gpu.runtime_gfx")
    for have, miss, inputs in (("rocblas.gfx", "rocblas.missing_gfx", "rocblas.library_dir"),
                               ("torch.rocblas_gfx", "torch.rocblas_missing_gfx", "torch.build")):
        if isinstance(rt, list) and (have in values or inputs in values):
            lib = values.get(have)
            put(miss, [g for g in rt if isinstance(lib, list) and g not in lib], ["gpu.runtime_gfx", have])


def _miopen_missing(values: dict, put: Put) -> None:
    rt = values.get("gpu.runtime_gfx")
    if isinstance(rt, list) and ("miopen.kdb_files" in values or "miopen.db_dir" in values):
        kdb = values.get("miopen.kdb_files")
        put("miopen.missing_kdb_gfx",
            [g for g in rt if isinstance(kdb, list)
             and not any(re.match(re.escape(g) + r"(?:[_0-9a-f][0-9a-f]*)?\.kdb$", n) for n in kdb)],
            ["gpu.runtime_gfx", "miopen.kdb_files"])


def _amdhip_prefixes(values: dict, put: Put, resolve: Callable[[str], str]) -> None:
    if "libs.amdhip64" in values and isinstance(values["libs.amdhip64"], list):
        prefixes = []
        for p in values["libs.amdhip64"]:
            pre = resolve(p)
            if pre not in prefixes:
                prefixes.append(pre)
        put("libs.amdhip64_prefixes", prefixes, ["libs.amdhip64"])


def _machine_kind(values: dict, put: Put) -> None:
    if "machine.kind" not in values and isinstance(values.get("gpu.amd_count"), int) and "nvidia.present" in values:
        amd = values["gpu.amd_count"] > 0
        nv = bool(values["nvidia.present"]) or (values.get("gpu.pci_nvidia_count") or 0) > 0
        put("machine.kind", "amd+nvidia" if amd and nv else "amd" if amd else "nvidia" if nv else "cpu",
            ["gpu.amd_count", "nvidia.present"])


def install_prefix(lib_dir: str) -> str:
    """A library folder without its trailing lib, lib64 and <triplet>-linux-gnu folders."""
    d = lib_dir
    while os.path.basename(d) in ("lib", "lib64") or re.fullmatch(r"[a-z0-9_]+-linux-gnu[a-z]*", os.path.basename(d)):
        d = os.path.dirname(d)
    return d


def lexical_prefix(path: str) -> str:
    """The install prefix of a library path, read from its text alone (/opt/rocm-6.2.0/lib/libamdhip64.so.6 ->
    /opt/rocm-6.2.0)."""
    return install_prefix(os.path.dirname(os.path.normpath(path)))
