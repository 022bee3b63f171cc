"""`errbook doctor`'s report: which known problems a machine is exposed to, with the evidence and the fix.

From a facts document (facts/: collected here or read from a saved file) it evaluates every active entry's
`triggers.checks` (checks.py) and reports the entries that apply: for each, the check that holds, each fact's
value next to the condition it meets, the entry's first fix step and the runbook command. cli/doctor.py runs it.
"""
from __future__ import annotations

import json
import sys

from errbook.common import term
from errbook.machine import checks as checks_mod
from errbook.machine import facts as facts_mod


def machine_summary(values: dict) -> dict:
    """What kind of machine the facts describe, in a few lines a person can check at a glance."""
    kind = values.get("machine.kind")
    lines = [_gpu_line(kind, values)]
    sw = _software(values)
    if sw:
        lines.append("; ".join(sw))
    plat = _platform(values)
    if plat:
        lines.append(", ".join(plat))
    return {"kind": kind, "lines": lines}


def _gpu_line(kind, values: dict) -> str:
    amd_n = values.get("gpu.amd_count")
    gfx = values.get("gpu.gfx") or []
    names = values.get("gpu.names") or []
    nv = values.get("nvidia.gpus") or []
    if kind == "nvidia":
        head = "CUDA machine: " + (", ".join(f"{n}" for n in sorted(set(nv))) + f" (x{len(nv)})"
                                   if nv else "NVIDIA GPU")
        if values.get("nvidia.driver"):
            head += f", driver {values['nvidia.driver']}"
        return head + "; no AMD GPU"
    if kind in ("amd", "amd+nvidia"):
        head = f"AMD GPU machine: {amd_n} AMD GPU{'s' if amd_n != 1 else ''}"
        if gfx:
            head += " (" + ", ".join(gfx) + (("; " + ", ".join(names)) if names else "") + ")"
        if kind == "amd+nvidia":
            head += "; also NVIDIA: " + (", ".join(sorted(set(nv))) or "present")
        return head
    if kind == "cpu":
        why = []
        if values.get("gpu.kfd_present") is False:
            why.append("no KFD topology")
        if values.get("gpu.pci_amd_count") == 0:
            why.append("no AMD GPU on the PCI bus")
        return "CPU only: no AMD GPU" + (f" ({', '.join(why)})" if why else "") + " and no NVIDIA GPU"
    return "machine kind unknown (GPU facts were not collected)"


def _software(values: dict) -> list[str]:
    sw = []
    inst = values.get("rocm.installs")
    if isinstance(inst, list):
        vers = values.get("rocm.versions") or []
        sw.append("ROCm: " + (", ".join(f"{v} at {p}" for p, v in zip(inst, vers, strict=False))
                              if inst else "none under /opt/rocm*"))
    if values.get("tools.hipcc"):
        sw.append(f"hipcc {values.get('tools.hip_version') or ''}".strip())
    if values.get("torch.installed") is True:
        t = f"PyTorch {values.get('torch.version')} ({values.get('torch.build')} build)"
        if values.get("torch.gpu_available") is not None:
            t += f", sees {values.get('torch.device_count') or 0} GPU(s)"
        sw.append(t)
    elif values.get("torch.installed") is False:
        sw.append("PyTorch: not installed")
    if values.get("triton.installed"):
        sw.append(f"Triton {values.get('triton.version')}")
    return sw


def _platform(values: dict) -> list[str]:
    plat = []
    if values.get("container.detected"):
        plat.append(f"container ({values.get('container.kind')})")
    if values.get("os.wsl"):
        plat.append("WSL")
    for k, lab in (("os.distro", ""), ("os.kernel", "kernel "), ("os.glibc", "glibc ")):
        if values.get(k):
            version = values.get("os.distro_version") if k == "os.distro" else None
            plat.append(lab + str(values[k]) + (f" {version}" if version else ""))
    return plat


def report(doc: dict, entries: list) -> dict:
    values = facts_mod.values_of(doc)
    sources = {k: v.get("source", "") for k, v in doc["facts"].items()}
    applies, unknown, counts = [], [], {"applies": 0, "clear": 0, "unknown": 0, "not_checkable": 0, "unchecked": 0}
    skipped = []
    for e in sorted(entries, key=lambda x: x.id):
        try:
            r = checks_mod.evaluate_entry(e.data, values, sources)
        except checks_mod.CheckError as ex:   # one unreadable entry costs only its own answer
            skipped.append(f"{e.rel}:{e.line_of(ex.path)}: {checks_mod.field_name(ex.path)}: {ex}")
            continue
        counts[r["state"]] += 1
        base = {"id": e.id, "title": e["title"], "title_zh": e.get("title_zh"), "class": e.klass}
        if r["state"] == "applies":
            applies.append(dict(base, checks=[c for c in r["checks"] if c["holds"] is True],
                                first_fix=e.first_fix, runbook=f"errbook run {e.id}"))
        elif r["state"] == "unknown":
            missing = sorted({m for c in r["checks"] if c["holds"] is None for m in c["missing"]})
            unknown.append(dict(base, missing=missing))
    probes = doc.get("probes") or []
    return {"machine": machine_summary(values), "applies": applies, "could_not_check": unknown,
            "counts": counts, "facts": len(values), "collected": doc.get("collected"),
            "seconds": doc.get("seconds"),
            "failed_probes": [p for p in probes if isinstance(p, dict) and p.get("ok") is False],
            "ignored_facts": doc.get("ignored") or [], "skipped_entries": skipped}


def print_human(rep: dict, out=None) -> None:
    out = out or sys.stdout        # looked up when called: the CLI wraps sys.stdout (term.py)
    w = lambda s="": print(s, file=out)  # noqa: E731
    m = rep["machine"]
    w("errbook doctor")
    for line in m["lines"]:
        w(f"  {line}")
    took = f" in {rep['seconds']:.1f} s" if isinstance(rep.get("seconds"), (int, float)) else ""
    w(f"  {rep['facts']} facts{took}" + (f", collected {rep['collected']}" if rep.get("collected") else ""))
    for p in rep["failed_probes"]:
        w(f"  probe {p.get('probe')} failed: {p.get('error')}")
    if rep["ignored_facts"]:
        w(f"  ignored unknown facts: {', '.join(rep['ignored_facts'][:10])}")
    w()
    c = rep["counts"]
    if not rep["applies"]:
        w(f"No known problem applies to this machine ({c['clear']} entries checked, {c['unknown']} could not be "
          f"checked, {c['not_checkable']} not machine-checkable).")
    else:
        n = len(rep["applies"])
        w(f"{term.plural(n, 'known problem')} appl{'ies' if n == 1 else 'y'} to this machine:")
    for a in rep["applies"]:
        w()
        w(f"{a['id']}  {a['title']}  [{a['class']}]")
        for chk in a["checks"]:
            w(f"  ! {chk['says']}")
            for cond in chk["conditions"]:
                w(f"      {cond['fact']} = {cond['shown']}  ->  {cond['test']}")
            for s in chk["show"]:
                w(f"      ({s['fact']} = {s['shown']})")
        w(f"  first fix: {term.cut(a['first_fix'], 400)}")
        w(f"  verify:    {a['runbook']}")
    if rep["could_not_check"]:
        w()
        w("Could not check (facts missing on this machine or in the facts file):")
        for u in rep["could_not_check"]:
            w(f"  {u['id']}  {term.cut(u['title'], 90)}  (needs {', '.join(u['missing'])})")
    if rep["applies"]:
        w()
        w(f"{term.plural(c['clear'], 'other entry', 'other entries')} checked and clear; "
          f"{term.plural(c['not_checkable'], 'entry', 'entries')} not machine-checkable.")


def print_facts_list(as_json: bool, out=None) -> None:
    out = out or sys.stdout
    rows = [{"fact": d.name, "type": d.type, "about": d.about, "operators": sorted(checks_mod.OPS_BY_TYPE[d.type])}
            for d in sorted(facts_mod.VOCAB.values(), key=lambda d: d.name)]
    if as_json:
        print(json.dumps({"facts": rows}, indent=1), file=out)
        return
    for r in rows:
        print(f"{r['fact']:<48} {r['type']:<8} {r['about']}", file=out)
