"""The Python probe: what PyTorch, Triton and the named distributions of a Python interpreter are, read by running
pyprobe.py in it (metadata first, then `import torch` for device facts, so a crashing import costs only those)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from errbook.machine import pyprobe
from errbook.machine.facts.probe import Sink
from errbook.machine.facts.vocab import VOCAB


def _run_pyprobe(python: str, timeout: float, do_import: bool) -> tuple[dict, bool, list[str]]:
    """(the probe's output lines by stage, whether it timed out, the command): pyprobe.py run as a script in the
    Python to probe, isolated (-I: no user site, no script folder on sys.path)."""
    cmd = [python, "-I", str(Path(pyprobe.__file__))] + ([] if do_import else ["--no-import"])
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        out, timed_out = r.stdout or "", False
    except subprocess.TimeoutExpired as e:
        raw = e.stdout or b""
        out, timed_out = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw, True
    stages = {}
    for line in out.splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and rec.get("stage") in ("static", "runtime"):
            stages[rec["stage"]] = rec
    return stages, timed_out, cmd


TORCH_FACTS = ("torch.version", "torch.build", "torch.hip", "torch.cuda", "torch.rocblas_gfx", "torch.gpu_available",
               "torch.device_count", "torch.gfx", "torch.arch_list")
TRITON_FACTS = ("triton.version", "triton.dist", "triton.amd_backend", "triton.nvidia_backend")


def _p_python(F: Sink, python: str, timeout: float, do_import: bool) -> None:
    stages, timed_out, cmd = _run_pyprobe(python, timeout, do_import)
    st = stages.get("static")
    if not st:
        raise RuntimeError(f"the Python probe printed nothing usable ({python})"
                           + (" before the timeout" if timed_out else ""))
    src = f"python probe in {st['python']['executable']} (metadata, torch/version.py, no import)"
    F.put("python.version", st["python"]["version"], src)
    F.put("python.executable", st["python"]["executable"], src)
    F.put("python.cuda_extensions", st.get("cuda_extensions") or [], src + "; ELF DT_NEEDED of compiled modules")
    for name, ver in (st.get("packages") or {}).items():
        fact = "pkg." + name.replace("-", "_")
        if fact in VOCAB:
            F.put(fact, ver, src + "; importlib.metadata")
    t = st.get("torch") or {}
    _put_torch_static(F, t, src)
    _put_triton(F, st.get("triton") or {}, src)
    rt = (stages.get("runtime") or {}).get("torch")
    if not t.get("installed") or not do_import:
        return
    if timed_out and rt is None:
        raise subprocess.TimeoutExpired(cmd, timeout)
    if not isinstance(rt, dict) or rt.get("import_error"):
        raise RuntimeError("import torch failed: " + str((rt or {}).get("import_error") or "no output"))
    _put_torch_runtime(F, rt, f"import torch in {st['python']['executable']}")


def _put_torch_static(F: Sink, t: dict, src: str) -> None:
    F.put("torch.installed", bool(t.get("installed")), src)
    if t.get("installed"):
        F.put("torch.version", t.get("version"), src)
        F.put("torch.build", t.get("build"), src + " (torch.version.hip / torch.version.cuda)")
        F.put("torch.hip", t.get("hip"), src)
        F.put("torch.cuda", t.get("cuda"), src)
        F.put("torch.rocblas_gfx", t.get("rocblas_gfx"), f"files {t.get('rocblas_dir')}")
    else:  # known absent: every PyTorch fact is null, so checks about PyTorch are false, not unknown
        for n in TORCH_FACTS:
            F.put(n, None, src + " (PyTorch is not installed)")


def _put_triton(F: Sink, tr: dict, src: str) -> None:
    F.put("triton.installed", bool(tr.get("installed")), src)
    if tr.get("installed"):
        F.put("triton.version", tr.get("version"), src)
        F.put("triton.dist", tr.get("dist"), src)
        F.put("triton.amd_backend", bool(tr.get("amd_backend")), src + " (triton/backends/amd)")
        F.put("triton.nvidia_backend", bool(tr.get("nvidia_backend")), src + " (triton/backends/nvidia)")
    else:
        for n in TRITON_FACTS:
            F.put(n, None, src + " (Triton is not installed)")


def _put_torch_runtime(F: Sink, rt: dict, isrc: str) -> None:
    F.put("torch.gpu_available", bool(rt.get("available")), isrc + " (torch.cuda.is_available())")
    F.put("torch.device_count", int(rt.get("count") or 0), isrc + " (torch.cuda.device_count())")
    if rt.get("arch_list") is not None:
        F.put("torch.arch_list", list(rt["arch_list"]), isrc + " (torch._C._cuda_getArchFlags())")
    devs = rt.get("devices") or []
    if rt.get("hip"):
        F.put("torch.gfx", sorted({(d.get("gcn_arch") or "").split(":")[0] for d in devs if d.get("gcn_arch")}),
              isrc + " (gcnArchName)")
        if devs and not F.has("gpu.names"):
            F.put("gpu.names", sorted({d["name"] for d in devs if d.get("name")}), isrc + " (device name)")
