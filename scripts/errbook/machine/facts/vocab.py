"""The facts vocabulary: every fact a machine check may use, with its type and what it means and where it comes
from. Nothing else of a machine is recorded: the environment only for the variables in ENV_VARS (so a facts file
carries no secrets), Python distributions only for PACKAGES (pyprobe.NAMED_PACKAGES)."""
from __future__ import annotations

from dataclasses import dataclass


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
    ("machine.kind", "str", "amd, nvidia, amd+nvidia or cpu: which GPUs this machine has (derived from gpu.amd_count "
                            "and nvidia.present)"),
    ("os.kernel", "version", "running kernel release (uname -r)"),
    ("os.machine", "str", "CPU architecture (x86_64, aarch64)"),
    ("os.distro", "str", "distribution id from /etc/os-release (ubuntu, debian, rhel, ...)"),
    ("os.distro_version", "str", "distribution version from /etc/os-release"),
    ("os.glibc", "version", "glibc version of this process (confstr CS_GNU_LIBC_VERSION)"),
    ("os.wsl", "bool", "running under Windows Subsystem for Linux (/proc/version names Microsoft/WSL)"),
    ("container.detected", "bool", "running inside a container (/.dockerenv, /run/.containerenv, PID 1's cgroup, "
                                   "Kubernetes/Apptainer markers)"),
    ("container.kind", "str", "docker, podman, kubernetes, lxc, apptainer or container (unknown kind); null outside a "
                              "container"),
    ("cpu.hypervisor", "bool", "the CPU flags in /proc/cpuinfo include 'hypervisor' (a virtual machine)"),
    ("kernel.cmdline", "str", "kernel command line (/proc/cmdline)"),
    ("kernel.numa_balancing", "int", "automatic NUMA balancing (/proc/sys/kernel/numa_balancing; 0 = off)"),
    ("kernel.iommu_default_passthrough", "bool", "the running kernel was built with "
                                                 "CONFIG_IOMMU_DEFAULT_PASSTHROUGH=y (/boot/config-$(uname -r) or "
                                                 "/proc/config.gz; missing when neither is readable)"),
    ("kernel.amdgpu_loaded", "bool", "the amdgpu kernel module is loaded (/sys/module/amdgpu)"),
    ("kernel.nvidia_loaded", "bool", "the NVIDIA kernel module is loaded (/sys/module/nvidia)"),
    ("numa.nodes", "int", "NUMA nodes (/sys/devices/system/node/node*)"),
    ("iommu.enabled", "bool", "an IOMMU is active (/sys/class/iommu has entries)"),
    ("iommu.gpu_domain_types", "list", "default IOMMU domain type of each AMD GPU's group "
                                       "(/sys/bus/pci/devices/*/iommu_group/type; per the kernel's "
                                       "sysfs-kernel-iommu_groups ABI, DMA or DMA-FQ = translated, identity = "
                                       "pass-through)"),
    ("dev.kfd.present", "bool", "/dev/kfd exists (the ROCm compute interface)"),
    ("dev.kfd.rw", "bool", "this process may open /dev/kfd read-write (access(2)); null when /dev/kfd is absent"),
    ("dev.kfd.group", "str", "group that owns /dev/kfd"),
    ("dev.kfd.mode", "str", "permission bits of /dev/kfd, e.g. 0660"),
    ("dev.dri.present", "bool", "/dev/dri exists"),
    ("dev.dri.render_nodes", "int", "number of /dev/dri/renderD* nodes"),
    ("dev.dri.render_rw", "bool", "this process may open every /dev/dri/renderD* read-write; null when there is none"),
    ("dev.dri.group", "str", "group that owns the first /dev/dri/renderD* node"),
    ("dev.infiniband.present", "bool", "/dev/infiniband/uverbs* exists (the RDMA verbs device nodes a process needs "
                                       "to use an InfiniBand/RoCE NIC)"),
    ("rdma.devices", "int", "RDMA (InfiniBand/RoCE) devices the kernel lists in /sys/class/infiniband"),
    ("dev.dxg.present", "bool",
     "/dev/dxg exists (the WSL2 GPU paravirtualisation device that replaces /dev/kfd there)"),
    ("user.uid", "int", "user id of this process"),
    ("user.is_root", "bool", "this process runs as root (uid 0)"),
    ("user.groups", "list", "names of the groups of this process (the login session's groups, not /etc/group)"),
    ("gpu.kfd_present", "bool", "the KFD topology exists (/sys/class/kfd/kfd/topology/nodes)"),
    ("gpu.kfd_count", "int", "GPU nodes in the KFD topology (nodes with a non-zero gfx_target_version)"),
    ("gpu.gfx", "list", "gfx targets of the AMD GPUs as the hardware reports them (KFD gfx_target_version; else "
                        "amd-smi, or rocminfo/PyTorch when no override is set)"),
    ("gpu.names", "list", "marketing names of the AMD GPUs where a tool reports them (rocminfo, amd-smi, PyTorch)"),
    ("gpu.pci_amd_count", "int", "AMD (0x1002) display or processing-accelerator devices on the PCI bus "
                                 "(/sys/bus/pci/devices)"),
    ("gpu.pci_nvidia_count", "int", "NVIDIA (0x10de) display or processing-accelerator devices on the PCI bus"),
    ("gpu.pci_amd_unbound", "int", "AMD GPU devices on the PCI bus with no kernel driver bound (no "
                                   "/sys/bus/pci/devices/*/driver link): no driver claimed them or the driver's probe "
                                   "failed"),
    ("gpu.amd_count", "int", "AMD GPUs: the larger of the KFD GPU nodes and the AMD PCI GPU devices (derived)"),
    ("gpu.xgmi_links", "int",
     "XGMI (Infinity Fabric) links between GPU nodes in the KFD topology (io_links of type 11)"),
    ("gpu.rocminfo_gfx", "list", "gfx targets rocminfo lists for its GPU agents (after HSA_OVERRIDE_GFX_VERSION)"),
    ("gpu.override_gfx", "str", "the target HSA_OVERRIDE_GFX_VERSION names when it is major.minor.stepping (9.4.2 -> "
                                "gfx942); null otherwise (derived)"),
    ("gpu.runtime_gfx", "list", "gfx targets the ROCm runtime will report: the override's target when a valid "
                                "override is set, else gpu.gfx (derived)"),
    ("gpu.not_in_pytorch_rocm_arch", "list", "this machine's runtime targets that PYTORCH_ROCM_ARCH does not list "
                                             "(empty when it is unset) (derived)"),
    ("nvidia.present", "bool", "an NVIDIA GPU driver or device is present (/proc/driver/nvidia, /dev/nvidia0, the PCI "
                               "bus)"),
    ("nvidia.driver", "version", "NVIDIA driver version (/proc/driver/nvidia/version or nvidia-smi)"),
    ("nvidia.gpus", "list", "NVIDIA GPU names (nvidia-smi)"),
    ("rocm.installs", "list", "ROCm trees under /opt/rocm* and $ROCM_PATH/$HIP_PATH (real paths, one per install)"),
    ("rocm.versions", "list", "version of each ROCm tree (<prefix>/.info/version, else the directory name)"),
    ("rocm.default_path", "str", "real path of /opt/rocm; null when /opt/rocm does not exist"),
    ("rocm.default_version", "version", "version of the ROCm tree /opt/rocm (or $ROCM_PATH) points to"),
    ("libs.amdhip64", "list", "libamdhip64.so* files the loader can find: LD_LIBRARY_PATH directories first, then the "
                              "ld.so cache (ldconfig -p)"),
    ("libs.amdhip64_prefixes", "list", "distinct install prefixes of those libamdhip64 files (derived)"),
    ("libs.amdhip64_ld_library_path", "list", "LD_LIBRARY_PATH directories that hold a libamdhip64"),
    ("libs.ibverbs", "list", "libibverbs.so* files the loader can find: LD_LIBRARY_PATH directories first, then the "
                             "ld.so cache (ldconfig -p)"),
    ("rocblas.library_dir", "str", "rocBLAS library directory of the system ROCm ($ROCBLAS_TENSILE_LIBPATH, else "
                                   "<rocm>/lib/rocblas/library); null when absent"),
    ("rocblas.gfx", "list", "gfx targets with a Tensile library in rocblas.library_dir"),
    ("rocblas.missing_gfx", "list", "runtime targets of this machine with no Tensile library in rocblas.library_dir "
                                    "(derived)"),
    ("miopen.db_dir", "str", "MIOpen system database directory (<rocm>/share/miopen/db); null when absent"),
    ("miopen.kdb_files", "list", "precompiled kernel databases (*.kdb, named after gfx target and CU count) in "
                                 "miopen.db_dir"),
    ("miopen.user_dirs_unwritable", "list", "MIOpen's user database and kernel cache directories "
                                            "($MIOPEN_USER_DB_PATH else ~/.config/miopen, $MIOPEN_CUSTOM_CACHE_DIR "
                                            "else ~/.cache/miopen) that this process can neither write nor create "
                                            "(access(2) on the directory or its nearest existing parent)"),
    ("miopen.missing_kdb_gfx", "list", "runtime targets of this machine with no .kdb in miopen.db_dir (derived)"),
    ("tools.hipcc", "str", "path of hipcc on PATH; null when absent"),
    ("gcc.installs", "list", "GCC versions under /usr/lib/gcc/<arch>-linux-gnu/ (Debian/Ubuntu layout) that have "
                             "crtbegin.o: the installations clang's Linux toolchain chooses the newest of"),
    ("gcc.newest_without_cxx_headers", "version", "the newest of gcc.installs when its libstdc++ headers "
                                                  "(/usr/include/c++/<version>) are missing; null when they exist or "
                                                  "there is no GCC there"),
    ("tools.hip_version", "version", "HIP version hipcc reports (hipcc --version with HIP_PLATFORM=amd)"),
    ("tools.hip_clang", "str", "clang++ that hipcc's platform detection would find (HIP_CLANG_PATH, else "
                               "<ROCM_PATH>/llvm/bin or <ROCM_PATH>/bin, else clang++ on PATH); null when none exists"),
    ("tools.nvcc", "str", "nvcc on PATH or $CUDA_PATH/bin/nvcc (default /usr/local/cuda); null when absent"),
    ("tools.cmake", "str", "path of cmake; null when absent"),
    ("tools.ollama", "str", "path of the ollama server binary; null when absent"),
    ("tools.rocminfo", "str", "path of rocminfo; null when absent"),
    ("tools.amd_smi", "str", "path of amd-smi; null when absent"),
    ("python.version", "version", "version of the Python that was probed"),
    ("python.executable", "str", "the Python that was probed (doctor's own, or --python)"),
    ("python.cuda_extensions", "list", "compiled modules of flash-attn, vLLM, xformers, torchvision, torchaudio whose "
                                       "ELF header needs libcudart / libtorch_cuda / libc10_cuda"),
    ("torch.installed", "bool", "PyTorch is installed in the probed Python"),
    ("torch.version", "version", "PyTorch version (torch/version.py, read without importing)"),
    ("torch.build", "str", "rocm, cuda or cpu: the PyTorch build (torch.version.hip / torch.version.cuda)"),
    ("torch.hip", "version", "torch.version.hip (ROCm builds)"),
    ("torch.cuda", "version", "torch.version.cuda (CUDA builds)"),
    ("torch.gpu_available", "bool", "torch.cuda.is_available() after importing torch"),
    ("torch.device_count", "int", "torch.cuda.device_count()"),
    ("torch.gfx", "list", "gfx targets of the devices PyTorch sees (gcnArchName, ROCm builds)"),
    ("torch.arch_list", "list", "gfx (or sm_) targets the installed PyTorch was compiled for "
                                "(torch._C._cuda_getArchFlags())"),
    ("torch.missing_gfx", "list", "runtime targets of this machine that a ROCm PyTorch was not compiled for (derived)"),
    ("torch.rocblas_gfx", "list", "gfx targets with a Tensile library in the rocBLAS bundled with PyTorch "
                                  "(torch/lib/rocblas/library)"),
    ("torch.rocblas_missing_gfx", "list", "runtime targets with no Tensile library in PyTorch's bundled rocBLAS "
                                          "(derived)"),
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
