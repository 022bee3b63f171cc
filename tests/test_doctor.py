"""errbook doctor: facts are collected honestly and quickly, checks evaluate to exactly the expected findings
on typical machines, a missing fact is never a finding, and a bad facts file is a clear error."""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, errbook
from errbook.kb import entries, validate
from errbook.machine import checks, doctor, facts, pyprobe
from errbook.machine.facts import probes, readers
from errbook.machine.facts.collect import Collector
from errbook.triage import pipeline
from errbook.web import entrypage, indexpages

MACHINES = REPO / "tests" / "doctor_machines"
_spec = importlib.util.spec_from_file_location("doctor_machines_build", MACHINES / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

# Each fixture machine and exactly the (entry, check) pairs that must hold on it.
EXPECTED = {
    "mi300x-node": {("RMN-0057", "numa-balancing-on-vllm-mi300"), ("RMN-0117", "numa-balancing-on")},
    "radeon-bad-override": {("RMN-0020", "rocm-torch-sees-no-gpu"), ("RMN-0023", "override-not-major-minor-stepping"),
                            ("RMN-0026", "override-not-major-minor-stepping"),
                            ("RMN-0093", "override-not-major-minor-stepping")},
    "radeon-good-override": set(),
    "container-no-kfd": {("RMN-0009", "no-gpu-archs-no-gpu"), ("RMN-0020", "rocm-torch-sees-no-gpu"),
                         ("RMN-0022", "container-without-kfd"), ("RMN-0151", "container-without-kfd")},
    "cuda-h200": set(),
    "cpu-laptop": set(),
    "pcie-2x-mi100": {("RMN-0095", "iommu-translating-pcie-multi-gpu"), ("RMN-0095", "no-iommu-pt-pcie-multi-gpu")},
    "mi300a-podman-ib": {("RMN-0163", "miopen-dirs-unwritable-torch"), ("RMN-0163", "miopen-dirs-unwritable-system"),
                         ("RMN-0193", "container-without-rdma-devices"), ("RMN-0193", "rdma-without-libibverbs"),
                         ("RMN-0202", "min-nchannels-above-64-torch"), ("RMN-0202", "min-nchannels-above-64-system")},
    "rdna2-pip-workstation": {("RMN-0131", "newest-gcc-without-libstdcxx-hipcc"),
                              ("RMN-0131", "newest-gcc-without-libstdcxx-rocm"), ("RMN-0133", "hipcxx-names-hipcc"),
                              ("RMN-0134", "rocm6-beside-hip5-runtime"), ("RMN-0155", "bnb-046-049-on-rocm-7-10-plus"),
                              ("RMN-0156", "jax-without-rocm-plugin"), ("RMN-0158", "vllm-rocm-without-amdsmi"),
                              ("RMN-0160", "cuda-onnxruntime-on-amd"), ("RMN-0164", "amd-gpu-without-driver"),
                              # the unbound AMD GPU: missing firmware (RMN-0164) or no BAR space (RMN-0396)
                              ("RMN-0396", "amd-gpu-without-driver"),
                              ("RMN-0196", "max-autotune-gate-gfx8-gfx10"), ("RMN-0206", "amd-log-level-3-or-more"),
                              # AMD_LOG_LEVEL set: RMN-0427's lookup lines (Cannot find CO ...) will show
                              ("RMN-0427", "amd-log-level-set"),
                              # Ubuntu's libamdhip64.so.5 in /usr beside /opt/rocm-6.4.1: two HIP stacks
                              ("RMN-0216", "distro-hip-runtime-beside-amd-rocm"),
                              ("RMN-0217", "loader-sees-usr-and-another-hip")},
    "wsl2-radeon-rocm61": {("RMN-0009", "no-gpu-archs-no-gpu"), ("RMN-0161", "wsl-rocm6-torch-sees-no-gpu")},
}


@pytest.fixture(scope="module")
def active():
    loaded, errors = entries.load_all(REPO)
    assert not errors
    return list(entries.active(loaded))


def findings(rep) -> set:
    return {(a["id"], c["id"]) for a in rep["applies"] for c in a["checks"]}


# --- fixture machines -------------------------------------------------------------------------------------

def test_fixture_files_are_what_build_py_writes():
    assert sorted(p.stem for p in MACHINES.glob("*.json")) == sorted(build.MACHINES)
    for name in build.MACHINES:
        assert (MACHINES / f"{name}.json").read_text(encoding="utf-8") == build.render(name), \
            f"tests/doctor_machines/{name}.json is stale: run python tests/doctor_machines/build.py"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_machine_has_exactly_its_findings(name, active):
    doc = facts.load(str(MACHINES / f"{name}.json"))
    rep = doctor.report(doc, active)
    assert findings(rep) == EXPECTED[name]
    # Every fact a fixture leaves out is derived, so nothing on these machines depends on a guess.
    assert rep["ignored_facts"] == []


def test_fixture_machines_say_what_kind_of_machine_they_are(active):
    kinds = {n: doctor.report(facts.load(str(MACHINES / f"{n}.json")), active)["machine"] for n in EXPECTED}
    assert kinds["cuda-h200"]["kind"] == "nvidia" and kinds["cuda-h200"]["lines"][0].startswith("CUDA machine: NVIDIA "
                                                                                                "H200")
    assert kinds["cpu-laptop"]["kind"] == "cpu" and "no AMD GPU" in kinds["cpu-laptop"]["lines"][0]
    assert kinds["mi300x-node"]["kind"] == "amd" and "gfx942" in kinds["mi300x-node"]["lines"][0]


def test_cuda_machine_clears_every_amd_check(active):
    """Nothing AMD-specific may fire on a CUDA box: every check is false there, none merely unknown."""
    rep = doctor.report(facts.load(str(MACHINES / "cuda-h200.json")), active)
    assert rep["applies"] == [] and rep["could_not_check"] == []


def test_cli_exit_codes_and_json(tmp_path):
    r = errbook("doctor", "--facts", str(MACHINES / "cuda-h200.json"), root=REPO)
    assert r.returncode == 0 and b"No known problem applies" in r.stdout
    r = errbook("doctor", "--facts", str(MACHINES / "radeon-bad-override.json"), "--json", root=REPO)
    assert r.returncode == 1
    rep = json.loads(r.stdout)
    a = {x["id"]: x for x in rep["applies"]}
    assert set(a) == {"RMN-0020", "RMN-0023", "RMN-0026", "RMN-0093"}
    ev = a["RMN-0023"]["checks"][0]["conditions"]
    assert [c["value"] for c in ev] == ["1100", "1100"] and all(c["holds"] is True for c in ev)
    assert a["RMN-0023"]["runbook"] == "errbook run RMN-0023" and a["RMN-0023"]["first_fix"].startswith("Remove")


# --- semantics --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cond,values,want", [
    ({"fact": "env.X", "present": True}, {}, None),                              # not collected: unknown
    ({"fact": "env.X", "present": True}, {"env.X": None}, False),
    ({"fact": "env.X", "present": False}, {"env.X": None}, True),
    ({"fact": "env.X", "equals": ""}, {"env.X": ""}, True),                     # set but empty
    ({"fact": "env.X", "equals": ""}, {"env.X": None}, False),                  # unset is not empty
    ({"fact": "env.X", "not_equals": "TRUE"}, {"env.X": None}, True),           # not_* holds on null
    ({"fact": "env.X", "not_matches": "^[0-9]{1,3}$"}, {"env.X": "1100"}, True),
    ({"fact": "env.X", "matches": "^[0-9]{1,3}$"}, {"env.X": "110"}, True),
    ({"fact": "x.i", "equals": 1}, {"x.i": True}, False),                       # true is not 1
    ({"fact": "x.b", "equals": True}, {"x.b": 1}, False),
    ({"fact": "x.i", "gte": 2}, {"x.i": 2}, True),
    ({"fact": "x.i", "lte": 0}, {"x.i": None}, False),
    ({"fact": "x.l", "in": ["gfx942", "gfx950"]}, {"x.l": ["gfx90a", "gfx942"]}, True),
    ({"fact": "x.l", "not_in": ["gfx942"]}, {"x.l": ["gfx90a"]}, True),
    ({"fact": "x.l", "contains": "gfx90a"}, {"x.l": ["gfx90a"]}, True),
    ({"fact": "x.l", "count_gte": 2}, {"x.l": ["a"]}, False),
    ({"fact": "x.l", "count_lte": 0}, {"x.l": []}, True),
    ({"fact": "x.l", "matches": "^DMA"}, {"x.l": ["identity", "DMA-FQ"]}, True),
    ({"fact": "x.l", "not_matches": "^DMA"}, {"x.l": ["identity"]}, True),
    ({"fact": "x.v", "version": ">=2.7"}, {"x.v": "2.7.0+rocm6.3"}, True),
    ({"fact": "x.v", "version": ">=2.7"}, {"x.v": "2.6.0+rocm6.3"}, False),
    ({"fact": "x.v", "version": ">=2.7"}, {"x.v": "nightly"}, None),           # not a version: unknown
    ({"fact": "x.s", "contains": "iommu=pt"}, {"x.s": "quiet iommu=pt"}, True),
    ({"fact": "x.s", "matches": "\\d"}, {"x.s": "\u0663"}, False),               # ASCII classes, as in JavaScript
])
def test_condition_semantics(cond, values, want):
    assert checks.holds(cond, values) is want


def test_false_wins_over_unknown_and_missing_facts_are_never_findings():
    data = {"id": "RMN-9999", "triggers": {"checks": [
        {"id": "a", "says": "x",
         "when": [{"fact": "gpu.amd_count", "gte": 1}, {"fact": "torch.build", "equals": "rocm"}]}]}}
    assert checks.evaluate_entry(data, {"gpu.amd_count": 0})["state"] == "clear"       # false + unknown = false
    r = checks.evaluate_entry(data, {"gpu.amd_count": 4})
    assert r["state"] == "unknown" and r["checks"][0]["missing"] == ["torch.build"]
    assert checks.evaluate_entry(data, {"gpu.amd_count": 4, "torch.build": "rocm"})["state"] == "applies"


def test_derived_facts():
    v = {"gpu.kfd_count": 1, "gpu.pci_amd_count": 1, "gpu.gfx": ["gfx1032"], "env.HSA_OVERRIDE_GFX_VERSION": "10.3.0",
         "env.PYTORCH_ROCM_ARCH": "gfx90a;gfx942", "torch.build": "rocm", "torch.arch_list": ["gfx1030", "gfx1100"],
         "libs.amdhip64": ["/opt/rocm-6.2.0/lib/libamdhip64.so.6", "/opt/rocm-5.7.1/lib/libamdhip64.so.5"],
         "nvidia.present": False}
    facts.derive(v)
    assert v["gpu.amd_count"] == 1 and v["gpu.override_gfx"] == "gfx1030" and v["gpu.runtime_gfx"] == ["gfx1030"]
    assert v["gpu.not_in_pytorch_rocm_arch"] == ["gfx1030"] and v["torch.missing_gfx"] == []
    assert v["libs.amdhip64_prefixes"] == ["/opt/rocm-6.2.0", "/opt/rocm-5.7.1"] and v["machine.kind"] == "amd"


def test_evaluating_saved_facts_never_reads_this_machine(monkeypatch):
    """Derived facts of another machine's file come from the file alone: no path of it is looked up here (issue
    29). Only collect() resolves this machine's library paths."""
    import os.path as osp

    def no(*a, **k):
        raise AssertionError("derive() looked at this machine's filesystem")
    libs = ["/opt/rocm-6.2.0/lib/libamdhip64.so.6", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"]
    doc = {"format": facts.FORMAT, "version": facts.FORMAT_VERSION,
           "facts": {"libs.amdhip64": {"value": libs, "source": "fixture"}}}
    for name in ("exists", "realpath", "isdir", "isfile", "lexists"):
        monkeypatch.setattr(osp, name, no)
    got = facts.values_of(facts.parse(json.dumps(doc)))
    assert got["libs.amdhip64_prefixes"] == ["/opt/rocm-6.2.0", "/usr"]


def test_every_fact_is_declared_by_a_probe_or_derived():
    """Probes declare the facts they produce; together with the derived ones they are the vocabulary."""
    from errbook.machine.facts.probes import AMD_SMI, PROBES, SLOW_PROBES
    declared = set().union(*(p.produces for p in (*PROBES, *SLOW_PROBES, AMD_SMI)))
    assert declared <= set(facts.VOCAB), declared - set(facts.VOCAB)
    assert set(facts.VOCAB) == declared | set(facts.DERIVED), set(facts.VOCAB) - declared - set(facts.DERIVED)
    assert len({p.name for p in (*PROBES, *SLOW_PROBES, AMD_SMI)}) == len(PROBES) + len(SLOW_PROBES) + 1


def test_a_probe_may_put_only_what_it_declares():
    from errbook.machine.facts.probe import Options, declare
    c = Collector()
    c.probe(declare("liar", lambda f, o: f.put("os.kernel", "6.1", "made up"), "os.machine"), Options(1.0, "", False))
    assert c.facts == {} and c.probes[0]["ok"] is False and "does not declare os.kernel" in c.probes[0]["error"]


@pytest.mark.parametrize("tv,name", [(90010, "gfx90a"), (90402, "gfx942"), (90500, "gfx950"), (100300, "gfx1030"),
                                     (110000, "gfx1100"), (110501, "gfx1151"), (120001, "gfx1201"), (0, None)])
def test_kfd_gfx_target_version(tv, name):
    assert facts.gfx_from_target_version(tv) == name


@pytest.mark.parametrize("v,name", [("11.0.0", "gfx1100"), ("9.4.2", "gfx942"), ("9.0.10", "gfx90a"),
                                    ("1100", None), ("gfx1102", None), ("64.0.0", None), ("10.3.0 ", None)])
def test_override_target(v, name):
    assert facts.override_target(v) == name


# --- collection on this machine ---------------------------------------------------------------------------

GPU_HOST = os.path.exists("/dev/kfd") or os.path.exists("/proc/driver/nvidia")


def test_collect_here_records_sources():
    # How fast collection is, is measured by scripts/benchmark.py, not asserted here (issue 28, L12).
    doc = facts.collect()
    assert doc["format"] == facts.FORMAT and doc["facts"]
    for name, rec in doc["facts"].items():
        assert name in facts.VOCAB and rec["source"], name
        assert facts.check_value(name, facts.VOCAB[name].type, rec["value"]) is None, name
    assert facts.parse(json.dumps(doc))["facts"] == doc["facts"]            # a collected file reads back unchanged


@pytest.mark.skipif(GPU_HOST, reason="this host has a GPU driver; the CPU-only expectations do not apply")
def test_this_cpu_machine_reports_no_amd_gpu_and_nothing_false():
    r = errbook("doctor", "--json", root=REPO)
    rep = json.loads(r.stdout)
    v = facts.values_of(facts.parse(errbook("doctor", "--collect", root=REPO).stdout))
    assert rep["machine"]["kind"] == "cpu" and v["gpu.amd_count"] == 0 and v["gpu.gfx"] == []
    assert rep["machine"]["lines"][0].startswith("CPU only: no AMD GPU")
    got = {a["id"] for a in rep["applies"]}
    # Only checks that need no GPU can hold here, and each must be true of this machine, checked independently.
    expect = set()
    clang_dirs = [os.environ.get("HIP_CLANG_PATH") or "", "/opt/rocm/llvm/bin", "/usr/llvm/bin", "/usr/bin"]
    no_clang = not shutil.which("clang++") and \
        not any(os.access(os.path.join(d, "clang++"), os.X_OK) for d in clang_dirs if d)
    if shutil.which("hipcc") and readers.nvcc_path() and no_clang and "HIP_PLATFORM" not in os.environ:
        expect.add("RMN-0002")
    if shutil.which("hipcc") and shutil.which("cmake"):
        expect.add("RMN-0074")
    assert got == expect
    assert r.returncode == (1 if expect else 0)


def test_collection_survives_failing_probes(monkeypatch, active):
    """Every command fails or hangs and a few files are unreadable: collection still returns, records the
    failures, keeps the other facts, and doctor still reports."""
    def broken_run(cmd, *a, **k):
        if "pyprobe.py" in " ".join(map(str, cmd)):
            raise subprocess.TimeoutExpired(cmd, k.get("timeout", 1), output=b"")
        raise OSError(12, "Cannot allocate memory")
    real_read = readers.read_text

    def flaky_read(path, limit=1 << 20):
        if path in ("/proc/cmdline", "/etc/os-release"):
            raise PermissionError(13, "Permission denied", path)
        return real_read(path, limit)
    monkeypatch.setattr(subprocess, "run", broken_run)
    monkeypatch.setattr(readers, "read_text", flaky_read)
    monkeypatch.setattr(probes.shutil, "which", lambda exe: f"/usr/bin/{exe}")   # pretend every tool exists
    doc = facts.collect(timeout=1.0)
    failed = {p["probe"] for p in doc["probes"] if p.get("ok") is False}
    assert {"python", "loader"} <= failed
    assert "kernel.cmdline" not in doc["facts"] and "os.distro" not in doc["facts"]
    assert "kernel.numa_balancing" in doc["facts"] and "env.HSA_OVERRIDE_GFX_VERSION" in doc["facts"]
    assert "torch.build" not in doc["facts"]                                   # unknown, not "not installed"
    rep = doctor.report(doc, active)
    assert {p["probe"] for p in rep["failed_probes"]} == failed


def _fake_sysfs(root: Path) -> None:
    """A KFD topology and PCI bus like an 8 x MI300X node's (node 0 is the CPU; GPUs fully XGMI-connected)."""
    nodes = root / "kfd" / "nodes"
    (nodes / "0").mkdir(parents=True)
    (nodes / "0" / "properties").write_text("cpu_cores_count 96\nsimd_count 0\ngfx_target_version 0\n")
    for i in range(1, 9):
        d = nodes / str(i)
        d.mkdir()
        (d / "properties").write_text("cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\nvendor_id 4098\n")
        links = [0] + [j for j in range(1, 9) if j != i]
        for k, to in enumerate(links):
            (d / "io_links" / str(k)).mkdir(parents=True)
            (d / "io_links" / str(k) / "properties").write_text(
                f"type {2 if to == 0 else 11}\nnode_from {i}\nnode_to {to}\nweight 15\n")
    (root / "drivers" / "amdgpu").mkdir(parents=True)
    for i in range(8):
        p = root / "pci" / f"0000:{i:02x}:00.0"
        (p / "iommu_group").mkdir(parents=True)
        (p / "vendor").write_text("0x1002\n")
        (p / "class").write_text("0x120000\n")
        (p / "iommu_group" / "type").write_text("identity\n")
        if i != 7:                                                        # GPU 7: amdgpu's probe failed
            (p / "driver").symlink_to(root / "drivers" / "amdgpu")
    audio = root / "pci" / "0000:f0:00.1"
    audio.mkdir(parents=True)
    (audio / "vendor").write_text("0x1002\n")
    (audio / "class").write_text("0x040300\n")                              # HDMI audio: not a GPU


def test_kfd_topology_and_pci_parsing(tmp_path, monkeypatch):
    _fake_sysfs(tmp_path)
    real_glob, real_isdir = probes.glob.glob, probes.os.path.isdir
    mapping = {"/sys/class/kfd/kfd/topology/nodes": str(tmp_path / "kfd" / "nodes"),
               "/sys/bus/pci/devices": str(tmp_path / "pci"), "/sys/kernel/iommu_groups": str(tmp_path)}

    def remap(p):
        for a, b in mapping.items():
            if str(p).startswith(a):
                return b + str(p)[len(a):]
        return p
    monkeypatch.setattr(probes.glob, "glob", lambda p: real_glob(remap(p)))
    monkeypatch.setattr(probes.os.path, "isdir", lambda p: real_isdir(remap(p)))
    F = Collector()
    probes._p_kfd(F)
    probes._p_pci(F)
    assert F.get("gpu.kfd_count") == 8 and F.get("gpu.gfx") == ["gfx942"] and F.get("gpu.xgmi_links") == 56
    assert F.get("gpu.pci_amd_count") == 8 and F.get("iommu.gpu_domain_types") == ["identity"]
    assert F.get("gpu.pci_amd_unbound") == 1


def test_gcc_installs_and_missing_libstdcxx_headers(tmp_path):
    def gcc(v, crt=True):
        d = tmp_path / "usr" / "lib" / "gcc" / "x86_64-linux-gnu" / v
        d.mkdir(parents=True)
        if crt:
            (d / "crtbegin.o").write_bytes(b"")
    assert probes._gcc_installs("x86_64", str(tmp_path)) == ([], None)
    gcc("11")
    (tmp_path / "usr" / "include" / "c++" / "11").mkdir(parents=True)
    assert probes._gcc_installs("x86_64", str(tmp_path)) == (["11"], None)
    gcc("13", crt=False)                                # runtime only (no crtbegin.o): clang does not choose it
    assert probes._gcc_installs("x86_64", str(tmp_path)) == (["11"], None)
    gcc("12")                                           # gcc-12 pulled in without libstdc++-12-dev
    assert probes._gcc_installs("x86_64", str(tmp_path)) == (["11", "12"], "12")
    (tmp_path / "usr" / "include" / "c++" / "12").mkdir()
    assert probes._gcc_installs("x86_64", str(tmp_path)) == (["11", "12"], None)
    assert probes._gcc_installs("aarch64", str(tmp_path)) == ([], None)


def test_miopen_user_dirs_unwritable(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    # Neither exists yet, but both can be created under a writable home.
    assert probes.miopen_user_dirs_unwritable({"MIOPEN_USER_DB_PATH": str(home / ".config" / "miopen"),
                                               "MIOPEN_CUSTOM_CACHE_DIR": str(home / ".cache" / "miopen")}) == []
    # A path below a regular file can never be created (permission bits are moot here: tests may run as root).
    bad = str(blocker / "miopen")
    assert probes.miopen_user_dirs_unwritable({"MIOPEN_USER_DB_PATH": bad,
                                               "MIOPEN_CUSTOM_CACHE_DIR": str(home / "cache")}) == [bad]
    # Without the variables the defaults under ~ are used: a home that cannot hold directories fails both.
    monkeypatch.setenv("HOME", str(blocker))
    assert probes.miopen_user_dirs_unwritable({}) == [str(blocker / ".config" / "miopen"),
                                                      str(blocker / ".cache" / "miopen")]
    monkeypatch.setenv("HOME", str(home))
    assert probes.miopen_user_dirs_unwritable({}) == []


def test_rdma_and_libibverbs_facts(tmp_path, monkeypatch):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libibverbs.so.1").write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(lib))
    cache = ("2 libs found in cache `/etc/ld.so.cache'\n"
             "\tlibibverbs.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libibverbs.so.1\n"
             "\tlibamdhip64.so.6 (libc6,x86-64) => /opt/rocm-6.3.0/lib/libamdhip64.so.6\n")
    monkeypatch.setattr(readers, "run_cmd", lambda cmd, timeout, env=None: (0, cache))
    monkeypatch.setattr(probes.shutil, "which", lambda exe: "/sbin/ldconfig" if exe == "ldconfig" else None)
    F = Collector()
    probes._p_libs(F, 1.0)
    assert F.get("libs.ibverbs") == [str(lib / "libibverbs.so.1"), "/lib/x86_64-linux-gnu/libibverbs.so.1"]
    assert F.get("libs.amdhip64") == ["/opt/rocm-6.3.0/lib/libamdhip64.so.6"]
    monkeypatch.setattr(readers, "run_cmd", lambda cmd, timeout, env=None: (0, cache.split("\n")[0] + "\n"))
    monkeypatch.delenv("LD_LIBRARY_PATH")
    F = Collector()
    probes._p_libs(F, 1.0)
    assert F.get("libs.ibverbs") == [] and F.get("libs.amdhip64") == []
    # /sys/class/infiniband and /dev/infiniband, read through a fake root
    (tmp_path / "ib" / "mlx5_0").mkdir(parents=True)
    (tmp_path / "ib" / "mlx5_1").mkdir()
    real_glob = probes.glob.glob
    remap = {"/sys/class/infiniband/": str(tmp_path / "ib") + "/", "/dev/infiniband/": str(tmp_path / "devib") + "/"}

    def fake_glob(p):
        for a, b in remap.items():
            if p.startswith(a):
                return real_glob(b + p[len(a):])
        return real_glob(p)
    monkeypatch.setattr(probes.glob, "glob", fake_glob)
    F = Collector()
    probes._p_devices(F)
    assert F.get("rdma.devices") == 2 and F.get("dev.infiniband.present") is False
    (tmp_path / "devib").mkdir()
    (tmp_path / "devib" / "uverbs0").write_text("")
    F = Collector()
    probes._p_devices(F)
    assert F.get("dev.infiniband.present") is True


def test_named_packages_are_the_vocabulary_packages():
    assert tuple(pyprobe.NAMED_PACKAGES) == tuple(facts.PACKAGES)


def test_elf_needed_reads_a_real_shared_object(tmp_path):
    so = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/lib64/libm.so.6", "/usr/lib/libm.so.6")
               if os.path.exists(p)), None)
    if so is None:
        pytest.skip("no libm.so.6 to read")
    assert any(n.startswith("libc.so") for n in pyprobe.elf_needed(so))
    (tmp_path / "x.so").write_bytes(b"not an elf")
    assert pyprobe.elf_needed(str(tmp_path / "x.so")) is None


# --- facts files ------------------------------------------------------------------------------------------

def test_collect_saves_only_named_variables_and_round_trips(tmp_path):
    env = dict(os.environ, HSA_OVERRIDE_GFX_VERSION="1100", SECRET_TOKEN="hunter2-do-not-leak", HF_TOKEN="hf_secret42")
    cmd = [sys.executable, "-m", "errbook.cli", "--root", str(REPO), "doctor", "--collect", "--no-import"]
    out = subprocess.run(cmd, capture_output=True, env=env, timeout=120).stdout
    assert b"hunter2-do-not-leak" not in out and b"hf_secret42" not in out
    doc = json.loads(out)
    assert doc["facts"]["env.HSA_OVERRIDE_GFX_VERSION"] == {"value": "1100", "source": "env HSA_OVERRIDE_GFX_VERSION"}
    assert not [k for k in doc["facts"] if k.startswith("env.") and k[4:] not in facts.ENV_VARS]
    (tmp_path / "facts.json").write_bytes(out)
    r = errbook("doctor", "--facts", str(tmp_path / "facts.json"), "--json", root=REPO)
    assert r.returncode == 1 and "RMN-0023" in {a["id"] for a in json.loads(r.stdout)["applies"]}


@pytest.mark.parametrize("content,needle", [
    (b"", b"not valid JSON"),
    (b"\xff\xfe\x00garbage", b"not UTF-8"),
    (b"[1, 2, 3]", b"not an errbook facts file"),
    (b'{"format": "errbook-facts", "version": 99, "facts": {}}', b"not supported"),
    (b'{"format": "errbook-facts", "version": 1, "facts": []}', b"must be an object"),
    (b'{"format": "errbook-facts", "version": 1, "facts": {"gpu.amd_count": {"value": "8"}}}', b"gpu.amd_count (int)"),
    (b'{"format": "errbook-facts", "version": 1, "facts": {"gpu.gfx": {"value": [1, 2]}}}', b"only strings"),
    (b'{"format": "errbook-facts", "version": 1, "facts": {"gpu.amd_count": 8}}', b"expected an object"),
    (b'{"format": "errbook-facts", "version": 1, "facts": {"kernel.numa_balancing": {"value": NaN}}}',
     b"not valid JSON"),
    (b"[" * 100000 + b"]" * 100000, b"facts file"),
    (b'{"format": "errbook-facts", "version": 1, "facts": {"env.LD_LIBRARY_PATH": {"value": "' + b"x" * 9000 + b'"}}}',
     b"longer than"),
])
def test_hostile_facts_file_is_a_clear_error(tmp_path, content, needle):
    p = tmp_path / "facts.json"
    p.write_bytes(content)
    for cmd in (("doctor", "--facts", str(p)), ("triage", "--facts", str(p), str(p))):
        r = errbook(*cmd, root=REPO)
        assert r.returncode == 2 and needle in r.stderr and b"Traceback" not in r.stderr, (cmd, r.stderr[-300:])


def test_oversized_and_missing_facts_files(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (facts.MAX_FILE_BYTES + 10))
    r = errbook("doctor", "--facts", str(big), root=REPO)
    assert r.returncode == 2 and b"larger than" in r.stderr
    r = errbook("doctor", "--facts", str(tmp_path / "nope.json"), root=REPO)
    assert r.returncode == 2 and b"cannot read facts file" in r.stderr and b"Traceback" not in r.stderr


def test_unknown_facts_are_ignored_and_named(tmp_path):
    doc = json.loads((MACHINES / "cpu-laptop.json").read_text())
    doc["facts"]["gpu.warp_drive"] = {"value": True, "source": "x"}
    out = facts.parse(json.dumps(doc))
    assert out["ignored"] == ["gpu.warp_drive"] and "gpu.warp_drive" not in out["facts"]


# --- validation of checks ---------------------------------------------------------------------------------

CHECK = """  checks:
    - id: a-check
      says: "something holds"
      when:
        - {fact: "%s", %s}
"""


def _with_check(root: Path, fact: str, cond: str, keep_not_checkable: bool = False) -> str:
    """RMN-0001 of the mini checkout with one check in its triggers (its not_checkable removed unless kept)."""
    f = root / "errata" / "compile" / "RMN-0001.yaml"
    text = f.read_text(encoding="utf-8")
    block = re.search(r"^  not_checkable: >-\n(?:    .*\n)+", text, re.M)
    assert block, "RMN-0001 is expected to say why it is not checkable"
    new = CHECK % (fact, cond) + (block.group(0) if keep_not_checkable else "")
    text = text[:block.start()] + new + text[block.end():]
    f.write_text(text, encoding="utf-8")
    return text


@pytest.mark.parametrize("fact,cond,msg", [
    ("gpu.warp_drive", "present: true", "unknown fact 'gpu.warp_drive'"),
    ("gpu.amd_count", "matches: \"^8$\"", "operator matches does not apply to gpu.amd_count (int)"),
    ("gpu.gfx", "equals: gfx942", "operator equals does not apply to gpu.gfx (list)"),
    ("env.HIP_PLATFORM", "equals: amd, not_equals: nvidia", "exactly one operator"),
    ("env.HIP_PLATFORM", "matches: \"(?=amd)amd\"", "not a portable regular expression"),
    ("gpu.amd_count", "equals: \"8\"", "equals needs a int value"),
    ("gpu.gfx", "in: []", "non-empty list"),
    ("torch.version", "version: \">=banana\"", "version"),
])
def test_validate_names_bad_conditions(mini_root, fact, cond, msg):
    text = _with_check(mini_root, fact, cond)
    _, found = validate.validate(mini_root)
    hits = [x for x in found if msg in x.message]
    assert hits, [str(x) for x in found]
    assert hits[0].field.startswith("triggers.checks[0].when[0]")
    assert "- {fact:" in text.splitlines()[hits[0].line - 1]


def test_validate_accepts_a_good_check_and_rejects_it_next_to_not_checkable(mini_root):
    _with_check(mini_root, "env.HIP_PLATFORM", "present: true")
    assert validate.validate(mini_root)[1] == []
    make = mini_root.parent / "again"
    from conftest import make_root
    root2 = make_root(make)
    _with_check(root2, "env.HIP_PLATFORM", "present: true", keep_not_checkable=True)
    assert [x.field for x in validate.validate(root2)[1]] == ["triggers.not_checkable"]


def test_every_active_entry_has_checks_or_says_why_not(active):
    with_checks = [e.id for e in active if (e.get("triggers") or {}).get("checks")]
    without = [e.id for e in active if not (e.get("triggers") or {}).get("checks")
               and not (e.get("triggers") or {}).get("not_checkable")]
    assert len(with_checks) >= 25 and without == []


# --- triage and site --------------------------------------------------------------------------------------

def test_triage_reranks_by_machine_facts(tmp_path):
    log = tmp_path / "two.log"
    # Two entries whose signature scores differ by less than one machine-check bonus (the premise is asserted).
    log.write_text("clang: error: unknown argument: '-gencode'\n"
                   "clang: error: no such file or directory: 'arch=compute_80,code=sm_80'\n"
                   "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n")
    plain, _, _ = pipeline.triage_files(REPO, [str(log)])
    before = {r["id"]: r for r in plain}
    assert [r["id"] for r in plain][:2] == ["RMN-0012", "RMN-0090"]
    assert 0 < before["RMN-0012"]["score"] - before["RMN-0090"]["score"] < checks.BONUS
    # An RX 7800 XT (gfx1101) whose PyTorch was built without gfx1101 but whose rocBLAS has it: RMN-0090 holds.
    v = dict(build.MACHINES["radeon-good-override"], **{"env.HSA_OVERRIDE_GFX_VERSION": None, "gpu.gfx": ["gfx1101"],
                                                         "torch.rocblas_gfx": ["gfx1101"], "rocblas.gfx": ["gfx1101"],
                                                         "miopen.kdb_files": ["gfx1101_30.kdb"]})
    doc = facts.parse(json.dumps(build.document(v)))
    ranked, _, _ = pipeline.triage_files(REPO, [str(log)], doctor_facts=doc)
    after = {r["id"]: r for r in ranked}
    assert [r["id"] for r in ranked][:2] == ["RMN-0090", "RMN-0012"]
    assert after["RMN-0090"]["score"] == before["RMN-0090"]["score"] + checks.BONUS
    assert after["RMN-0012"]["score"] == before["RMN-0012"]["score"]
    assert any(w.startswith("this machine: The installed ROCm PyTorch was not compiled")
               for w in after["RMN-0090"]["environment"])


def test_environment_lines_say_whether_a_fact_came_from_the_log_or_the_machine(tmp_path):
    """A --facts file fills in what the log does not state; the reason must not claim the log said it."""
    doc = facts.load(str(MACHINES / "mi300x-node.json"))                      # an MI300X: gfx942
    oor = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 73728, "
           "Hardware limit: 65536. Reducing block sizes or `num_stages` may help.\n")
    log = tmp_path / "oor.log"
    log.write_text(oor)
    ranked, _, _ = pipeline.triage_files(REPO, [str(log)], doctor_facts=doc)
    assert ranked[0]["id"] == "RMN-0116"
    assert ranked[0]["environment"] == ["this machine has gfx942, which this entry's trigger lists"]
    log.write_text("compiling for gfx1100\n" + oor)                          # the log's own statement wins
    ranked, _, _ = pipeline.triage_files(REPO, [str(log)], doctor_facts=doc)
    env = {r["id"]: r["environment"] for r in ranked}
    assert env["RMN-0116"] == ["the log names gfx1100; this entry is about gfx942"]


def test_to_log_facts_shape():
    v = facts.values_of(facts.load(str(MACHINES / "mi300x-node.json")))
    lf = checks.to_log_facts(v)
    assert lf == {"gfx": ["gfx942"], "rocm": "6.2.0", "torch": "2.5.1"}
    v["env.HIP_VISIBLE_DEVICES"] = "0,1"
    assert checks.to_log_facts(v)["env"] == ["HIP_VISIBLE_DEVICES"]


def test_site_shows_the_checkable_part_in_plain_words(active):
    by_id = {e.id: e for e in active}
    md = entrypage.machine_checks_md(by_id["RMN-0023"].data)
    assert "Checked on a machine" in md and "`HSA_OVERRIDE_GFX_VERSION` is set" in md
    assert "`gpu.gfx` includes one of gfx90a, gfx942, gfx950" in md
    assert "Not checkable on a machine" in entrypage.machine_checks_md(by_id["RMN-0001"].data)
    page = indexpages.machine_checks_page(active, facts.VOCAB)
    assert page.count("| [RMN-") >= 25 and "`gpu.amd_count`" in page and "`HSA_OVERRIDE_GFX_VERSION`" in page


def test_the_recorded_h200_run_is_a_cuda_machine_with_nothing_amd_flagged(active):
    """Facts collected on the borrowed NVIDIA H200 on 2026-12-01 (errbook doctor --collect there): doctor
    must call it a CUDA machine, find nothing and leave nothing unknown."""
    rec = MACHINES / "recorded" / "h200-2026-12-01.json"
    rep = doctor.report(facts.load(str(rec)), active)
    assert rep["machine"]["kind"] == "nvidia" and rep["machine"]["lines"][0].startswith("CUDA machine: NVIDIA H200")
    assert findings(rep) == set()
    txt = (MACHINES / "recorded" / "h200-2026-12-01.doctor.txt").read_text()
    assert "No known problem applies to this machine" in txt and "doctor exit 0" in txt
