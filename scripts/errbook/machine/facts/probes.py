"""The probes: each reads one part of this machine and declares the facts it produces (PROBES, SLOW_PROBES).

Read-only, quick, never root. A probe that does not apply here (its tool is not installed) raises ProbeSkipped;
one that fails costs only its own facts (collect.py records it in "probes"). A probe may put only the facts it
declares: the collector refuses any other, so the vocabulary, the declarations and the probes stay in step
(tests/test_doctor.py checks that every fact of the vocabulary is produced by a probe or derived).
"""
from __future__ import annotations

import contextlib
import glob
import gzip
import os
import platform as _pf
import re
import shutil
from collections.abc import Mapping

from errbook.kb import versions
from errbook.machine import pyprobe
from errbook.machine.facts import readers
from errbook.machine.facts.fileformat import MAX_LIST, MAX_STR
from errbook.machine.facts.gfx import gfx_from_target_version
from errbook.machine.facts.probe import ProbeSkipped, Sink, declare
from errbook.machine.facts.pythonprobe import TORCH_FACTS, TRITON_FACTS, _p_python
from errbook.machine.facts.readers import (
    hip_clang_path,
    hipcc_info,
    nvcc_path,
    nvidia_smi,
    rocm_version_of,
    rocminfo_agents,
)
from errbook.machine.facts.vocab import ENV_VARS, VOCAB


def _p_os(F: Sink) -> None:
    F.put("os.kernel", _pf.release() or None, "uname -r (platform.release)")
    F.put("os.machine", _pf.machine() or None, "uname -m (platform.machine)")
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION")  # 'glibc 2.36'
        F.put("os.glibc", libc.split()[-1] if libc and libc.startswith("glibc") else None,
              "confstr(CS_GNU_LIBC_VERSION)")
    except (ValueError, OSError, AttributeError):
        pass
    try:
        rel = dict(re.findall(r'^([A-Z_]+)="?([^"\n]*)"?$', readers.read_text("/etc/os-release", 8192), re.M))
        F.put("os.distro", rel.get("ID") or None, "file /etc/os-release")
        F.put("os.distro_version", rel.get("VERSION_ID") or None, "file /etc/os-release")
    except OSError:
        pass
    try:
        ver = readers.read_text("/proc/version", 4096)
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


def _p_container(F: Sink) -> None:
    kind: str | None = None
    why: list[str] = []
    if os.path.exists("/.dockerenv"):
        kind, why = "docker", why + ["/.dockerenv"]
    if os.path.exists("/run/.containerenv"):
        kind, why = "podman", why + ["/run/.containerenv"]
    if os.environ.get("APPTAINER_CONTAINER") or os.environ.get("SINGULARITY_CONTAINER"):
        kind, why = "apptainer", why + ["$APPTAINER_CONTAINER/$SINGULARITY_CONTAINER"]
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        kind, why = "kubernetes", why + ["$KUBERNETES_SERVICE_HOST"]
    marker = os.environ.get("container")          # noqa: SIM112 (systemd and podman set it in lower case)
    if marker and not kind:
        kind = "lxc" if "lxc" in marker else marker if re.fullmatch(r"[a-z0-9-]{1,20}", marker) else "container"
        why = why + ["$container"]
    try:
        cg = readers.read_text("/proc/1/cgroup", 65536)
        for pat, k in (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"), ("/lxc", "lxc"),
                       ("containerd", "container")):
            if pat in cg:
                kind = kind or k
                why.append(f"/proc/1/cgroup mentions {pat}")
                break
    except OSError:
        pass
    src = "files " + (", ".join(why) if why else "/.dockerenv, /run/.containerenv, /proc/1/cgroup (none found)")
    F.put("container.detected", kind is not None, src)
    F.put("container.kind", kind, src)


def _kernel_config_passthrough() -> tuple[bool, str] | None:
    rel = _pf.release()
    for path in (f"/boot/config-{rel}", "/proc/config.gz"):
        try:
            if path.endswith(".gz"):
                with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                    text = f.read(4 << 20)
            else:
                text = readers.read_text(path, 4 << 20)
        except (OSError, EOFError):
            continue
        return bool(re.search(r"^CONFIG_IOMMU_DEFAULT_PASSTHROUGH=y$", text, re.M)), f"file {path}"
    return None


def _p_kernel(F: Sink) -> None:
    with contextlib.suppress(OSError):
        F.put("kernel.cmdline", readers.read_text("/proc/cmdline", 8192).strip(), "file /proc/cmdline")
    try:
        F.put("kernel.numa_balancing", int(readers.read_text("/proc/sys/kernel/numa_balancing", 64).strip()),
              "file /proc/sys/kernel/numa_balancing")
    except (OSError, ValueError):
        if not os.path.exists("/proc/sys/kernel/numa_balancing") and os.path.isdir("/proc/sys/kernel"):
            F.put("kernel.numa_balancing", None,
                  "file /proc/sys/kernel/numa_balancing (absent: kernel without NUMA balancing)")
    if os.path.isdir("/sys/devices/system/node"):
        F.put("numa.nodes", len(glob.glob("/sys/devices/system/node/node[0-9]*")),
              "files /sys/devices/system/node/node*")
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


def _p_devices(F: Sink) -> None:
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


def _p_kfd(F: Sink) -> None:
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
            props = readers.props(os.path.join(node, "properties"))
        except OSError:  # KFD refuses GPU nodes whose device the process (container) may not open: EPERM
            unreadable += 1
            continue
        g = gfx_from_target_version(props.get("gfx_target_version", 0))
        if g and props.get("simd_count", 0) > 0:
            gfx.append(g)
            gpu_nodes.add(os.path.basename(node))
        for link in glob.glob(os.path.join(node, "io_links", "*", "properties")):
            try:
                links.append(readers.props(link))
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


def _p_pci(F: Sink) -> None:
    base = "/sys/bus/pci/devices"
    if not os.path.isdir(base):
        return
    amd = nv = unbound = 0
    types = []
    for dev in sorted(glob.glob(os.path.join(base, "*"))):
        try:
            vendor = readers.read_text(os.path.join(dev, "vendor"), 64).strip().lower()
            klass = readers.read_text(os.path.join(dev, "class"), 64).strip().lower()
        except OSError:
            continue
        if not klass.startswith(("0x03", "0x12")):   # display controller, processing accelerator
            continue
        if vendor == "0x1002":
            amd += 1
            if not os.path.lexists(os.path.join(dev, "driver")):
                unbound += 1
            with contextlib.suppress(OSError):
                types.append(readers.read_text(os.path.join(dev, "iommu_group", "type"), 64).strip())
        elif vendor == "0x10de":
            nv += 1
    src = f"files {base}/*/vendor,class"
    F.put("gpu.pci_amd_count", amd, src)
    F.put("gpu.pci_nvidia_count", nv, src)
    F.put("gpu.pci_amd_unbound", unbound, f"files {base}/*/driver (AMD GPUs)")
    if amd and os.path.isdir("/sys/kernel/iommu_groups"):
        F.put("iommu.gpu_domain_types", sorted(set(types)), f"files {base}/*/iommu_group/type")


def _p_nvidia_files(F: Sink) -> None:
    present = os.path.exists("/proc/driver/nvidia") or os.path.exists("/dev/nvidia0")
    F.put("nvidia.present", present, "files /proc/driver/nvidia, /dev/nvidia0")
    try:
        m = re.search(r"Kernel Module\s+([0-9][0-9.]*)", readers.read_text("/proc/driver/nvidia/version", 4096))
        if m:
            F.put("nvidia.driver", m.group(1), "file /proc/driver/nvidia/version")
    except OSError:
        pass


def _p_nvidia_smi(F: Sink, timeout: float) -> None:
    if not shutil.which("nvidia-smi"):
        raise ProbeSkipped("nvidia-smi is not installed")
    rows = nvidia_smi(timeout)
    if rows is None:
        raise RuntimeError("nvidia-smi failed")
    F.put("nvidia.gpus", [r[0] for r in rows], "command nvidia-smi --query-gpu=name,driver_version")
    if rows:
        F.put("nvidia.present", True, "command nvidia-smi")
        if not F.has("nvidia.driver"):
            F.put("nvidia.driver", rows[0][1], "command nvidia-smi")


def _p_rocm(F: Sink) -> None:
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


def _p_tools(F: Sink) -> None:
    for fact, exe in (("tools.hipcc", "hipcc"), ("tools.cmake", "cmake"), ("tools.ollama", "ollama"),
                      ("tools.rocminfo", "rocminfo"), ("tools.amd_smi", "amd-smi")):
        F.put(fact, shutil.which(exe), f"PATH lookup of {exe}")
    F.put("tools.nvcc", nvcc_path(), "PATH lookup of nvcc, file $CUDA_PATH/bin/nvcc")
    F.put("tools.hip_clang", hip_clang_path(),
          "files $HIP_CLANG_PATH/clang++, <ROCM_PATH>/llvm/bin/clang++, <ROCM_PATH>/bin/clang++, "
          "PATH lookup of clang++")


def _p_hipcc_version(F: Sink, timeout: float) -> None:
    if not shutil.which("hipcc"):
        raise ProbeSkipped("hipcc is not installed")
    info = hipcc_info(timeout)
    if info and info.get("hip_version"):
        F.put("tools.hip_version", info["hip_version"], "command hipcc --version (HIP_PLATFORM=amd)")


def _p_libs(F: Sink, timeout: float) -> None:
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
    fallback = (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p))
    exe = shutil.which("ldconfig") or next(fallback, None)
    src = "files $LD_LIBRARY_PATH/{lib}.so*"
    if exe:
        _, out = readers.run_cmd([exe, "-p"], timeout)
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
    vers.sort(key=lambda n: versions.parse(n) or ())
    if not vers:
        return [], None
    newest = vers[-1]
    has_headers = os.path.isdir(os.path.join(root, "usr", "include", "c++", newest))
    return vers, (None if has_headers else newest)


def _p_gcc(F: Sink) -> None:
    machine = _pf.machine()
    if not machine:
        raise RuntimeError("unknown CPU architecture")
    vers, missing = _gcc_installs(machine)
    src = f"files /usr/lib/gcc/{machine}-linux-gnu/*/crtbegin.o"
    F.put("gcc.installs", vers, src)
    F.put("gcc.newest_without_cxx_headers", missing, src + ", /usr/include/c++/<newest>")


def miopen_user_dirs_unwritable(env: Mapping[str, str] | None = None) -> list[str]:
    """MIOpen's user database and kernel cache directories that this process can neither write nor create."""
    environ = os.environ if env is None else env
    bad = []
    for var, default in (("MIOPEN_USER_DB_PATH", "~/.config/miopen"), ("MIOPEN_CUSTOM_CACHE_DIR", "~/.cache/miopen")):
        path = os.path.expanduser(environ.get(var) or default)
        if not os.path.isabs(path):
            continue            # no home directory to resolve ~ against: MIOpen's own choice is unknown here
        d = path
        while not os.path.lexists(d) and os.path.dirname(d) != d:
            d = os.path.dirname(d)
        if not (os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK)):
            bad.append(path)
    return bad


def _p_miopen_user(F: Sink) -> None:
    F.put("miopen.user_dirs_unwritable", miopen_user_dirs_unwritable(),
          "access(W_OK) on $MIOPEN_USER_DB_PATH or ~/.config/miopen, $MIOPEN_CUSTOM_CACHE_DIR or ~/.cache/miopen "
          "(or their nearest existing parent)")


def _p_rocminfo(F: Sink, timeout: float) -> None:
    exe = shutil.which("rocminfo")
    if not exe:
        raise ProbeSkipped("rocminfo is not installed")
    if not os.path.exists("/dev/kfd"):
        raise ProbeSkipped("no /dev/kfd for rocminfo to open")
    rc, out = readers.run_cmd([exe], timeout)
    gfx, names = rocminfo_agents(out)
    if rc != 0 and not gfx:
        raise RuntimeError(f"rocminfo exited with {rc}: " + " ".join(out.strip().splitlines()[-1:])[:200])
    F.put("gpu.rocminfo_gfx", sorted(set(gfx)), "command rocminfo")
    if names and not F.has("gpu.names"):
        F.put("gpu.names", sorted(set(n for n in names if n and "CPU" not in n and "Processor" not in n)),
              "command rocminfo")


def _p_amdsmi(F: Sink, timeout: float) -> None:
    exe = shutil.which("amd-smi")
    if not exe:
        raise ProbeSkipped("amd-smi is not installed")
    rc, out = readers.run_cmd([exe, "static", "--asic", "--json"], timeout)
    if rc != 0:
        raise RuntimeError(f"amd-smi exited with {rc}")
    gfx = sorted(set(re.findall(r'"(gfx[0-9a-f]{3,4})"', out)))
    names = sorted(set(re.findall(r'"market_name"\s*:\s*"([^"]{1,80})"', out)))
    if gfx and not F.has("gpu.gfx"):
        F.put("gpu.gfx", gfx, "command amd-smi static --asic --json")
    if names:
        F.put("gpu.names", names, "command amd-smi static --asic --json")


def _p_env(F: Sink) -> None:
    for v in ENV_VARS:
        val = os.environ.get(v)
        F.put(f"env.{v}", val[:MAX_STR] if val is not None else None, f"env {v}")


# --- the registry: what each probe produces ---------------------------------------------------------------

ENV_FACTS = tuple(f"env.{v}" for v in ENV_VARS)
PKG_FACTS = tuple(n for n in VOCAB if n.startswith("pkg."))

# Commands with timeouts, run in parallel with the others.
SLOW_PROBES = (
    declare("python", lambda f, o: _p_python(f, o.python, o.timeout, o.do_import),
           "python.version", "python.executable", "python.cuda_extensions", *PKG_FACTS, "torch.installed",
           *TORCH_FACTS, "triton.installed", *TRITON_FACTS, "gpu.names"),
    declare("rocminfo", lambda f, o: _p_rocminfo(f, min(o.timeout, 3.0)), "gpu.rocminfo_gfx", "gpu.names"),
    declare("nvidia-smi", lambda f, o: _p_nvidia_smi(f, min(o.timeout, 3.0)), "nvidia.gpus", "nvidia.present",
           "nvidia.driver"),
    declare("hipcc", lambda f, o: _p_hipcc_version(f, min(o.timeout, 3.0)), "tools.hip_version"),
    declare("loader", lambda f, o: _p_libs(f, min(o.timeout, 2.0)), "libs.amdhip64_ld_library_path", "libs.amdhip64",
           "libs.ibverbs"),
)
# Files, /proc and /sys, run one after the other.
PROBES = (
    declare("os", lambda f, o: _p_os(f), "os.kernel", "os.machine", "os.glibc", "os.distro", "os.distro_version",
           "os.wsl", "cpu.hypervisor"),
    declare("container", lambda f, o: _p_container(f), "container.detected", "container.kind"),
    declare("kernel", lambda f, o: _p_kernel(f), "kernel.cmdline", "kernel.numa_balancing", "numa.nodes",
           "kernel.amdgpu_loaded", "kernel.nvidia_loaded", "iommu.enabled", "kernel.iommu_default_passthrough"),
    declare("devices", lambda f, o: _p_devices(f), "dev.kfd.present", "dev.kfd.rw", "dev.kfd.group", "dev.kfd.mode",
           "dev.dri.present", "dev.dri.render_nodes", "dev.dri.render_rw", "dev.dri.group", "dev.dxg.present",
           "dev.infiniband.present", "rdma.devices", "user.uid", "user.is_root", "user.groups"),
    declare("kfd-topology", lambda f, o: _p_kfd(f), "gpu.kfd_present", "gpu.kfd_count", "gpu.gfx", "gpu.xgmi_links"),
    declare("pci", lambda f, o: _p_pci(f), "gpu.pci_amd_count", "gpu.pci_nvidia_count", "gpu.pci_amd_unbound",
           "iommu.gpu_domain_types"),
    declare("nvidia-files", lambda f, o: _p_nvidia_files(f), "nvidia.present", "nvidia.driver"),
    declare("rocm", lambda f, o: _p_rocm(f), "rocm.installs", "rocm.versions", "rocm.default_path",
           "rocm.default_version", "rocblas.library_dir", "rocblas.gfx", "miopen.db_dir", "miopen.kdb_files"),
    declare("tools", lambda f, o: _p_tools(f), "tools.hipcc", "tools.cmake", "tools.ollama", "tools.rocminfo",
           "tools.amd_smi", "tools.nvcc", "tools.hip_clang"),
    declare("env", lambda f, o: _p_env(f), *ENV_FACTS),
    declare("gcc", lambda f, o: _p_gcc(f), "gcc.installs", "gcc.newest_without_cxx_headers"),
    declare("miopen-user", lambda f, o: _p_miopen_user(f), "miopen.user_dirs_unwritable"),
)
# Run only when the others found an AMD GPU on the PCI bus whose target no file gave.
AMD_SMI = declare("amd-smi", lambda f, o: _p_amdsmi(f, min(o.timeout, 3.0)), "gpu.gfx", "gpu.names")
