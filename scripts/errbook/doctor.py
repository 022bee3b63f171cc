"""`errbook doctor`: which known problems this machine is exposed to, with the evidence and the fix.

Collects the machine's facts (facts.py) or reads a saved facts file, evaluates every active entry's
`triggers.checks` (checks.py) and prints the entries that apply: for each, the check that holds, each fact's
value next to the condition it meets, the entry's first fix step and the runbook command. Exit codes: 0 nothing
applies, 1 something applies, 2 error (including an unreadable or hostile facts file).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from . import checks as checks_mod
from . import facts as facts_mod

EXIT_CLEAR, EXIT_APPLIES, EXIT_ERROR = 0, 1, 2


def machine_summary(values: dict) -> dict:
    """What kind of machine the facts describe, in a few lines a person can check at a glance."""
    kind = values.get("machine.kind")
    amd_n = values.get("gpu.amd_count")
    gfx = values.get("gpu.gfx") or []
    names = values.get("gpu.names") or []
    nv = values.get("nvidia.gpus") or []
    lines = []
    if kind == "nvidia":
        head = "CUDA machine: " + (", ".join(f"{n}" for n in sorted(set(nv))) + f" (x{len(nv)})" if nv else "NVIDIA GPU")
        if values.get("nvidia.driver"):
            head += f", driver {values['nvidia.driver']}"
        lines.append(head + "; no AMD GPU")
    elif kind in ("amd", "amd+nvidia"):
        head = f"AMD GPU machine: {amd_n} AMD GPU{'s' if amd_n != 1 else ''}"
        if gfx:
            head += " (" + ", ".join(gfx) + (("; " + ", ".join(names)) if names else "") + ")"
        if kind == "amd+nvidia":
            head += "; also NVIDIA: " + (", ".join(sorted(set(nv))) or "present")
        lines.append(head)
    elif kind == "cpu":
        why = []
        if values.get("gpu.kfd_present") is False:
            why.append("no KFD topology")
        if values.get("gpu.pci_amd_count") == 0:
            why.append("no AMD GPU on the PCI bus")
        lines.append("CPU only: no AMD GPU" + (f" ({', '.join(why)})" if why else "") + " and no NVIDIA GPU")
    else:
        lines.append("machine kind unknown (GPU facts were not collected)")
    sw = []
    inst = values.get("rocm.installs")
    if isinstance(inst, list):
        vers = values.get("rocm.versions") or []
        sw.append("ROCm: " + (", ".join(f"{v} at {p}" for p, v in zip(inst, vers)) if inst else "none under /opt/rocm*"))
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
    if sw:
        lines.append("; ".join(sw))
    plat = []
    if values.get("container.detected"):
        plat.append(f"container ({values.get('container.kind')})")
    if values.get("os.wsl"):
        plat.append("WSL")
    for k, lab in (("os.distro", ""), ("os.kernel", "kernel "), ("os.glibc", "glibc ")):
        if values.get(k):
            plat.append(lab + str(values[k]) + (f" {values.get('os.distro_version')}" if k == "os.distro" and values.get("os.distro_version") else ""))
    if plat:
        lines.append(", ".join(plat))
    return {"kind": kind, "lines": lines}


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
        w(f"{n} known problem{'s' if n != 1 else ''} apply to this machine:")
    for a in rep["applies"]:
        w()
        w(f"{a['id']}  {a['title']}  [{a['class']}]")
        for chk in a["checks"]:
            w(f"  ! {chk['says']}")
            for cond in chk["conditions"]:
                w(f"      {cond['fact']} = {cond['shown']}  ->  {cond['test']}")
            for s in chk["show"]:
                w(f"      ({s['fact']} = {s['shown']})")
        w(f"  first fix: {a['first_fix'][:400]}")
        w(f"  verify:    {a['runbook']}")
    if rep["could_not_check"]:
        w()
        w("Could not check (facts missing on this machine or in the facts file):")
        for u in rep["could_not_check"]:
            w(f"  {u['id']}  {u['title'][:90]}  (needs {', '.join(u['missing'])})")
    if rep["applies"]:
        w()
        w(f"{c['clear']} other entries checked and clear; {c['not_checkable']} entries are not machine-checkable.")


def print_facts_list(as_json: bool, out=None) -> None:
    out = out or sys.stdout
    rows = [{"fact": d.name, "type": d.type, "about": d.about,
             "operators": sorted(checks_mod.OPS_BY_TYPE[d.type])} for d in sorted(facts_mod.VOCAB.values(), key=lambda d: d.name)]
    if as_json:
        print(json.dumps({"facts": rows}, indent=1), file=out)
        return
    for r in rows:
        print(f"{r['fact']:<48} {r['type']:<8} {r['about']}", file=out)


def main(args, root: Path) -> int:
    if args.list_facts:
        print_facts_list(args.json)
        return EXIT_CLEAR
    try:
        if args.facts:
            doc = facts_mod.load(args.facts)
        else:
            doc = facts_mod.collect(timeout=args.timeout, python=args.python, do_import=not args.no_import)
        if args.collect:
            print(json.dumps(doc, indent=1, ensure_ascii=False))
            return EXIT_CLEAR
        from . import entries as entries_mod   # needs PyYAML; --collect and --list-facts need only the stdlib
        loaded, errors = entries_mod.load_all(root)
        for err in errors:
            print(f"errbook doctor: skipped {err.rel}:{err.line}: {err.message} (run errbook validate)", file=sys.stderr)
        rep = report(doc, list(entries_mod.active(loaded)))
        for msg in rep["skipped_entries"]:
            print(f"errbook doctor: skipped {msg} (run errbook validate)", file=sys.stderr)
    except facts_mod.FactsError as e:
        print(f"errbook doctor: {e}", file=sys.stderr)
        return EXIT_ERROR
    except FileNotFoundError as e:
        print(f"errbook doctor: {e}", file=sys.stderr)
        return EXIT_ERROR
    except ImportError as e:
        print(f"errbook doctor: cannot read the entries here ({e}); save the facts with `errbook doctor --collect "
              "> facts.json` (standard library only) and evaluate them where errbook is installed "
              "(`errbook doctor --facts facts.json`)", file=sys.stderr)
        return EXIT_ERROR
    except Exception as e:  # never a traceback for a user; ERRBOOK_DEBUG=1 shows it
        if os.environ.get("ERRBOOK_DEBUG"):
            raise
        print(f"errbook doctor: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        print(json.dumps(rep, indent=1, ensure_ascii=False, default=str))
    else:
        print_human(rep)
    return EXIT_APPLIES if rep["applies"] else EXIT_CLEAR
