"""What a Python environment holds for GPU work: PyTorch and Triton builds, a few named packages, and compiled
extensions that were built for CUDA. Read-only.

Runs two ways: imported (tiers.py asks in-process, for the runbook tiers) and as a script in the
interpreter being checked (`python pyprobe.py`, from facts.py with a timeout): it then prints one JSON line
with what can be read without importing anything (package metadata, torch/version.py, directory listings,
ELF headers), and a second line after importing torch. A slow or crashing import costs only the second line.
Standard library only, and syntax that old interpreters still read, so it can probe any project's Python.
"""
import json
import os
import re
import struct
import sys

# Distributions whose presence or version an entry's trigger names (pip names).
NAMED_PACKAGES = ("vllm", "flash-attn", "hip", "hip-python", "xformers", "torchvision", "torchaudio", "triton",
                  "pytorch-triton-rocm", "onnxruntime-rocm", "tensorflow-rocm", "bitsandbytes", "jax", "jaxlib",
                  "jax-rocm7-plugin", "jax-rocm60-plugin", "amdsmi", "onnxruntime", "onnxruntime-gpu",
                  "onnxruntime-migraphx")
# Importable names whose compiled modules may carry a CUDA build (RMN-0006): looked at without importing them.
EXTENSION_MODULES = ("flash_attn_2_cuda", "flash_attn", "vllm", "xformers", "torchvision", "torchaudio")
_CUDA_NEEDED = re.compile(r"^(libcudart\.so|libtorch_cuda\.so|libc10_cuda\.so)")
_GFX = re.compile(r"gfx[0-9a-f]{2,4}")


def _find_dir(name):
    """The package directory (or extension module file) of an importable name, without importing it."""
    try:
        import importlib.util
        spec = importlib.util.find_spec(name)
    except Exception:
        return None
    if spec is None:
        return None
    locs = list(spec.submodule_search_locations or [])
    if locs:
        return locs[0]
    return spec.origin if spec.origin and os.path.isfile(spec.origin) else None


def _dist_version(name):
    try:
        from importlib import metadata
    except ImportError:
        return None
    for n in (name, name.replace("-", "_")):   # older importlib.metadata does not normalise '-' and '_'
        try:
            return metadata.version(n)
        except Exception:
            continue
    return None


def _literal(text, key):
    """The value assigned to `key` at module level (`key = '...'` or `key: Optional[str] = None`)."""
    import ast
    m = re.search(r"^%s\s*(?::[^=\n]*)?=\s*(.+)$" % re.escape(key), text, re.M)
    if not m:
        return None
    try:
        return ast.literal_eval(m.group(1).strip())
    except Exception:
        return None


def library_gfx(path):
    """gfx targets that have a rocBLAS Tensile library in `path` (TensileLibrary_lazy_<gfx>.dat,
    TensileLibrary_<gfx>.dat or a <gfx>/ subdirectory, the lookup order of rocBLAS's tensile_host.cpp)."""
    if not os.path.isdir(path):
        return None
    out = set()
    for name in os.listdir(path):
        m = re.match(r"^TensileLibrary(?:_lazy)?_(gfx[0-9a-f]+)[^/]*\.dat$", name)
        if m:
            out.add(m.group(1))
        elif re.match(r"^gfx[0-9a-f]+$", name) and os.path.isdir(os.path.join(path, name)):
            out.add(name)
    return sorted(out)


def torch_static():
    d = _find_dir("torch")
    if not d or not os.path.isdir(d):
        return {"installed": False}
    out = {"installed": True, "dir": d}
    try:
        with open(os.path.join(d, "version.py"), encoding="utf-8") as f:
            text = f.read(65536)
    except OSError:
        text = ""
    out["version"] = _literal(text, "__version__") or _dist_version("torch")
    out["hip"] = _literal(text, "hip")
    out["cuda"] = _literal(text, "cuda")
    if out["hip"]:
        out["build"] = "rocm"
    elif out["cuda"]:
        out["build"] = "cuda"
    elif out["version"]:
        out["build"] = "cpu"
    out["rocblas_dir"] = os.path.join(d, "lib", "rocblas", "library")
    out["rocblas_gfx"] = library_gfx(out["rocblas_dir"])
    return out


def triton_info(do_import=False):
    d = _find_dir("triton")
    if not d or not os.path.isdir(d):
        return {"installed": False}
    out = {"installed": True, "dir": d}
    for dist in ("triton", "pytorch-triton-rocm", "pytorch-triton", "triton-rocm"):
        v = _dist_version(dist)
        if v:
            out["version"], out["dist"] = v, dist
            break
    backends = os.path.join(d, "backends")
    out["amd_backend"] = os.path.isdir(os.path.join(backends, "amd"))
    out["nvidia_backend"] = os.path.isdir(os.path.join(backends, "nvidia"))
    if do_import:
        try:
            import triton
            from triton.backends import backends as loaded
            out["version"] = triton.__version__
            out["amd_backend"] = "amd" in loaded
        except Exception as e:  # a broken install is reported, not fatal; nothing of it is usable, so it
            out["error"] = str(e)[:200]     # names no version and no backend (the files alone say neither works)
            out.pop("version", None), out.pop("dist", None)
            out["amd_backend"] = out["nvidia_backend"] = False
    return out


def elf_needed(path):
    """DT_NEEDED entries of an ELF shared object (None when it is not one or cannot be read)."""
    try:
        with open(path, "rb") as f:
            ident = f.read(16)
            if len(ident) < 16 or ident[:4] != b"\x7fELF":
                return None
            is64, end = ident[4] == 2, "<" if ident[5] == 1 else ">"
            f.seek(16)
            if is64:
                h = struct.unpack(end + "HHIQQQIHHHHHH", f.read(48))
                shoff, shentsize, shnum = h[5], h[10], h[11]
                shfmt, shlen, dynfmt, dynlen = "IIQQQQIIQQ", 64, "qQ", 16
            else:
                h = struct.unpack(end + "HHIIIIIHHHHHH", f.read(36))
                shoff, shentsize, shnum = h[5], h[10], h[11]
                shfmt, shlen, dynfmt, dynlen = "IIIIIIIIII", 40, "iI", 8
            if not shoff or shentsize < shlen or not 0 < shnum < 10000:
                return None
            f.seek(shoff)
            raw = f.read(shentsize * shnum)
            secs = [struct.unpack(end + shfmt, raw[i * shentsize:i * shentsize + shlen]) for i in range(shnum)]
            for s in secs:
                if s[1] != 6:  # SHT_DYNAMIC
                    continue
                off, size, link = s[4], s[5], s[6]
                if link >= shnum or size > (1 << 24):
                    return None
                stoff, stsize = secs[link][4], secs[link][5]
                if stsize > (1 << 26):
                    return None
                f.seek(stoff)
                strtab = f.read(stsize)
                f.seek(off)
                dyn = f.read(size)
                needed = []
                for i in range(0, len(dyn) - dynlen + 1, dynlen):
                    tag, val = struct.unpack(end + dynfmt, dyn[i:i + dynlen])
                    if tag == 0:
                        break
                    if tag == 1 and val < len(strtab):
                        needed.append(strtab[val:strtab.index(b"\0", val)].decode("utf-8", "replace"))
                return needed
            return []
    except (OSError, struct.error, ValueError, IndexError):
        return None


def cuda_extensions():
    """Compiled modules of the named packages whose ELF header needs the CUDA runtime or PyTorch's CUDA
    libraries (what a CUDA build of an extension records; a ROCm build needs libamdhip64 instead)."""
    found = []
    for mod in EXTENSION_MODULES:
        loc = _find_dir(mod)
        if not loc:
            continue
        try:
            files = [loc] if os.path.isfile(loc) else sorted(
                os.path.join(loc, n) for n in os.listdir(loc) if n.endswith(".so"))
        except OSError:
            continue
        for path in files[:64]:
            needed = elf_needed(path) or []
            hits = [n for n in needed if _CUDA_NEEDED.match(n)]
            if hits:
                found.append("%s (needs %s)" % (os.path.basename(path), ", ".join(sorted(hits))))
    return found


def static_info():
    pkgs = {}
    for name in NAMED_PACKAGES:
        pkgs[name] = _dist_version(name)
    return {"stage": "static",
            "python": {"version": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable},
            "torch": torch_static(), "triton": triton_info(), "packages": pkgs,
            "cuda_extensions": cuda_extensions()}


def torch_runtime():
    """Device facts that need `import torch` (and, on a GPU machine, the GPU runtime's start-up)."""
    import torch
    out = {"version": torch.__version__, "hip": getattr(torch.version, "hip", None),
           "cuda": getattr(torch.version, "cuda", None), "available": False, "count": 0, "devices": []}
    # The compiled-in target list; torch.cuda.get_arch_list() returns [] whenever no GPU is visible.
    flags = getattr(torch._C, "_cuda_getArchFlags", None)
    try:
        arch = flags() if flags else None
        out["arch_list"] = arch.split() if arch else []
    except Exception:
        out["arch_list"] = None
    try:
        out["available"] = bool(torch.cuda.is_available())
        if out["available"]:
            out["count"] = torch.cuda.device_count()
            for i in range(out["count"]):
                p = torch.cuda.get_device_properties(i)
                out["devices"].append({"name": p.name, "capability": "%d.%d" % (p.major, p.minor),
                                       "gcn_arch": getattr(p, "gcnArchName", None),
                                       "warp_size": getattr(p, "warp_size", None)})
    except Exception as e:
        out["error"] = str(e)[:200]
    return out


def main(argv):
    print(json.dumps(static_info()), flush=True)
    if "--no-import" in argv:
        return 0
    try:
        info = torch_runtime() if _find_dir("torch") else None
    except Exception as e:  # an import that fails is a fact too
        info = {"import_error": ("%s: %s" % (type(e).__name__, e))[:300]}
    print(json.dumps({"stage": "runtime", "torch": info}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
