"""Running real tools and capturing what they print: shell commands, hipcc (HIP-Clang), Triton's AMD backend."""
from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from errbook.machine.facts.readers import amd_env

__all__ = ["Captured", "amdgpu_metadata", "amd_env", "hipcc", "instructions", "sh", "triton_amdgcn"]


@dataclass
class Captured:
    cmd: list[str]
    rc: int
    output: str                         # stdout and stderr, interleaved as the tool wrote them
    files: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.rc == 0


def sh(cmd: list[str], timeout: float = 120, env: dict | None = None, cwd: str | None = None) -> Captured:
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                           timeout=timeout, env=env, cwd=cwd)
        return Captured(cmd, r.returncode, r.stdout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return Captured(cmd, 124, out + f"\n[errbook] timed out after {timeout}s")
    except FileNotFoundError as e:
        return Captured(cmd, 127, f"[errbook] {e}")


def hipcc(source: str, offload_arch: str = "gfx90a", args: tuple = (), mode: str = "compile",
          timeout: float = 180, filename: str = "kernel.hip", extra_files: dict | None = None,
          env: dict | None = None) -> Captured:
    """Compile HIP source with hipcc for an AMD target.

    mode: 'compile' (-c), 'link' (build an executable), 'asm' (device-only AMDGCN assembly, returned in
    files['asm']), 'preprocess' (-E). HIP_PLATFORM is forced to amd unless env overrides it.
    """
    with tempfile.TemporaryDirectory(prefix="errbook-hip-") as d:
        src = Path(d) / filename
        src.write_text(source, encoding="utf-8")
        for name, text in (extra_files or {}).items():
            (Path(d) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(d) / name).write_text(text, encoding="utf-8")
        cmd = ["hipcc"] + ([f"--offload-arch={offload_arch}"] if offload_arch else [])
        if mode == "compile":
            cmd += ["-c", filename, "-o", "out.o"]
        elif mode == "link":
            cmd += [filename, "-o", "a.out"]
        elif mode == "asm":
            cmd += ["--cuda-device-only", "-S", filename, "-o", "out.s"]
        elif mode == "preprocess":
            cmd += ["-E", filename, "-o", "out.i"]
        else:
            raise ValueError(f"unknown mode {mode}")
        cmd += list(args)
        run_env = amd_env()
        run_env.update(env or {})
        cap = sh(cmd, timeout=timeout, env=run_env, cwd=d)
        if mode == "asm" and (Path(d) / "out.s").is_file():
            cap.files["asm"] = (Path(d) / "out.s").read_text(errors="replace")
        return cap


def amdgpu_metadata(asm: str) -> dict:
    """Resource use from AMDGCN assembly: LDS bytes, VGPRs, SGPRs, spills, wavefront size (first kernel)."""
    def num(key: str) -> int | None:
        m = re.search(rf"\.{key}:\s+(\d+)", asm)
        return int(m.group(1)) if m else None
    return {"lds_bytes": num("group_segment_fixed_size"), "vgpr": num("vgpr_count"), "sgpr": num("sgpr_count"),
            "vgpr_spill": num("vgpr_spill_count"), "wavefront_size": num("wavefront_size"),
            "private_bytes": num("private_segment_fixed_size")}


def instructions(asm: str, prefix: str) -> list[str]:
    """Mnemonics in the assembly that start with prefix (e.g. 'v_mfma', 's_barrier')."""
    return re.findall(rf"^\s+({re.escape(prefix)}\w*)", asm, flags=re.M)


def triton_amdgcn(fn, signature: dict, constexprs: dict | None = None, arch: str = "gfx942",
                  warp_size: int = 64, **options) -> dict:
    """Compile a @triton.jit function for an AMD GPU without needing one; returns asm and metadata."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs or {})
    k = triton.compile(src, target=GPUTarget("hip", arch, warp_size), options=options or None)
    asm = k.asm.get("amdgcn", "")
    meta = amdgpu_metadata(asm)
    meta["shared"] = getattr(k.metadata, "shared", None)
    return {"asm": asm, "metadata": meta, "llir": k.asm.get("llir", ""), "triton": triton.__version__}

