"""Machine facts for `errbook doctor`: one collector, read-only, quick, never root, never all-or-nothing.

Every fact has a dotted name from VOCAB (the vocabulary entries' checks may use), a value of the declared type
(None: known to be absent — a variable unset, no such device), and the source it came from (a file read, a
command run, an environment variable, a Python probe, or derived from other facts). A fact that could not be
collected is simply missing: a check that needs it is "could not check", never a finding.

Probes that run commands (rocminfo, nvidia-smi, hipcc, ldconfig, the Python probe) run in parallel with short
timeouts; a failing probe is recorded in "probes" and costs only its own facts. The environment is read only
for the variables named in ENV_VARS, so a facts file carries no secrets. platform.py (runbook tiers) reuses
the probes here; this module is the one place that knows how to read the machine.
"""
from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import glob
import gzip
import json
import os
import platform as _pf
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import __version__, safeio, versions

FORMAT, FORMAT_VERSION = "errbook-facts", 1
TYPES = ("bool", "int", "str", "version", "list")
DEFAULT_TIMEOUT = 4.0            # seconds for the slowest probe (the Python probe imports torch)
# The limits of a facts file. parse() refuses a file beyond them, collect() never writes one (it cuts a list or a
# string to fit and says so in the fact's source), and the paste page's engine applies the same ones: bundle.py
# ships reader_spec() and engine.js's readFacts reads it.
MAX_FILE_BYTES = 4 << 20         # a facts file larger than this is refused
MAX_STR, MAX_LIST = 8192, 512    # longest string / list a facts file may hold
MAX_INT = 2 ** 53                # an int fact is below this in magnitude (exact in JavaScript too)
MAX_SECONDS = 10 ** 6            # "seconds" (how long the collection took) is a number from 0 to this
MAX_DIGITS = versions.MAX_DIGITS  # a version fact whose leading number has a longer part is refused
_LEADING_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)*")


@dataclass(frozen=True)
class FactDef:
    name: str
    type: str
    about: str


# The variables a check may read: named in entries' triggers or their fixes. Nothing else of the environment
# is read into facts (no tokens, no passwords, no user data).
ENV_VARS = (
    "HSA_OVERRIDE_GFX_VERSION", "HSA_ENABLE_UNIFIED_MEMORY", "HSA_FORCE_FINE_GRAIN_PCIE", "HSA_XNACK",
    "HSA_ENABLE_SDMA", "HSA_ENABLE_DXG_DETECTION",
    "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
    "HIP_PLATFORM", "HIP_PATH", "HIP_CLANG_PATH", "ROCM_PATH", "ROCM_HOME", "CUDA_PATH", "CUDA_HOME",
    "LD_LIBRARY_PATH", "CMAKE_PREFIX_PATH", "CXX", "TORCH_EXTENSIONS_DIR",
    "PYTORCH_ROCM_ARCH", "GPU_ARCHS", "FLASH_ATTENTION_TRITON_AMD_ENABLE", "MAX_JOBS", "VLLM_TARGET_DEVICE",
    "AMD_LOG_LEVEL", "AMD_SERIALIZE_KERNEL",
    "NCCL_TIMEOUT", "NCCL_P2P_DISABLE", "NCCL_DEBUG", "NCCL_SOCKET_IFNAME",
    "TORCH_NCCL_BLOCKING_WAIT", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "TORCH_BLAS_PREFER_HIPBLASLT", "ROCBLAS_INTERNAL_FP16_ALT_IMPL", "MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL",
    "ROCBLAS_TENSILE_LIBPATH", "MIOPEN_USER_DB_PATH", "MIOPEN_FIND_MODE",
    "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
    "PYTORCH_TUNABLEOP_ENABLED", "PYTORCH_TUNABLEOP_FILENAME", "PYTORCH_TUNABLEOP_TUNING",
    "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL",
    "HIPCXX", "NCCL_MIN_NCHANNELS", "MIOPEN_CUSTOM_CACHE_DIR",
)
# pip distribution names the Python probe reports (pyprobe.NAMED_PACKAGES), as fact names pkg.<name>.
PACKAGES = ("vllm", "flash-attn", "hip", "hip-python", "xformers", "torchvision", "torchaudio", "triton",
            "pytorch-triton-rocm", "onnxruntime-rocm", "tensorflow-rocm", "bitsandbytes", "jax", "jaxlib",
            "jax-rocm7-plugin", "jax-rocm60-plugin", "amdsmi", "onnxruntime", "onnxruntime-gpu", "onnxruntime-migraphx")

_VOCAB_ROWS = [
    # name, type, what it means (and where it comes from)
    ("machine.kind", "str", "amd, nvidia, amd+nvidia or cpu: which GPUs this machine has (derived from gpu.amd_count and nvidia.present)"),
    ("os.kernel", "version", "running kernel release (uname -r)"),
    ("os.machine", "str", "CPU architecture (x86_64, aarch64)"),
    ("os.distro", "str", "distribution id from /etc/os-release (ubuntu, debian, rhel, ...)"),
    ("os.distro_version", "str", "distribution version from /etc/os-release"),
    ("os.glibc", "version", "glibc version of this process (confstr CS_GNU_LIBC_VERSION)"),
    ("os.wsl", "bool", "running under Windows Subsystem for Linux (/proc/version names Microsoft/WSL)"),
    ("container.detected", "bool", "running inside a container (/.dockerenv, /run/.containerenv, PID 1's cgroup, Kubernetes/Apptainer markers)"),
    ("container.kind", "str", "docker, podman, kubernetes, lxc, apptainer or container (unknown kind); null outside a container"),
    ("cpu.hypervisor", "bool", "the CPU flags in /proc/cpuinfo include 'hypervisor' (a virtual machine)"),
    ("kernel.cmdline", "str", "kernel command line (/proc/cmdline)"),
    ("kernel.numa_balancing", "int", "automatic NUMA balancing (/proc/sys/kernel/numa_balancing; 0 = off)"),
    ("kernel.iommu_default_passthrough", "bool", "the running kernel was built with CONFIG_IOMMU_DEFAULT_PASSTHROUGH=y (/boot/config-$(uname -r) or /proc/config.gz; missing when neither is readable)"),
    ("kernel.amdgpu_loaded", "bool", "the amdgpu kernel module is loaded (/sys/module/amdgpu)"),
    ("kernel.nvidia_loaded", "bool", "the NVIDIA kernel module is loaded (/sys/module/nvidia)"),
    ("numa.nodes", "int", "NUMA nodes (/sys/devices/system/node/node*)"),
    ("iommu.enabled", "bool", "an IOMMU is active (/sys/class/iommu has entries)"),
    ("iommu.gpu_domain_types", "list", "default IOMMU domain type of each AMD GPU's group (/sys/bus/pci/devices/*/iommu_group/type; per the kernel's sysfs-kernel-iommu_groups ABI, DMA or DMA-FQ = translated, identity = pass-through)"),
    ("dev.kfd.present", "bool", "/dev/kfd exists (the ROCm compute interface)"),
    ("dev.kfd.rw", "bool", "this process may open /dev/kfd read-write (access(2)); null when /dev/kfd is absent"),
    ("dev.kfd.group", "str", "group that owns /dev/kfd"),
    ("dev.kfd.mode", "str", "permission bits of /dev/kfd, e.g. 0660"),
    ("dev.dri.present", "bool", "/dev/dri exists"),
    ("dev.dri.render_nodes", "int", "number of /dev/dri/renderD* nodes"),
    ("dev.dri.render_rw", "bool", "this process may open every /dev/dri/renderD* read-write; null when there is none"),
    ("dev.dri.group", "str", "group that owns the first /dev/dri/renderD* node"),
    ("dev.infiniband.present", "bool", "/dev/infiniband/uverbs* exists (the RDMA verbs device nodes a process needs to use an InfiniBand/RoCE NIC)"),
    ("rdma.devices", "int", "RDMA (InfiniBand/RoCE) devices the kernel lists in /sys/class/infiniband"),
    ("dev.dxg.present", "bool", "/dev/dxg exists (the WSL2 GPU paravirtualisation device that replaces /dev/kfd there)"),
    ("user.uid", "int", "user id of this process"),
    ("user.is_root", "bool", "this process runs as root (uid 0)"),
    ("user.groups", "list", "names of the groups of this process (the login session's groups, not /etc/group)"),
    ("gpu.kfd_present", "bool", "the KFD topology exists (/sys/class/kfd/kfd/topology/nodes)"),
    ("gpu.kfd_count", "int", "GPU nodes in the KFD topology (nodes with a non-zero gfx_target_version)"),
    ("gpu.gfx", "list", "gfx targets of the AMD GPUs as the hardware reports them (KFD gfx_target_version; else amd-smi, or rocminfo/PyTorch when no override is set)"),
    ("gpu.names", "list", "marketing names of the AMD GPUs where a tool reports them (rocminfo, amd-smi, PyTorch)"),
    ("gpu.pci_amd_count", "int", "AMD (0x1002) display or processing-accelerator devices on the PCI bus (/sys/bus/pci/devices)"),
    ("gpu.pci_nvidia_count", "int", "NVIDIA (0x10de) display or processing-accelerator devices on the PCI bus"),
    ("gpu.pci_amd_unbound", "int", "AMD GPU devices on the PCI bus with no kernel driver bound (no /sys/bus/pci/devices/*/driver link): no driver claimed them or the driver's probe failed"),
    ("gpu.amd_count", "int", "AMD GPUs: the larger of the KFD GPU nodes and the AMD PCI GPU devices (derived)"),
    ("gpu.xgmi_links", "int", "XGMI (Infinity Fabric) links between GPU nodes in the KFD topology (io_links of type 11)"),
    ("gpu.rocminfo_gfx", "list", "gfx targets rocminfo lists for its GPU agents (after HSA_OVERRIDE_GFX_VERSION)"),
    ("gpu.override_gfx", "str", "the target HSA_OVERRIDE_GFX_VERSION names when it is major.minor.stepping (9.4.2 -> gfx942); null otherwise (derived)"),
    ("gpu.runtime_gfx", "list", "gfx targets the ROCm runtime will report: the override's target when a valid override is set, else gpu.gfx (derived)"),
    ("gpu.not_in_pytorch_rocm_arch", "list", "this machine's runtime targets that PYTORCH_ROCM_ARCH does not list (empty when it is unset) (derived)"),
    ("nvidia.present", "bool", "an NVIDIA GPU driver or device is present (/proc/driver/nvidia, /dev/nvidia0, the PCI bus)"),
    ("nvidia.driver", "version", "NVIDIA driver version (/proc/driver/nvidia/version or nvidia-smi)"),
    ("nvidia.gpus", "list", "NVIDIA GPU names (nvidia-smi)"),
    ("rocm.installs", "list", "ROCm trees under /opt/rocm* and $ROCM_PATH/$HIP_PATH (real paths, one per install)"),
    ("rocm.versions", "list", "version of each ROCm tree (<prefix>/.info/version, else the directory name)"),
    ("rocm.default_path", "str", "real path of /opt/rocm; null when /opt/rocm does not exist"),
    ("rocm.default_version", "version", "version of the ROCm tree /opt/rocm (or $ROCM_PATH) points to"),
    ("libs.amdhip64", "list", "libamdhip64.so* files the loader can find: LD_LIBRARY_PATH directories first, then the ld.so cache (ldconfig -p)"),
    ("libs.amdhip64_prefixes", "list", "distinct install prefixes of those libamdhip64 files (derived)"),
    ("libs.amdhip64_ld_library_path", "list", "LD_LIBRARY_PATH directories that hold a libamdhip64"),
    ("libs.ibverbs", "list", "libibverbs.so* files the loader can find: LD_LIBRARY_PATH directories first, then the ld.so cache (ldconfig -p)"),
    ("rocblas.library_dir", "str", "rocBLAS library directory of the system ROCm ($ROCBLAS_TENSILE_LIBPATH, else <rocm>/lib/rocblas/library); null when absent"),
    ("rocblas.gfx", "list", "gfx targets with a Tensile library in rocblas.library_dir"),
    ("rocblas.missing_gfx", "list", "runtime targets of this machine with no Tensile library in rocblas.library_dir (derived)"),
    ("miopen.db_dir", "str", "MIOpen system database directory (<rocm>/share/miopen/db); null when absent"),
    ("miopen.kdb_files", "list", "precompiled kernel databases (*.kdb, named after gfx target and CU count) in miopen.db_dir"),
    ("miopen.user_dirs_unwritable", "list", "MIOpen's user database and kernel cache directories ($MIOPEN_USER_DB_PATH else ~/.config/miopen, $MIOPEN_CUSTOM_CACHE_DIR else ~/.cache/miopen) that this process can neither write nor create (access(2) on the directory or its nearest existing parent)"),
    ("miopen.missing_kdb_gfx", "list", "runtime targets of this machine with no .kdb in miopen.db_dir (derived)"),
    ("tools.hipcc", "str", "path of hipcc on PATH; null when absent"),
    ("gcc.installs", "list", "GCC versions under /usr/lib/gcc/<arch>-linux-gnu/ (Debian/Ubuntu layout) that have crtbegin.o: the installations clang's Linux toolchain chooses the newest of"),
    ("gcc.newest_without_cxx_headers", "version", "the newest of gcc.installs when its libstdc++ headers (/usr/include/c++/<version>) are missing; null when they exist or there is no GCC there"),
    ("tools.hip_version", "version", "HIP version hipcc reports (hipcc --version with HIP_PLATFORM=amd)"),
    ("tools.hip_clang", "str", "clang++ that hipcc's platform detection would find (HIP_CLANG_PATH, else <ROCM_PATH>/llvm/bin or <ROCM_PATH>/bin, else clang++ on PATH); null when none exists"),
    ("tools.nvcc", "str", "nvcc on PATH or $CUDA_PATH/bin/nvcc (default /usr/local/cuda); null when absent"),
    ("tools.cmake", "str", "path of cmake; null when absent"),
    ("tools.ollama", "str", "path of the ollama server binary; null when absent"),
    ("tools.rocminfo", "str", "path of rocminfo; null when absent"),
    ("tools.amd_smi", "str", "path of amd-smi; null when absent"),
    ("python.version", "version", "version of the Python that was probed"),
    ("python.executable", "str", "the Python that was probed (doctor's own, or --python)"),
    ("python.cuda_extensions", "list", "compiled modules of flash-attn, vLLM, xformers, torchvision, torchaudio whose ELF header needs libcudart / libtorch_cuda / libc10_cuda"),
    ("torch.installed", "bool", "PyTorch is installed in the probed Python"),
    ("torch.version", "version", "PyTorch version (torch/version.py, read without importing)"),
    ("torch.build", "str", "rocm, cuda or cpu: the PyTorch build (torch.version.hip / torch.version.cuda)"),
    ("torch.hip", "version", "torch.version.hip (ROCm builds)"),
    ("torch.cuda", "version", "torch.version.cuda (CUDA builds)"),
    ("torch.gpu_available", "bool", "torch.cuda.is_available() after importing torch"),
    ("torch.device_count", "int", "torch.cuda.device_count()"),
    ("torch.gfx", "list", "gfx targets of the devices PyTorch sees (gcnArchName, ROCm builds)"),
    ("torch.arch_list", "list", "gfx (or sm_) targets the installed PyTorch was compiled for (torch._C._cuda_getArchFlags())"),
    ("torch.missing_gfx", "list", "runtime targets of this machine that a ROCm PyTorch was not compiled for (derived)"),
    ("torch.rocblas_gfx", "list", "gfx targets with a Tensile library in the rocBLAS bundled with PyTorch (torch/lib/rocblas/library)"),
    ("torch.rocblas_missing_gfx", "list", "runtime targets with no Tensile library in PyTorch's bundled rocBLAS (derived)"),
    ("triton.installed", "bool", "Triton is installed in the probed Python"),
    ("triton.version", "version", "Triton version"),
    ("triton.dist", "str", "the Triton distribution (triton, pytorch-triton-rocm, ...)"),
    ("triton.amd_backend", "bool", "Triton has its AMD backend (triton/backends/amd)"),
    ("triton.nvidia_backend", "bool", "Triton has its NVIDIA backend (triton/backends/nvidia)"),
]
VOCAB: dict[str, FactDef] = {n: FactDef(n, t, a) for n, t, a in _VOCAB_ROWS}
for _v in ENV_VARS:
    VOCAB[f"env.{_v}"] = FactDef(f"env.{_v}", "str", f"environment variable {_v}; null when unset")
for _p in PACKAGES:
    _n = "pkg." + _p.replace("-", "_")
    VOCAB[_n] = FactDef(_n, "version", f"installed version of the Python distribution '{_p}'; null when not installed")


class Skip(Exception):
    """A probe that does not apply here (its tool is not installed): recorded as skipped, not failed."""


class FactsError(ValueError):
    """A facts file that cannot be used (not JSON, wrong shape, a value of the wrong type)."""


# --- small readers ----------------------------------------------------------------------------------------

def _read(path: str, limit: int = 1 << 20) -> str:
    """A machine file (/proc, /sys, <rocm>/.info/version) as text. Regular files only, opened without blocking:
    a FIFO in the place of <rocm>/.info/version would otherwise hang doctor and run (OSError instead)."""
    return safeio.read_regular(path, limit).decode("utf-8", "replace")


def run_cmd(cmd: list[str], timeout: float, env: dict | None = None) -> tuple[int, str]:
    """(exit status, stdout+stderr); raises OSError / subprocess.TimeoutExpired for the caller to record."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    return r.returncode, (r.stdout or "") + (r.stderr or "")


def gfx_name(major: int, minor: int, stepping: int) -> str:
    """Target name from ISA version numbers: major in decimal, minor and stepping in hex (9.0.10 -> gfx90a)."""
    return f"gfx{major}{minor:x}{stepping:x}"


def gfx_from_target_version(v: int) -> str | None:
    """KFD's gfx_target_version (major*10000 + minor*100 + stepping, e.g. 90402) as a target name."""
    if v <= 0:
        return None
    return gfx_name(v // 10000, (v // 100) % 100, v % 100)


def override_target(value: str | None) -> str | None:
    """The target an HSA_OVERRIDE_GFX_VERSION value names, or None when libhsakmt would reject it (it accepts
    exactly three dot-separated decimal numbers, major <= 63, minor and stepping <= 255; see RMN-0023)."""
    m = re.fullmatch(r"([0-9]+)\.([0-9]+)\.([0-9]+)", value or "")
    if not m:
        return None
    a, b, c = (int(x) for x in m.groups())
    return gfx_name(a, b, c) if a <= 63 and b <= 255 and c <= 255 else None


def _props(path: str) -> dict[str, int]:
    out = {}
    for line in _read(path, 65536).splitlines():
        parts = line.split()
        if len(parts) == 2 and re.fullmatch(r"-?[0-9]+", parts[1]):
            out[parts[0]] = int(parts[1])
    return out


def rocm_version_of(prefix: str) -> str | None:
    """Version of a ROCm tree: <prefix>/.info/version ('6.2.0-66'), else the directory name (rocm-6.2.0)."""
    try:
        v = _read(os.path.join(prefix, ".info", "version"), 256).strip().splitlines()
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


# --- the collector ----------------------------------------------------------------------------------------

class _Facts:
    def __init__(self):
        self.facts: dict[str, dict] = {}
        self.probes: list[dict] = []
        self._lock = threading.Lock()

    def put(self, name: str, value, source: str) -> None:
        assert name in VOCAB, name
        with self._lock:
            self.facts[name] = {"value": value, "source": source}

    def has(self, name: str) -> bool:
        return name in self.facts

    def get(self, name: str, default=None):
        f = self.facts.get(name)
        return default if f is None else f["value"]

    def probe(self, name: str, fn) -> None:
        t0 = time.perf_counter()
        rec: dict = {"probe": name, "ok": True}
        try:
            fn(self)
        except Skip as e:
            rec.update(skipped=str(e))
        except subprocess.TimeoutExpired as e:
            rec.update(ok=False, error=f"timed out after {e.timeout:g} s")
        except Exception as e:  # one failing probe never stops the others
            rec.update(ok=False, error=f"{type(e).__name__}: {e}"[:300])
        rec["seconds"] = round(time.perf_counter() - t0, 3)
        with self._lock:
            self.probes.append(rec)


def _p_os(F: _Facts) -> None:
    F.put("os.kernel", _pf.release() or None, "uname -r (platform.release)")
    F.put("os.machine", _pf.machine() or None, "uname -m (platform.machine)")
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION")  # 'glibc 2.36'
        F.put("os.glibc", libc.split()[-1] if libc and libc.startswith("glibc") else None,
              "confstr(CS_GNU_LIBC_VERSION)")
    except (ValueError, OSError, AttributeError):
        pass
    try:
        rel = dict(re.findall(r'^([A-Z_]+)="?([^"\n]*)"?$', _read("/etc/os-release", 8192), re.M))
        F.put("os.distro", rel.get("ID") or None, "file /etc/os-release")
        F.put("os.distro_version", rel.get("VERSION_ID") or None, "file /etc/os-release")
    except OSError:
        pass
    try:
        ver = _read("/proc/version", 4096)
        F.put("os.wsl", bool(re.search(r"microsoft|WSL", ver, re.I)), "file /proc/version")
    except OSError:
        pass
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    F.put("cpu.hypervisor", " hypervisor" in line, "file /proc/cpuinfo (flags)")
                    break
    except OSError:
        pass


def _p_container(F: _Facts) -> None:
    kind, why = None, []
    if os.path.exists("/.dockerenv"):
        kind, why = "docker", why + ["/.dockerenv"]
    if os.path.exists("/run/.containerenv"):
        kind, why = "podman", why + ["/run/.containerenv"]
    if os.environ.get("APPTAINER_CONTAINER") or os.environ.get("SINGULARITY_CONTAINER"):
        kind, why = "apptainer", why + ["$APPTAINER_CONTAINER/$SINGULARITY_CONTAINER"]
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        kind, why = "kubernetes", why + ["$KUBERNETES_SERVICE_HOST"]
    marker = os.environ.get("container")
    if marker and not kind:
        kind, why = ("lxc" if "lxc" in marker else marker if re.fullmatch(r"[a-z0-9-]{1,20}", marker) else "container"), why + ["$container"]
    try:
        cg = _read("/proc/1/cgroup", 65536)
        for pat, k in (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"), ("/lxc", "lxc"),
                       ("containerd", "container")):
            if pat in cg:
                kind = kind or k
                why.append(f"/proc/1/cgroup mentions {pat}")
                break
    except OSError:
        pass
    F.put("container.detected", kind is not None, "files " + (", ".join(why) if why else
                                                             "/.dockerenv, /run/.containerenv, /proc/1/cgroup (none found)"))
    F.put("container.kind", kind, F.facts["container.detected"]["source"])


def _kernel_config_passthrough() -> tuple[bool, str] | None:
    rel = _pf.release()
    for path in (f"/boot/config-{rel}", "/proc/config.gz"):
        try:
            if path.endswith(".gz"):
                with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                    text = f.read(4 << 20)
            else:
                text = _read(path, 4 << 20)
        except (OSError, EOFError):
            continue
        return bool(re.search(r"^CONFIG_IOMMU_DEFAULT_PASSTHROUGH=y$", text, re.M)), f"file {path}"
    return None


def _p_kernel(F: _Facts) -> None:
    try:
        F.put("kernel.cmdline", _read("/proc/cmdline", 8192).strip(), "file /proc/cmdline")
    except OSError:
        pass
    try:
        F.put("kernel.numa_balancing", int(_read("/proc/sys/kernel/numa_balancing", 64).strip()),
              "file /proc/sys/kernel/numa_balancing")
    except (OSError, ValueError):
        if not os.path.exists("/proc/sys/kernel/numa_balancing") and os.path.isdir("/proc/sys/kernel"):
            F.put("kernel.numa_balancing", None, "file /proc/sys/kernel/numa_balancing (absent: kernel without NUMA balancing)")
    if os.path.isdir("/sys/devices/system/node"):
        F.put("numa.nodes", len(glob.glob("/sys/devices/system/node/node[0-9]*")), "files /sys/devices/system/node/node*")
    if os.path.isdir("/sys/module"):
        F.put("kernel.amdgpu_loaded", os.path.isdir("/sys/module/amdgpu"), "file /sys/module/amdgpu")
        F.put("kernel.nvidia_loaded", os.path.isdir("/sys/module/nvidia"), "file /sys/module/nvidia")
    if os.path.isdir("/sys/class"):
        F.put("iommu.enabled", bool(glob.glob("/sys/class/iommu/*")), "files /sys/class/iommu/*")
    cfg = _kernel_config_passthrough()
    if cfg is not None:
        F.put("kernel.iommu_default_passthrough", cfg[0], cfg[1])


def _node_info(path: str) -> dict:
    st = os.stat(path)
    try:
        import grp
        group = grp.getgrgid(st.st_gid).gr_name
    except (KeyError, ImportError):
        group = str(st.st_gid)
    return {"group": group, "mode": f"{st.st_mode & 0o7777:04o}",
            "rw": os.access(path, os.R_OK | os.W_OK)}


def _p_devices(F: _Facts) -> None:
    kfd = os.path.exists("/dev/kfd")
    F.put("dev.kfd.present", kfd, "file /dev/kfd")
    info = _node_info("/dev/kfd") if kfd else {}
    F.put("dev.kfd.rw", info.get("rw"), "access(/dev/kfd, R_OK|W_OK)")
    F.put("dev.kfd.group", info.get("group"), "stat /dev/kfd")
    F.put("dev.kfd.mode", info.get("mode"), "stat /dev/kfd")
    F.put("dev.dri.present", os.path.isdir("/dev/dri"), "file /dev/dri")
    nodes = sorted(glob.glob("/dev/dri/renderD*"))
    F.put("dev.dri.render_nodes", len(nodes), "files /dev/dri/renderD*")
    F.put("dev.dri.render_rw", all(os.access(n, os.R_OK | os.W_OK) for n in nodes) if nodes else None,
          "access(/dev/dri/renderD*, R_OK|W_OK)")
    F.put("dev.dri.group", _node_info(nodes[0])["group"] if nodes else None, "stat /dev/dri/renderD*")
    F.put("dev.dxg.present", os.path.exists("/dev/dxg"), "file /dev/dxg")
    F.put("dev.infiniband.present", bool(glob.glob("/dev/infiniband/uverbs*")), "files /dev/infiniband/uverbs*")
    if os.path.isdir("/sys/class"):
        F.put("rdma.devices", len(glob.glob("/sys/class/infiniband/*")), "files /sys/class/infiniband/*")
    F.put("user.uid", os.getuid(), "getuid()")
    F.put("user.is_root", os.getuid() == 0, "getuid()")
    names = set()
    try:
        import grp
        for g in set(os.getgroups()) | {os.getgid()}:
            try:
                names.add(grp.getgrgid(g).gr_name)
            except KeyError:
                names.add(str(g))
    except ImportError:
        pass
    F.put("user.groups", sorted(names), "getgroups() + getgid(), names from the group database")


def _p_kfd(F: _Facts) -> None:
    base = "/sys/class/kfd/kfd/topology/nodes"
    if not os.path.isdir(base):
        F.put("gpu.kfd_present", False, f"file {base}")
        if os.path.isdir("/sys/class"):
            F.put("gpu.kfd_count", 0, f"file {base} (absent)")
        return
    F.put("gpu.kfd_present", True, f"file {base}")
    gfx, gpu_nodes, xgmi = [], set(), 0
    links, unreadable = [], 0
    for node in sorted(glob.glob(os.path.join(base, "*")), key=lambda p: (len(p), p)):
        try:
            props = _props(os.path.join(node, "properties"))
        except OSError:  # KFD refuses GPU nodes whose device the process (container) may not open: EPERM
            unreadable += 1
            continue
        g = gfx_from_target_version(props.get("gfx_target_version", 0))
        if g and props.get("simd_count", 0) > 0:
            gfx.append(g)
            gpu_nodes.add(os.path.basename(node))
        for link in glob.glob(os.path.join(node, "io_links", "*", "properties")):
            try:
                links.append(_props(link))
            except OSError:
                continue
    for lp in links:
        if lp.get("type") == 11 and str(lp.get("node_from")) in gpu_nodes and str(lp.get("node_to")) in gpu_nodes:
            xgmi += 1
    src = f"files {base}/*/properties (gfx_target_version, simd_count)"
    if unreadable:
        src += f"; {unreadable} node(s) unreadable"
    F.put("gpu.kfd_count", len(gfx), src)
    if gfx:
        F.put("gpu.gfx", sorted(set(gfx)), src)
    F.put("gpu.xgmi_links", xgmi, f"files {base}/*/io_links/*/properties (type 11 = XGMI)")


def _p_pci(F: _Facts) -> None:
    base = "/sys/bus/pci/devices"
    if not os.path.isdir(base):
        return
    amd = nv = unbound = 0
    types = []
    for dev in sorted(glob.glob(os.path.join(base, "*"))):
        try:
            vendor = _read(os.path.join(dev, "vendor"), 64).strip().lower()
            klass = _read(os.path.join(dev, "class"), 64).strip().lower()
        except OSError:
            continue
        if not klass.startswith(("0x03", "0x12")):   # display controller, processing accelerator
            continue
        if vendor == "0x1002":
            amd += 1
            if not os.path.lexists(os.path.join(dev, "driver")):
                unbound += 1
            try:
                types.append(_read(os.path.join(dev, "iommu_group", "type"), 64).strip())
            except OSError:
                pass
        elif vendor == "0x10de":
            nv += 1
    src = f"files {base}/*/vendor,class"
    F.put("gpu.pci_amd_count", amd, src)
    F.put("gpu.pci_nvidia_count", nv, src)
    F.put("gpu.pci_amd_unbound", unbound, f"files {base}/*/driver (AMD GPUs)")
    if amd and os.path.isdir("/sys/kernel/iommu_groups"):
        F.put("iommu.gpu_domain_types", sorted(set(types)), f"files {base}/*/iommu_group/type")


def _p_nvidia_files(F: _Facts) -> None:
    present = os.path.exists("/proc/driver/nvidia") or os.path.exists("/dev/nvidia0")
    F.put("nvidia.present", present, "files /proc/driver/nvidia, /dev/nvidia0")
    try:
        m = re.search(r"Kernel Module\s+([0-9][0-9.]*)", _read("/proc/driver/nvidia/version", 4096))
        if m:
            F.put("nvidia.driver", m.group(1), "file /proc/driver/nvidia/version")
    except OSError:
        pass


def _p_nvidia_smi(F: _Facts, timeout: float) -> None:
    if not shutil.which("nvidia-smi"):
        raise Skip("nvidia-smi is not installed")
    rows = nvidia_smi(timeout)
    if rows is None:
        raise RuntimeError("nvidia-smi failed")
    F.put("nvidia.gpus", [r[0] for r in rows], "command nvidia-smi --query-gpu=name,driver_version")
    if rows:
        F.put("nvidia.present", True, "command nvidia-smi")
        if not F.has("nvidia.driver"):
            F.put("nvidia.driver", rows[0][1], "command nvidia-smi")


def _p_rocm(F: _Facts) -> None:
    cands = sorted(glob.glob("/opt/rocm") + glob.glob("/opt/rocm-*"))
    for var in ("ROCM_PATH", "HIP_PATH"):
        v = os.environ.get(var)
        if v and os.path.isdir(v) and var == "ROCM_PATH":
            cands.append(v)
    seen, installs, versions = set(), [], []
    for c in cands:
        real = os.path.realpath(c)
        if real in seen or not os.path.isdir(real):
            continue
        if not (os.path.isdir(os.path.join(real, "lib")) or os.path.isdir(os.path.join(real, ".info"))):
            continue
        seen.add(real)
        installs.append(real)
        versions.append(rocm_version_of(real) or "unknown")
    F.put("rocm.installs", installs, "files /opt/rocm, /opt/rocm-*, $ROCM_PATH")
    F.put("rocm.versions", versions, "files <prefix>/.info/version")
    default = os.path.realpath("/opt/rocm") if os.path.exists("/opt/rocm") else None
    F.put("rocm.default_path", default, "file /opt/rocm")
    main = os.environ.get("ROCM_PATH") or default
    F.put("rocm.default_version", rocm_version_of(main) if main and os.path.isdir(main) else None,
          f"file {main}/.info/version" if main else "file /opt/rocm/.info/version")
    # Libraries of the system ROCm that triggers name.
    if main and os.path.isdir(main):
        lib = os.environ.get("ROCBLAS_TENSILE_LIBPATH") or os.path.join(main, "lib", "rocblas", "library")
        if os.path.isdir(lib):
            from . import pyprobe
            F.put("rocblas.library_dir", lib, "file " + lib)
            F.put("rocblas.gfx", pyprobe.library_gfx(lib), f"files {lib}/TensileLibrary*_<gfx>.dat, <gfx>/")
        else:
            F.put("rocblas.library_dir", None, "file " + lib)
        db = os.path.join(main, "share", "miopen", "db")
        if os.path.isdir(db):
            F.put("miopen.db_dir", db, "file " + db)
            F.put("miopen.kdb_files", sorted(n for n in os.listdir(db) if n.endswith(".kdb"))[:MAX_LIST],
                  f"files {db}/*.kdb")
        else:
            F.put("miopen.db_dir", None, "file " + db)
    else:
        F.put("rocblas.library_dir", None, "no ROCm tree at /opt/rocm or $ROCM_PATH")
        F.put("miopen.db_dir", None, "no ROCm tree at /opt/rocm or $ROCM_PATH")


def _p_tools(F: _Facts) -> None:
    for fact, exe in (("tools.hipcc", "hipcc"), ("tools.cmake", "cmake"), ("tools.ollama", "ollama"),
                      ("tools.rocminfo", "rocminfo"), ("tools.amd_smi", "amd-smi")):
        F.put(fact, shutil.which(exe), f"PATH lookup of {exe}")
    F.put("tools.nvcc", nvcc_path(), "PATH lookup of nvcc, file $CUDA_PATH/bin/nvcc")
    F.put("tools.hip_clang", hip_clang_path(),
          "files $HIP_CLANG_PATH/clang++, <ROCM_PATH>/llvm/bin/clang++, <ROCM_PATH>/bin/clang++, PATH lookup of clang++")


def _p_hipcc_version(F: _Facts, timeout: float) -> None:
    if not shutil.which("hipcc"):
        raise Skip("hipcc is not installed")
    info = hipcc_info(timeout)
    if info and info.get("hip_version"):
        F.put("tools.hip_version", info["hip_version"], "command hipcc --version (HIP_PLATFORM=amd)")


def _amdhip_prefix(path: str) -> str:
    d = os.path.dirname(os.path.realpath(path))
    while os.path.basename(d) in ("lib", "lib64") or re.fullmatch(r"[a-z0-9_]+-linux-gnu[a-z]*", os.path.basename(d)):
        d = os.path.dirname(d)
    return d


def _p_libs(F: _Facts, timeout: float) -> None:
    found, in_ldp, verbs = [], [], []
    for d in (os.environ.get("LD_LIBRARY_PATH") or "").split(":"):
        if not d:
            continue
        hits = sorted(glob.glob(os.path.join(d, "libamdhip64.so*")))
        if hits:
            in_ldp.append(d)
            found += hits
        verbs += sorted(glob.glob(os.path.join(d, "libibverbs.so*")))
    F.put("libs.amdhip64_ld_library_path", in_ldp, "files $LD_LIBRARY_PATH/libamdhip64.so*")
    exe = shutil.which("ldconfig") or next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)
    src = "files $LD_LIBRARY_PATH/{lib}.so*"
    if exe:
        _, out = run_cmd([exe, "-p"], timeout)
        found += re.findall(r"^\s*libamdhip64\.so\S*\s.*=>\s*(\S+)\s*$", out, re.M)
        verbs += re.findall(r"^\s*libibverbs\.so\S*\s.*=>\s*(\S+)\s*$", out, re.M)
        src += ", command ldconfig -p"
    elif not in_ldp:
        raise RuntimeError("no ldconfig to read the loader cache")
    F.put("libs.amdhip64", _uniq(found), src.format(lib="libamdhip64"))
    F.put("libs.ibverbs", _uniq(verbs), src.format(lib="libibverbs"))


def _uniq(items: list) -> list:
    out, seen = [], set()
    for p in items:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out[:MAX_LIST]


def _gcc_installs(machine: str, root: str = "/") -> tuple[list[str], str | None]:
    """GCC installations under /usr/lib/gcc/<machine>-linux-gnu/ with crtbegin.o (Debian/Ubuntu layout), oldest
    first, and the newest one if its libstdc++ headers (/usr/include/c++/<version>) are missing."""
    base = os.path.join(root, "usr", "lib", "gcc", f"{machine}-linux-gnu")
    vers = [n for n in (os.listdir(base) if os.path.isdir(base) else [])
            if versions.parse(n) is not None and os.path.isfile(os.path.join(base, n, "crtbegin.o"))]
    vers.sort(key=lambda n: versions.parse(n))
    if not vers:
        return [], None
    newest = vers[-1]
    has_headers = os.path.isdir(os.path.join(root, "usr", "include", "c++", newest))
    return vers, (None if has_headers else newest)


def _p_gcc(F: _Facts) -> None:
    machine = _pf.machine()
    if not machine:
        raise RuntimeError("unknown CPU architecture")
    vers, missing = _gcc_installs(machine)
    src = f"files /usr/lib/gcc/{machine}-linux-gnu/*/crtbegin.o"
    F.put("gcc.installs", vers, src)
    F.put("gcc.newest_without_cxx_headers", missing, src + ", /usr/include/c++/<newest>")


def miopen_user_dirs_unwritable(env: dict | None = None) -> list[str]:
    """MIOpen's user database and kernel cache directories that this process can neither write nor create."""
    env = os.environ if env is None else env
    bad = []
    for var, default in (("MIOPEN_USER_DB_PATH", "~/.config/miopen"), ("MIOPEN_CUSTOM_CACHE_DIR", "~/.cache/miopen")):
        path = os.path.expanduser(env.get(var) or default)
        if not os.path.isabs(path):
            continue            # no home directory to resolve ~ against: MIOpen's own choice is unknown here
        d = path
        while not os.path.lexists(d) and os.path.dirname(d) != d:
            d = os.path.dirname(d)
        if not (os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK)):
            bad.append(path)
    return bad


def _p_miopen_user(F: _Facts) -> None:
    F.put("miopen.user_dirs_unwritable", miopen_user_dirs_unwritable(),
          "access(W_OK) on $MIOPEN_USER_DB_PATH or ~/.config/miopen, $MIOPEN_CUSTOM_CACHE_DIR or ~/.cache/miopen "
          "(or their nearest existing parent)")


def _p_rocminfo(F: _Facts, timeout: float) -> None:
    exe = shutil.which("rocminfo")
    if not exe:
        raise Skip("rocminfo is not installed")
    if not os.path.exists("/dev/kfd"):
        raise Skip("no /dev/kfd for rocminfo to open")
    rc, out = run_cmd([exe], timeout)
    gfx, names = rocminfo_agents(out)
    if rc != 0 and not gfx:
        raise RuntimeError(f"rocminfo exited with {rc}: " + " ".join(out.strip().splitlines()[-1:])[:200])
    F.put("gpu.rocminfo_gfx", sorted(set(gfx)), "command rocminfo")
    if names and not F.has("gpu.names"):
        F.put("gpu.names", sorted(set(n for n in names if n and "CPU" not in n and "Processor" not in n)), "command rocminfo")


def _p_amdsmi(F: _Facts, timeout: float) -> None:
    exe = shutil.which("amd-smi")
    if not exe:
        raise Skip("amd-smi is not installed")
    rc, out = run_cmd([exe, "static", "--asic", "--json"], timeout)
    if rc != 0:
        raise RuntimeError(f"amd-smi exited with {rc}")
    gfx = sorted(set(re.findall(r'"(gfx[0-9a-f]{3,4})"', out)))
    names = sorted(set(re.findall(r'"market_name"\s*:\s*"([^"]{1,80})"', out)))
    if gfx and not F.has("gpu.gfx"):
        F.put("gpu.gfx", gfx, "command amd-smi static --asic --json")
    if names:
        F.put("gpu.names", names, "command amd-smi static --asic --json")


def _p_python(F: _Facts, python: str, timeout: float, do_import: bool) -> None:
    script = str(Path(__file__).with_name("pyprobe.py"))
    cmd = [python, "-I", script] + ([] if do_import else ["--no-import"])
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
    st = stages.get("static")
    if not st:
        raise RuntimeError(f"the Python probe printed nothing usable ({python})" + (" before the timeout" if timed_out else ""))
    src = f"python probe in {st['python']['executable']} (metadata, torch/version.py, no import)"
    F.put("python.version", st["python"]["version"], src)
    F.put("python.executable", st["python"]["executable"], src)
    F.put("python.cuda_extensions", st.get("cuda_extensions") or [], src + "; ELF DT_NEEDED of compiled modules")
    for name, ver in (st.get("packages") or {}).items():
        fact = "pkg." + name.replace("-", "_")
        if fact in VOCAB:
            F.put(fact, ver, src + "; importlib.metadata")
    t = st.get("torch") or {}
    F.put("torch.installed", bool(t.get("installed")), src)
    if t.get("installed"):
        F.put("torch.version", t.get("version"), src)
        F.put("torch.build", t.get("build"), src + " (torch.version.hip / torch.version.cuda)")
        F.put("torch.hip", t.get("hip"), src)
        F.put("torch.cuda", t.get("cuda"), src)
        F.put("torch.rocblas_gfx", t.get("rocblas_gfx"), f"files {t.get('rocblas_dir')}")
    else:  # known absent: every PyTorch fact is null, so checks about PyTorch are false, not unknown
        for n in ("torch.version", "torch.build", "torch.hip", "torch.cuda", "torch.rocblas_gfx", "torch.gpu_available",
                  "torch.device_count", "torch.gfx", "torch.arch_list"):
            F.put(n, None, src + " (PyTorch is not installed)")
    tr = st.get("triton") or {}
    F.put("triton.installed", bool(tr.get("installed")), src)
    if tr.get("installed"):
        F.put("triton.version", tr.get("version"), src)
        F.put("triton.dist", tr.get("dist"), src)
        F.put("triton.amd_backend", bool(tr.get("amd_backend")), src + " (triton/backends/amd)")
        F.put("triton.nvidia_backend", bool(tr.get("nvidia_backend")), src + " (triton/backends/nvidia)")
    else:
        for n in ("triton.version", "triton.dist", "triton.amd_backend", "triton.nvidia_backend"):
            F.put(n, None, src + " (Triton is not installed)")
    rt = (stages.get("runtime") or {}).get("torch")
    if not t.get("installed") or not do_import:
        return
    if timed_out and rt is None:
        raise subprocess.TimeoutExpired(cmd, timeout)
    if not isinstance(rt, dict) or rt.get("import_error"):
        raise RuntimeError("import torch failed: " + str((rt or {}).get("import_error") or "no output"))
    isrc = f"import torch in {st['python']['executable']}"
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


def _p_env(F: _Facts) -> None:
    for v in ENV_VARS:
        val = os.environ.get(v)
        F.put(f"env.{v}", val[:MAX_STR] if val is not None else None, f"env {v}")


# --- derived facts ----------------------------------------------------------------------------------------

def _base(t: str) -> str:
    return t.split(":")[0].strip()


def derive(values: dict, sources: dict | None = None) -> None:
    """Fill derived facts that are missing and whose inputs are known (a facts file from an older collector,
    or a hand-written fixture, gets them too). values: name -> value; sources: name -> source (updated)."""
    sources = sources if sources is not None else {}

    def put(name, value, inputs):
        if name not in values:
            values[name] = value
            sources[name] = "derived from " + ", ".join(inputs)

    if "gpu.amd_count" not in values:
        known = [values[k] for k in ("gpu.kfd_count", "gpu.pci_amd_count") if isinstance(values.get(k), int)]
        if known:
            put("gpu.amd_count", max(known), ["gpu.kfd_count", "gpu.pci_amd_count"])
    if "gpu.gfx" not in values and values.get("gpu.kfd_count") == 0 and values.get("gpu.pci_amd_count") == 0:
        put("gpu.gfx", [], ["gpu.kfd_count", "gpu.pci_amd_count"])
    env_ov = "env.HSA_OVERRIDE_GFX_VERSION"
    if env_ov in values:
        put("gpu.override_gfx", override_target(values[env_ov]), [env_ov])
        if "gpu.gfx" in values and isinstance(values["gpu.gfx"], list):
            ov = values[env_ov]
            if ov is None:
                put("gpu.runtime_gfx", list(values["gpu.gfx"]), ["gpu.gfx", env_ov])
            elif override_target(ov) and values["gpu.gfx"]:
                put("gpu.runtime_gfx", [override_target(ov)], ["gpu.gfx", env_ov])
            elif override_target(ov):
                put("gpu.runtime_gfx", [], ["gpu.gfx", env_ov])
    rt = values.get("gpu.runtime_gfx")
    if isinstance(rt, list) and "env.PYTORCH_ROCM_ARCH" in values:
        arch = values["env.PYTORCH_ROCM_ARCH"]
        listed = {_base(a) for a in re.split(r"[;\s]+", arch or "") if a.strip()}
        put("gpu.not_in_pytorch_rocm_arch", [g for g in rt if arch is not None and g not in listed],
            ["gpu.runtime_gfx", "env.PYTORCH_ROCM_ARCH"])
    if isinstance(rt, list) and "torch.arch_list" in values and "torch.build" in values:
        al = values["torch.arch_list"]
        ok = values["torch.build"] == "rocm" and isinstance(al, list) and al
        put("torch.missing_gfx", [g for g in rt if ok and g not in {_base(a) for a in al}],
            ["gpu.runtime_gfx", "torch.arch_list", "torch.build"])
    for have, miss, inputs in (("rocblas.gfx", "rocblas.missing_gfx", "rocblas.library_dir"),
                               ("torch.rocblas_gfx", "torch.rocblas_missing_gfx", "torch.build")):
        if isinstance(rt, list) and (have in values or inputs in values):
            lib = values.get(have)
            put(miss, [g for g in rt if isinstance(lib, list) and g not in lib], ["gpu.runtime_gfx", have])
    if isinstance(rt, list) and ("miopen.kdb_files" in values or "miopen.db_dir" in values):
        kdb = values.get("miopen.kdb_files")
        put("miopen.missing_kdb_gfx",
            [g for g in rt if isinstance(kdb, list) and not any(re.match(re.escape(g) + r"(?:[_0-9a-f][0-9a-f]*)?\.kdb$", n) for n in kdb)],
            ["gpu.runtime_gfx", "miopen.kdb_files"])
    if "libs.amdhip64" in values and isinstance(values["libs.amdhip64"], list):
        prefixes = []
        for p in values["libs.amdhip64"]:
            pre = _amdhip_prefix(p) if os.path.exists(p) else _lexical_prefix(p)
            if pre not in prefixes:
                prefixes.append(pre)
        put("libs.amdhip64_prefixes", prefixes, ["libs.amdhip64"])
    if "machine.kind" not in values and isinstance(values.get("gpu.amd_count"), int) and "nvidia.present" in values:
        amd, nv = values["gpu.amd_count"] > 0, bool(values["nvidia.present"]) or (values.get("gpu.pci_nvidia_count") or 0) > 0
        put("machine.kind", "amd+nvidia" if amd and nv else "amd" if amd else "nvidia" if nv else "cpu",
            ["gpu.amd_count", "nvidia.present"])


def _lexical_prefix(path: str) -> str:
    d = os.path.dirname(os.path.normpath(path))
    while os.path.basename(d) in ("lib", "lib64") or re.fullmatch(r"[a-z0-9_]+-linux-gnu[a-z]*", os.path.basename(d)):
        d = os.path.dirname(d)
    return d


# --- collection -------------------------------------------------------------------------------------------

def collect(timeout: float = DEFAULT_TIMEOUT, python: str | None = None, do_import: bool = True) -> dict:
    """Collect every fact this machine offers and return the facts document (see FORMAT)."""
    t0 = time.perf_counter()
    F = _Facts()
    slow = {
        "python": lambda f: _p_python(f, python or sys.executable, timeout, do_import),
        "rocminfo": lambda f: _p_rocminfo(f, min(timeout, 3.0)),
        "nvidia-smi": lambda f: _p_nvidia_smi(f, min(timeout, 3.0)),
        "hipcc": lambda f: _p_hipcc_version(f, min(timeout, 3.0)),
        "loader": lambda f: _p_libs(f, min(timeout, 2.0)),
    }
    with cf.ThreadPoolExecutor(max_workers=len(slow)) as pool:
        futs = [pool.submit(F.probe, name, fn) for name, fn in slow.items()]
        for name, fn in (("os", _p_os), ("container", _p_container), ("kernel", _p_kernel),
                         ("devices", _p_devices), ("kfd-topology", _p_kfd), ("pci", _p_pci),
                         ("nvidia-files", _p_nvidia_files), ("rocm", _p_rocm), ("tools", _p_tools), ("env", _p_env),
                         ("gcc", _p_gcc), ("miopen-user", _p_miopen_user)):
            F.probe(name, fn)
        cf.wait(futs)
    if not F.has("gpu.gfx") and (F.get("gpu.pci_amd_count") or 0) > 0:
        F.probe("amd-smi", lambda f: _p_amdsmi(f, min(timeout, 3.0)))
    # Runtime views of the targets stand in for the hardware's only when no override can have changed them.
    if not F.has("gpu.gfx") and F.get("env.HSA_OVERRIDE_GFX_VERSION") is None:
        for alt in ("gpu.rocminfo_gfx", "torch.gfx"):
            if F.get(alt):
                F.put("gpu.gfx", F.get(alt), F.facts[alt]["source"])
                break
    values = {k: v["value"] for k, v in F.facts.items()}
    sources = {k: v["source"] for k, v in F.facts.items()}
    derive(values, sources)
    facts = {k: {"value": values[k], "source": sources[k]} for k in sorted(values)}
    probes = sorted(F.probes, key=lambda p: p["probe"])
    cut = fit(facts)
    if cut:
        probes.append({"probe": "limits", "ok": True, "changed": cut[:64]})
    return {"format": FORMAT, "version": FORMAT_VERSION, "errbook": __version__,
            "collected": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seconds": min(round(time.perf_counter() - t0, 3), MAX_SECONDS),
            "facts": facts, "probes": probes}


def fit(facts: dict) -> list[str]:
    """Make collected facts what parse() accepts, in place: a list longer than MAX_LIST keeps its first
    MAX_LIST items and a string its first MAX_STR characters (the source says so); a value still refused is
    dropped (the fact is then missing: "could not check"), and so are the largest facts while the whole would
    exceed MAX_FILE_BYTES. Returns what was changed, one line each."""
    changed = []
    for name in list(facts):
        rec = facts[name]
        v = rec["value"]
        if isinstance(v, list) and len(v) > MAX_LIST:
            rec["source"] += f" (first {MAX_LIST} of {len(v)} items: a facts file holds no more)"
            changed.append(f"{name}: first {MAX_LIST} of {len(v)} items")
            v = v[:MAX_LIST]
        if isinstance(v, list) and any(isinstance(x, str) and len(x) > MAX_STR for x in v):
            v = [x[:MAX_STR] if isinstance(x, str) else x for x in v]
            rec["source"] += f" (items cut to {MAX_STR} characters)"
            changed.append(f"{name}: items cut to {MAX_STR} characters")
        if isinstance(v, str) and len(v) > MAX_STR:
            v = v[:MAX_STR]
            rec["source"] += f" (first {MAX_STR} characters)"
            changed.append(f"{name}: first {MAX_STR} characters")
        rec["value"] = v
        why = _check_value(name, VOCAB[name].type, v) if name in VOCAB else None
        if why:
            del facts[name]
            changed.append(f"{name}: dropped, its value {why}")
    # Sizes as `errbook doctor --collect` prints them (indent=1), with room for the header and the probes.
    size = lambda x: len(json.dumps(x, indent=1, ensure_ascii=False).encode())  # noqa: E731
    while facts and size(facts) > MAX_FILE_BYTES - (64 << 10):
        name = max(facts, key=lambda n: size(facts[n]))
        del facts[name]
        changed.append(f"{name}: dropped, the facts file would exceed {MAX_FILE_BYTES >> 20} MiB")
    return changed


# --- reading a facts file ---------------------------------------------------------------------------------

def reader_spec() -> dict:
    """What a reader of facts files needs to accept exactly what parse() accepts (engine.js gets it in the
    bundle): the format, the limits and each fact's type."""
    return {"format": FORMAT, "version": FORMAT_VERSION, "max_file_bytes": MAX_FILE_BYTES, "max_str": MAX_STR,
            "max_list": MAX_LIST, "max_int": MAX_INT, "max_seconds": MAX_SECONDS, "max_digits": MAX_DIGITS,
            "types": {n: d.type for n, d in sorted(VOCAB.items())}}


def _check_value(name: str, typ: str, v) -> str | None:
    if v is None:
        return None
    if typ == "bool":
        return None if isinstance(v, bool) else "must be true, false or null"
    if typ == "int":
        return None if isinstance(v, int) and not isinstance(v, bool) and abs(v) < MAX_INT else "must be an integer or null"
    if typ in ("str", "version"):
        if not isinstance(v, str):
            return "must be a string or null"
        if len(v) > MAX_STR:
            return f"is longer than {MAX_STR} characters"
        m = _LEADING_NUMBER.match(v.strip().lstrip("v")) if typ == "version" else None
        if m and any(len(x) > MAX_DIGITS for x in m.group(0).split(".")):
            return f"is not a version: a number in it has more than {MAX_DIGITS} digits"
        return None
    if typ == "list":
        if not isinstance(v, list):
            return "must be a list of strings or null"
        if len(v) > MAX_LIST:
            return f"has more than {MAX_LIST} items"
        if not all(isinstance(x, str) and len(x) <= MAX_STR for x in v):
            return "must hold only strings"
        return None
    return "has an unknown type"


def parse(text: str | bytes, where: str = "facts file") -> dict:
    """Validate a facts document; returns it with derived facts filled in and unknown facts dropped
    (listed in doc['ignored']). Raises FactsError with a message that names the problem."""
    if isinstance(text, bytes):
        if len(text) > MAX_FILE_BYTES:
            raise FactsError(f"{where}: larger than {MAX_FILE_BYTES // (1 << 20)} MiB; not a facts file")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FactsError(f"{where}: not UTF-8 (byte {e.start})") from None
    if len(text) > MAX_FILE_BYTES:
        raise FactsError(f"{where}: larger than {MAX_FILE_BYTES // (1 << 20)} MiB; not a facts file")
    try:
        doc = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"{c} is not JSON")))
    except (json.JSONDecodeError, ValueError) as e:
        raise FactsError(f"{where}: not valid JSON ({e})") from None
    except RecursionError:
        raise FactsError(f"{where}: nested too deeply to be a facts file") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise FactsError(f"{where}: not an errbook facts file (expected an object with \"format\": \"{FORMAT}\"; "
                         "make one with `errbook doctor --collect > facts.json`)")
    if isinstance(doc.get("version"), bool) or doc.get("version") != FORMAT_VERSION:   # true == 1 in Python
        raise FactsError(f"{where}: facts format version {doc.get('version')!r} is not supported (this errbook reads {FORMAT_VERSION})")
    facts = doc.get("facts")
    if not isinstance(facts, dict):
        raise FactsError(f"{where}: \"facts\" must be an object of fact name -> {{\"value\", \"source\"}}")
    clean, ignored = {}, []
    for name, rec in facts.items():
        if name not in VOCAB:
            ignored.append(str(name)[:80])
            continue
        if not isinstance(rec, dict) or "value" not in rec:
            raise FactsError(f"{where}: fact {name}: expected an object with \"value\"")
        why = _check_value(name, VOCAB[name].type, rec["value"])
        if why:
            raise FactsError(f"{where}: fact {name} ({VOCAB[name].type}) {why}")
        src = rec.get("source")
        clean[name] = {"value": rec["value"], "source": src[:300] if isinstance(src, str) else "facts file"}
    values = {k: v["value"] for k, v in clean.items()}
    sources = {k: v["source"] for k, v in clean.items()}
    derive(values, sources)
    out = {"format": FORMAT, "version": FORMAT_VERSION,
           "facts": {k: {"value": values[k], "source": sources[k]} for k in sorted(values)},
           "ignored": ignored}
    sec = doc.get("seconds")
    if sec is not None:
        if isinstance(sec, bool) or not isinstance(sec, (int, float)) or not 0 <= sec <= MAX_SECONDS:
            raise FactsError(f'{where}: "seconds" must be a number from 0 to {MAX_SECONDS}')
        out["seconds"] = sec
    for k in ("collected", "errbook"):
        if isinstance(doc.get(k), str):
            out[k] = doc[k][:64]
    probes = doc.get("probes")
    if isinstance(probes, list):
        out["probes"] = [p for p in probes[:64] if isinstance(p, dict)]
    return out


def load(path: str) -> dict:
    """Read and validate a facts file ('-' = stdin)."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise FactsError(f"cannot read facts file {path}: {e.strerror or e}") from None
    return parse(data, path)


def values_of(doc: dict) -> dict:
    """name -> value, the form the evaluator reads."""
    return {k: v["value"] for k, v in doc["facts"].items()}
