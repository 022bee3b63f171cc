"""Platform detection decides which tiers may run; a wrong answer would fake or hide verification."""
import json

from conftest import errbook
from errbook.machine import fingerprint, tiers


def info(torch=None, rocm=None, toolchains=None, driver=None):
    i = {"machine": "x86_64", "os": "Linux", "toolchains": toolchains or {}, "torch": torch, "rocm": rocm or {},
         "nvidia_driver": driver}
    i["tiers"] = tiers.tier_availability(i)
    i["fingerprint"] = fingerprint.make(i)
    return i


def test_cpu_machine_has_only_static():
    i = info()
    assert i["tiers"]["static"] is None
    assert all(i["tiers"][t] for t in ("toolchain", "gpu", "rocm"))
    assert i["fingerprint"]["platform"] == "cpu" and fingerprint.label(i["fingerprint"]) == "CPU (no GPU)"


def test_toolchain_tier_needs_a_real_amd_compiler():
    i = info(toolchains={"hipcc": {"clang": "15.0.6", "hip_version": "5.2"}})
    assert i["tiers"]["toolchain"] is None
    assert tiers.needs_available(i)["triton-amd"]
    i = info(toolchains={"triton": {"version": "3.9.0", "amd_backend": True}})
    assert i["tiers"]["toolchain"] is None and tiers.needs_available(i)["hipcc"]


def test_cuda_gpu_is_gpu_tier_not_rocm():
    i = info(torch={"version": "2.11.0+cu130", "cuda": "13.0", "hip": None, "available": True,
                    "device": "NVIDIA H200", "capability": "9.0"}, driver="580.159.04")
    assert i["tiers"]["gpu"] is None and i["tiers"]["rocm"]
    fp = i["fingerprint"]
    assert fp["platform"] == "cuda" and fp["driver"] == "580.159.04"
    assert fingerprint.label(fp) == "CUDA · NVIDIA H200"


def test_rocm_gpu_enables_rocm_tier():
    i = info(torch={"version": "2.5.0+rocm6.2", "cuda": None, "hip": "6.2.41133", "available": True,
                    "device": "AMD Instinct MI300X", "gcn_arch": "gfx942:sramecc+:xnack-"},
             rocm={"kfd": True, "kfd_rw": True, "gfx": ["gfx942"], "rocm_version": "6.2.0"})
    assert i["tiers"]["gpu"] is None and i["tiers"]["rocm"] is None
    assert fingerprint.label(i["fingerprint"]) == "ROCm 6.2.41133 · gfx942"


def test_rocm_host_without_torch_still_counts_via_rocminfo():
    i = info(rocm={"kfd": True, "kfd_rw": True, "gfx": ["gfx90a"]})
    assert i["tiers"]["rocm"] is None and i["tiers"]["gpu"]


def test_platform_command_reports_this_machine(mini_root):
    r = errbook("platform", "--json", root=mini_root)
    data = json.loads(r.stdout)
    assert r.returncode == 0 and data["tiers"]["static"] is None
    assert set(data["tiers"]) == set(tiers.TIERS)
