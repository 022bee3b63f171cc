#!/usr/bin/env python3
"""Benchmarks, each against a reference tool measured in the same run (not timed tests).

  triage   errbook triage on a generated log (default 1 GiB) vs `grep -E -f <all patterns>` (LC_ALL=C);
           peak memory at two log sizes shows it does not grow with the log.
  validate errbook validate on N generated entries (default 1000) vs a bare YAML parse of the same files.
  site     mkdocs build --strict of those N entries vs the same build of N plain pages without the plugin.
  realsite mkdocs build --strict of this checkout as it ships, and of N cloned entries with their executed
           runbooks and ledger records.
  runbooks errbook run --all --tier static,toolchain (wall time) and the per-notebook overhead of papermill
           (an empty runbook) vs a bare `python -c pass`.

usage: python scripts/benchmark.py [triage|validate|site|realsite|runbooks ...] [--gib 1] [--entries 1000] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from errbook import entries, matcher, scaffold  # noqa: E402

PY = sys.executable
# Output goes to a real file: GNU grep stops at the first match when its output is /dev/null.
MEASURE = ("import resource, subprocess, sys, tempfile, time\n"
           "t = time.perf_counter(); r = subprocess.run(sys.argv[1:], stdout=tempfile.TemporaryFile())\n"
           "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)")


def measure(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> dict:
    out = subprocess.run([PY, "-c", MEASURE] + cmd, capture_output=True, text=True, env=env, cwd=cwd).stdout.split()
    return {"seconds": round(float(out[0]), 3), "peak_rss_mib": round(int(out[1]) / 1024, 1), "rc": int(out[2])}


def make_log(path: Path, size: int) -> None:
    """Realistic filler (benign build and runtime output) with real error excerpts sprinkled through it."""
    benign = b"".join(p.read_bytes() for p in sorted((REPO / "tests/triage_eval/benign").glob("*.log")))
    real = [p.read_bytes() for p in sorted((REPO / "tests/triage_eval/real").glob("*.log"))]
    block = (benign or b"[ 12%] Building CXX object foo.o\n") * max(1, (4 << 20) // max(1, len(benign)))
    with open(path, "wb") as f:
        written, i = 0, 0
        while written < size:
            f.write(block)
            written += len(block)
            if real:
                f.write(real[i % len(real)])
                written += len(real[i % len(real)])
                i += 1


def ere(p: str) -> str:
    """A signature pattern in POSIX ERE for grep -E (same meaning for the log lines used here)."""
    p = p.replace("(?:", "(")
    p = re.sub(r"\\d", "[0-9]", p)
    p = re.sub(r"\\s", "[[:space:]]", p)
    p = re.sub(r"\\S", "[^[:space:]]", p)
    p = re.sub(r"\\w", "[[:alnum:]_]", p)
    return p


def bench_triage(gib: float) -> dict:
    loaded, _ = entries.load_all(REPO)
    m = matcher.Matcher.from_entries(list(entries.active(loaded)), skipped=[])
    tmp = Path(tempfile.mkdtemp(prefix="errbook-bench-"))
    pats = tmp / "patterns.txt"
    pats.write_text("\n".join(ere(s) for sig in m.sigs for s in sig.steps) + "\n")
    res = {"signatures": len(m.sigs)}
    errbook = [PY, "-m", "errbook.cli", "--root", str(REPO), "triage", "--json"]
    for label, size in (("small", int(gib * (1 << 30)) // 4), ("full", int(gib * (1 << 30)))):
        log = tmp / f"{label}.log"
        make_log(log, size)
        real_size = log.stat().st_size
        subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL)          # warm the page cache for both
        t = measure(errbook + [str(log)])
        g = measure(["grep", "-E", "-c", "-f", str(pats), str(log)], env=dict(os.environ, LC_ALL="C"))
        res[label] = {"bytes": real_size,
                      "errbook": dict(t, mb_per_s=round(real_size / 1e6 / t["seconds"], 1)),
                      "grep": dict(g, mb_per_s=round(real_size / 1e6 / g["seconds"], 1)),
                      "throughput_ratio_vs_grep": round(g["seconds"] / t["seconds"], 3)}
        log.unlink()
    shutil.rmtree(tmp)
    return res


def make_entries(n: int, dest: Path) -> Path:
    """A checkout with n entries cloned from the real ones (new ids, same content), and the site's pages."""
    loaded, _ = entries.load_all(REPO)
    base = [e for e in entries.active(loaded)]
    for d in ("errata/compile", "errata/runtime", "errata/performance", "runbooks/compile", "runbooks/runtime",
              "runbooks/performance"):
        (dest / d).mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "mkdocs.yml", dest / "mkdocs.yml")
    shutil.copytree(REPO / "docs", dest / "docs", ignore=shutil.ignore_patterns("runs"))
    (dest / "docs" / "onboarding.md").write_text("# Onboarding\n")
    for i in range(n):
        src = base[i % len(base)]
        eid = f"RMN-{i + 1:04d}"
        d = dict(src.data, id=eid, related=[], aliases=[f"bench-{i}"])
        d["title"] = f"{src['title'][:140]} #{i}"
        rb = f"runbooks/{src.klass}/{eid}.ipynb"
        d["verification"] = dict(src["verification"], runbook=rb)
        shutil.copy(REPO / src["verification"]["runbook"], dest / rb)
        (dest / "errata" / src.klass / f"{eid}.yaml").write_text(yaml.safe_dump(d, allow_unicode=True, sort_keys=False))
    return dest


def bench_validate_and_site(n: int, which: set[str]) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="errbook-bench-"))
    root = make_entries(n, tmp / "root")
    res: dict = {"entries": n}
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    if "validate" in which:
        v = measure([PY, "-m", "errbook.cli", "--root", str(root), "validate"])
        files = [str(p) for p in (root / "errata").rglob("*.yaml")]
        ref = measure([PY, "-c", "import sys, yaml\nL = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)\n"
                                 "[yaml.load(open(f), Loader=L) for f in sys.argv[1:]]"] + files)
        res["validate"] = {"errbook_validate": v, "yaml_parse_only": ref,
                           "ratio_vs_parse": round(v["seconds"] / ref["seconds"], 2)}
    if "site" in which:
        s = measure([PY, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(root / "mkdocs.yml"), "-d", str(tmp / "s1")],
                    env=env, cwd=root)
        # Reference: the same number of plain pages, same theme and search, no errbook plugin.
        plain = tmp / "plain"
        (plain / "docs" / "entries").mkdir(parents=True)
        for i in range(n):
            (plain / "docs" / "entries" / f"p{i}.md").write_text(f"# Page {i}\n\n" + "Some text about HIP. " * 200)
        (plain / "docs" / "index.md").write_text("# Home\n")
        cfg = yaml.safe_load((REPO / "mkdocs.yml").read_text().replace("!!python/name:", "")) or {}
        cfg = {"site_name": "plain", "theme": {"name": "material", "font": False},
               "plugins": [{"search": {"lang": "en"}}]}
        (plain / "mkdocs.yml").write_text(yaml.safe_dump(cfg))
        p = measure([PY, "-m", "mkdocs", "build", "-q", "-f", str(plain / "mkdocs.yml"), "-d", str(tmp / "s2")], env=env, cwd=plain)
        res["site"] = {"errbook_site": s, "plain_material_site": p, "ratio_vs_plain": round(s["seconds"] / p["seconds"], 2)}
    shutil.rmtree(tmp)
    return res


def bench_runbooks(jobs: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        suite = measure([PY, "-m", "errbook.cli", "--root", str(REPO), "run", "--all", "--tier", "static,toolchain",
                         "--jobs", str(jobs), "--no-ledger", "--no-progress", "--out", d])
        nb = scaffold.build_notebook("RMN-0001", "empty", "overhead probe", [])
        nb.cells = nb.cells[:2]        # parameters only
        p = Path(d) / "empty.ipynb"
        scaffold.write_notebook(p, nb)
        runs = [measure([PY, "-m", "papermill", "-k", "python3", "--log-level", "ERROR", str(p), str(Path(d) / "o.ipynb")])
                for _ in range(3)]
        bare = [measure([PY, "-c", "pass"]) for _ in range(3)]
    n = len(list((REPO / "runbooks").rglob("*.ipynb")))
    per = sum(r["seconds"] for r in runs) / 3
    base = sum(r["seconds"] for r in bare) / 3
    return {"runbooks": n, "jobs": jobs, "suite": suite, "papermill_empty_notebook_s": round(per, 3),
            "bare_python_s": round(base, 3), "per_notebook_overhead_s": round(per - base, 3)}


def bench_real_site(n: int) -> dict:
    """The site as it ships: `mkdocs build --strict` of this checkout (every entry, the ledger, every executed
    runbook), and of n entries cloned from it, each with its executed runbooks and their ledger records
    (the site's scale target: 1000 entries under 60 s on 2 cores). Fresh output folders, no caches."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    tmp = Path(tempfile.mkdtemp(prefix="errbook-site-"))
    try:
        real = measure([PY, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(REPO / "mkdocs.yml"),
                        "-d", str(tmp / "real")], env=env, cwd=REPO)
        root = make_entries(n, tmp / "root")
        runs_src = REPO / "docs" / "verification" / "runs"
        runs = root / "docs" / "verification" / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        loaded, _ = entries.load_all(REPO)
        base = list(entries.active(loaded))
        records = [json.loads(x) for x in (REPO / "runbooks" / "ledger.jsonl").read_text().splitlines() if x.strip()]
        latest = {(r.get("entry"), r.get("notebook")): r for r in records if isinstance(r, dict)}
        lines, notebooks = [], 0
        for i in range(n):
            src, eid = base[i % len(base)], f"RMN-{i + 1:04d}"
            for nb in sorted(runs_src.glob(f"{src.id}--*.ipynb")):
                dest = runs / nb.name.replace(src.id, eid, 1)
                shutil.copy(nb, dest)
                notebooks += 1
                rec = latest.get((src.id, f"docs/verification/runs/{nb.name}"))
                if rec:
                    lines.append(json.dumps(dict(rec, entry=eid, notebook=f"docs/verification/runs/{dest.name}",
                                                 runbook=f"runbooks/{src.klass}/{eid}.ipynb")))
        (root / "runbooks" / "ledger.jsonl").write_text("\n".join(lines) + "\n")
        scaled = measure([PY, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(root / "mkdocs.yml"),
                          "-d", str(tmp / "scaled")], env=env, cwd=root)
        pages = sum(1 for _ in (tmp / "scaled").rglob("index.html"))
        return {"real_site": real, "scaled": {"entries": n, "executed_runbooks": notebooks, "pages": pages, **scaled}}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", nargs="*", default=["triage", "validate", "site", "realsite", "runbooks"])
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    which = set(a.which)
    out: dict = {"machine": {"cpus": os.cpu_count()}}
    if "triage" in which:
        out["triage"] = bench_triage(a.gib)
    if which & {"validate", "site"}:
        out.update(bench_validate_and_site(a.entries, which))
    if "realsite" in which:
        out["site_as_shipped"] = bench_real_site(a.entries)
    if "runbooks" in which:
        out["runbooks"] = bench_runbooks(a.jobs)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
