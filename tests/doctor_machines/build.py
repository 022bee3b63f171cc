"""Writes the fixture machines (facts files as `errbook doctor --collect` writes them, derived facts left out:
the loader derives them). Run it after changing a machine or the vocabulary; test_doctor.py checks that the
committed JSON equals what this script produces.

Each machine is a plain description of a typical box; the findings expected from it are in test_doctor.py."""
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent.parent / "scripts"))
from errbook.machine import facts  # noqa: E402

DERIVED = {n for n, d in facts.VOCAB.items() if d.about.endswith("(derived)") or "(derived" in d.about}


def merge(*parts: dict) -> dict:
    out: dict = {}
    for p in parts:
        out.update(p)
    return out


def base() -> dict:
    """A Linux host with nothing GPU-related: every collected fact known, every named variable unset."""
    v = {f"env.{n}": None for n in facts.ENV_VARS}
    v.update({f"pkg.{p.replace('-', '_')}": None for p in facts.PACKAGES})
    v.update({
        "os.kernel": "6.8.0-45-generic", "os.machine": "x86_64", "os.distro": "ubuntu", "os.distro_version": "22.04",
        "os.glibc": "2.35", "os.wsl": False, "container.detected": False, "container.kind": None,
        "cpu.hypervisor": False,
              "kernel.cmdline": "BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=0 ro quiet splash",
        "kernel.numa_balancing": 0, "kernel.iommu_default_passthrough": False, "kernel.amdgpu_loaded": False,
        "kernel.nvidia_loaded": False, "numa.nodes": 1, "iommu.enabled": False,
        "dev.kfd.present": False, "dev.kfd.rw": None, "dev.kfd.group": None, "dev.kfd.mode": None,
        "dev.dri.present": False, "dev.dri.render_nodes": 0, "dev.dri.render_rw": None, "dev.dri.group": None,
        "dev.dxg.present": False, "dev.infiniband.present": False, "rdma.devices": 0, "user.uid": 1000,
              "user.is_root": False, "user.groups": ["dev", "sudo"],
        "gpu.kfd_present": False, "gpu.kfd_count": 0, "gpu.pci_amd_count": 0, "gpu.pci_amd_unbound": 0,
        "gpu.pci_nvidia_count": 0,
        "nvidia.present": False, "rocm.installs": [], "rocm.versions": [], "rocm.default_path": None,
        "rocm.default_version": None, "libs.amdhip64": [], "libs.amdhip64_ld_library_path": [],
        "libs.ibverbs": ["/lib/x86_64-linux-gnu/libibverbs.so.1"], "miopen.user_dirs_unwritable": [],
        "gcc.installs": ["11"], "gcc.newest_without_cxx_headers": None,
        "rocblas.library_dir": None, "miopen.db_dir": None,
        "tools.hipcc": None, "tools.hip_clang": None, "tools.nvcc": None, "tools.cmake": "/usr/bin/cmake",
        "tools.ollama": None, "tools.rocminfo": None, "tools.amd_smi": None,
        "python.version": "3.12.3", "python.executable": "/home/dev/venv/bin/python", "python.cuda_extensions": [],
        "torch.installed": False, "torch.version": None, "torch.build": None, "torch.hip": None, "torch.cuda": None,
        "torch.rocblas_gfx": None, "torch.gpu_available": None, "torch.device_count": None, "torch.gfx": None,
        "torch.arch_list": None, "triton.installed": False, "triton.version": None, "triton.dist": None,
        "triton.amd_backend": None, "triton.nvidia_backend": None,
    })
    return v


def amd_host(gfx: str, n: int, rocm: str = "6.2.0") -> dict:
    prefix = f"/opt/rocm-{rocm}"
    return {
        "kernel.amdgpu_loaded": True, "iommu.enabled": True,
        "dev.kfd.present": True, "dev.kfd.rw": True, "dev.kfd.group": "render", "dev.kfd.mode": "0660",
        "dev.dri.present": True, "dev.dri.render_nodes": n, "dev.dri.render_rw": True, "dev.dri.group": "render",
        "user.groups": ["dev", "render", "video"],
        "gpu.kfd_present": True, "gpu.kfd_count": n, "gpu.gfx": [gfx], "gpu.pci_amd_count": n,
        "gpu.rocminfo_gfx": [gfx],
        "rocm.installs": [prefix], "rocm.versions": [f"{rocm}-66"], "rocm.default_path": prefix,
        "rocm.default_version": f"{rocm}-66", "libs.amdhip64": [f"{prefix}/lib/libamdhip64.so.6"],
        "rocblas.library_dir": f"{prefix}/lib/rocblas/library", "rocblas.gfx": ["gfx1030", "gfx1100", "gfx1101",
                                                                                 "gfx908", "gfx90a", "gfx942"],
        "miopen.db_dir": f"{prefix}/share/miopen/db",
            "miopen.kdb_files": [f"{gfx}_{'304' if gfx == 'gfx942' else '60'}.kdb"],
        "tools.hipcc": f"{prefix}/bin/hipcc", "tools.hip_version": "6.2.41133-dd7f95766",
        "tools.hip_clang": f"{prefix}/llvm/bin/clang++", "tools.rocminfo": f"{prefix}/bin/rocminfo",
        "tools.amd_smi": f"{prefix}/bin/amd-smi",
    }


def rocm_torch(gfx_seen: list, arch: list, rocblas: list, version="2.5.1+rocm6.2", hip="6.2.41133-dd7f95766") -> dict:
    return {"torch.installed": True, "torch.version": version, "torch.build": "rocm", "torch.hip": hip,
            "torch.cuda": None, "torch.rocblas_gfx": rocblas, "torch.gpu_available": bool(gfx_seen),
            "torch.device_count": len(gfx_seen), "torch.gfx": sorted(set(gfx_seen)), "torch.arch_list": arch,
            "triton.installed": True, "triton.version": "3.1.0", "triton.dist": "pytorch-triton-rocm",
            "triton.amd_backend": True, "triton.nvidia_backend": False}


ARCH_62 = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"]
MACHINES = {}

# An 8 x MI300X node as shipped: two sockets (NUMA balancing on by default), XGMI between all GPUs, vLLM.
m = merge(base(), amd_host("gfx942", 8), {"numa.nodes": 2, "kernel.numa_balancing": 1, "gpu.xgmi_links": 56,
                                  "iommu.gpu_domain_types": ["DMA-FQ"], "gpu.names": ["AMD Instinct MI300X"],
                                  "pkg.vllm": "0.6.3+rocm624"},
         rocm_torch(["gfx942"] * 8, ARCH_62, ["gfx1030", "gfx1100", "gfx908", "gfx90a", "gfx942"]))
MACHINES["mi300x-node"] = m

# A Radeon RX 7800 XT (gfx1101) workstation whose shell profile sets the override as a bare number.
m = merge(base(), amd_host("gfx1101", 1),
          {"env.HSA_OVERRIDE_GFX_VERSION": "1100", "gpu.names": ["AMD Radeon RX 7800 XT"],
                                   "gpu.xgmi_links": 0, "gpu.rocminfo_gfx": []},
         rocm_torch([], ARCH_62, ["gfx1030", "gfx1100", "gfx90a", "gfx942"]))
MACHINES["radeon-bad-override"] = m

# A Radeon RX 6600 (gfx1032) with the documented community workaround, HSA_OVERRIDE_GFX_VERSION=10.3.0.
m = merge(base(), amd_host("gfx1032", 1),
          {"env.HSA_OVERRIDE_GFX_VERSION": "10.3.0", "gpu.names": ["AMD Radeon RX 6600"],
                                   "gpu.xgmi_links": 0, "gpu.rocminfo_gfx": ["gfx1030"],
                                   "miopen.kdb_files": ["gfx1030_28.kdb"]},
         rocm_torch(["gfx1030"], ARCH_62, ["gfx1030", "gfx1100", "gfx90a", "gfx942"]))
MACHINES["radeon-good-override"] = m

# A Docker container on a 2 x MI210 host, started without --device /dev/kfd --device /dev/dri: the host's sysfs
# is visible (PCI bus, amdgpu loaded) but KFD refuses the GPU nodes' properties and there are no device nodes.
m = merge(base(), {"container.detected": True, "container.kind": "docker", "kernel.amdgpu_loaded": True,
          "gpu.kfd_present": True, "gpu.kfd_count": 0, "gpu.pci_amd_count": 2, "iommu.enabled": True,
          "iommu.gpu_domain_types": ["identity"], "user.uid": 0, "user.is_root": True, "user.groups": ["root"],
          "rocm.installs": ["/opt/rocm-6.3.0"], "rocm.versions": ["6.3.0-39"], "rocm.default_path": "/opt/rocm-6.3.0",
          "rocm.default_version": "6.3.0-39", "libs.amdhip64": ["/opt/rocm-6.3.0/lib/libamdhip64.so.6"],
          "tools.hipcc": "/opt/rocm-6.3.0/bin/hipcc", "tools.hip_clang": "/opt/rocm-6.3.0/llvm/bin/clang++",
          "tools.rocminfo": "/opt/rocm-6.3.0/bin/rocminfo"},
         rocm_torch([], ARCH_62, ["gfx90a", "gfx942"], version="2.6.0+rocm6.3", hip="6.3.42131-fa1d09cbd"))
MACHINES["container-no-kfd"] = m

# An NVIDIA H200 box with a CUDA build of PyTorch (what the lead's device run sees).
m = merge(base(), {"nvidia.present": True, "nvidia.driver": "580.95.05", "nvidia.gpus": ["NVIDIA H200"],
          "kernel.nvidia_loaded": True, "gpu.pci_nvidia_count": 1, "container.detected": True,
                   "container.kind": "docker",
          "user.uid": 0, "user.is_root": True, "user.groups": ["root"], "numa.nodes": 2, "kernel.numa_balancing": 1,
          "torch.installed": True, "torch.version": "2.11.0+cu130", "torch.build": "cuda", "torch.cuda": "13.0",
          "torch.gpu_available": True, "torch.device_count": 1, "torch.gfx": [],
                   "torch.arch_list": ["sm_80", "sm_90", "sm_100", "sm_120"],
          "triton.installed": True, "triton.version": "3.5.0", "triton.dist": "triton", "triton.amd_backend": True,
          "triton.nvidia_backend": True, "pkg.triton": "3.5.0"})
MACHINES["cuda-h200"] = m

# A laptop without any GPU compute stack: CPU build of PyTorch.
m = merge(base(), {"torch.installed": True, "torch.version": "2.5.1+cpu", "torch.build": "cpu",
                   "torch.gpu_available": False,
          "torch.device_count": 0, "torch.gfx": [], "torch.arch_list": []})
MACHINES["cpu-laptop"] = m

# Two MI100 (gfx908) on PCIe in a workstation: no XGMI, the IOMMU translates DMA, no iommu=pt.
m = merge(base(), amd_host("gfx908", 2), {"gpu.xgmi_links": 0, "iommu.gpu_domain_types": ["DMA"], "numa.nodes": 1},
         rocm_torch(["gfx908", "gfx908"], ARCH_62, ["gfx908", "gfx90a", "gfx942"]))
MACHINES["pcie-2x-mi100"] = m

# A rootless Podman container on an HPC node with four MI300A APUs (gfx942) and InfiniBand, started with --read-only
# (the home directory in the image cannot be written) and with /dev/kfd and /dev/dri but not /dev/infiniband; the
# image has no rdma-core, and the launch script raises NCCL_MIN_NCHANNELS to 112 following tuning advice.
m = merge(base(), amd_host("gfx942", 4, rocm="6.3.0"),
          {"container.detected": True, "container.kind": "podman", "numa.nodes": 4, "gpu.xgmi_links": 12,
           "iommu.gpu_domain_types": ["identity"], "gpu.names": ["AMD Instinct MI300A"], "rdma.devices": 4,
           "dev.infiniband.present": False, "libs.ibverbs": [], "env.NCCL_MIN_NCHANNELS": "112",
           "miopen.user_dirs_unwritable": ["/home/dev/.config/miopen", "/home/dev/.cache/miopen"]},
          rocm_torch(["gfx942"] * 4, ARCH_62, ["gfx90a", "gfx942"], version="2.6.0+rocm6.3", hip="6.3.42131-fa1d09cbd"))
MACHINES["mi300a-podman-ib"] = m

# A Radeon RX 6800 XT (gfx1030) workstation set up by pip: a TheRock ROCm 7.12 PyTorch 2.14 in the venv beside the
# system ROCm 6.4.1 and Ubuntu's HIP 5.7 runtime, bitsandbytes 0.49, vLLM without amdsmi, the CUDA onnxruntime-gpu,
# JAX without a ROCm plugin, HIPCXX and AMD_LOG_LEVEL left in the shell profile, gcc-12 pulled in without its
# libstdc++ headers, and a second card in the box that amdgpu did not take.
m = merge(base(), amd_host("gfx1030", 1, rocm="6.4.1"),
          {"os.distro_version": "24.04", "gpu.names": ["AMD Radeon RX 6800 XT"], "gpu.xgmi_links": 0,
           "gpu.pci_amd_count": 2, "gpu.pci_amd_unbound": 1, "iommu.gpu_domain_types": ["identity"],
           "kernel.cmdline": "BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=0 ro iommu=pt quiet splash",
           "libs.amdhip64": ["/opt/rocm-6.4.1/lib/libamdhip64.so.6", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"],
           "gcc.installs": ["11", "12"], "gcc.newest_without_cxx_headers": "12",
           "env.HIPCXX": "/opt/rocm/bin/hipcc", "env.AMD_LOG_LEVEL": "4",
           "pkg.bitsandbytes": "0.49.2", "pkg.vllm": "0.11.0", "pkg.onnxruntime_gpu": "1.22.0", "pkg.jax": "0.6.2",
           "pkg.jaxlib": "0.6.2"},
          rocm_torch(["gfx1030"], ["gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201"], ["gfx1030", "gfx1100"],
                     version="2.14.0+rocm7.12.0", hip="7.12.60610-5a6b2c1d"))
MACHINES["rdna2-pip-workstation"] = m

# WSL2 on Windows with a Radeon RX 7900 XTX: ROCm 6.1.3 for WSL in /opt/rocm (rocminfo reaches the GPU through
# /dev/dxg, no /dev/kfd, no AMD device on the virtual PCI bus) and the pytorch.org ROCm 6.1 wheel, whose bundled
# libhsa-runtime64 finds no GPU.
m = merge(base(), {"os.wsl": True, "os.kernel": "5.15.153.1-microsoft-standard-WSL2", "cpu.hypervisor": True,
                   "dev.dxg.present": True, "rocm.installs": ["/opt/rocm-6.1.3"], "rocm.versions": ["6.1.3-122"],
                   "rocm.default_path": "/opt/rocm-6.1.3", "rocm.default_version": "6.1.3-122",
                   "libs.amdhip64": ["/opt/rocm-6.1.3/lib/libamdhip64.so.6"],
                   "tools.rocminfo": "/opt/rocm-6.1.3/bin/rocminfo",
                   "tools.hipcc": "/opt/rocm-6.1.3/bin/hipcc", "tools.hip_clang": "/opt/rocm-6.1.3/llvm/bin/clang++",
                   "tools.hip_version": "6.1.40093-bd86f1708"},
          rocm_torch([], ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"],
                     ["gfx1100", "gfx90a"],
                     version="2.4.1+rocm6.1", hip="6.1.40091-a8dbc0c19"))
MACHINES["wsl2-radeon-rocm61"] = m


def document(values: dict) -> dict:
    return {"format": facts.FORMAT, "version": facts.FORMAT_VERSION, "errbook": "fixture",
            "collected": "2026-12-01T00:00:00Z",
            "facts": {k: {"value": values[k], "source": "fixture"} for k in sorted(values)}}


def render(name: str) -> str:
    return json.dumps(document(MACHINES[name]), indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    for name in MACHINES:
        (HERE / f"{name}.json").write_text(render(name), encoding="utf-8")
        print("wrote", name)
