#!/usr/bin/env python3
"""Benchmarks, each against a reference tool measured in the same run (not timed tests).

  triage   errbook triage on a generated log (default 1 GiB; filler from the 22 benign logs of earlier rounds, so
           figures compare across rounds) vs `grep -E -f` (LC_ALL=C) and `rg -f` with the same patterns; peak
           memory at 0.25/1/2/4 GiB shows whether it grows with the log; a quarter-size log with filler from the
           whole benign corpus (references stopped after 300 s); a dense log (every line matches a signature)
           against the same references and against the sparse log's throughput, and the same lines each behind
           a distinct timestamp (no line repeats: the hard case for a dense log). Each timing is the best of
           three runs (one run when it takes over a minute); logs are synced to disk before anything is timed,
           and the compiled patterns are in the user's cache, as after any first triage.
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
from errbook.kb import entries, scaffold  # noqa: E402
from errbook.triage import matcher  # noqa: E402

PY = sys.executable
# Output goes to a real file: GNU grep stops at the first match when its output is /dev/null.
MEASURE = ("import resource, subprocess, sys, tempfile, time\n"
           "t = time.perf_counter()\n"
           "try:\n"
           "    rc = subprocess.run(sys.argv[2:], stdout=tempfile.TemporaryFile(), "
           "timeout=float(sys.argv[1])).returncode\n"
           "except subprocess.TimeoutExpired:\n"
           "    rc = 'timeout'\n"
           "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)")


def measure(cmd: list[str], env: dict | None = None, cwd: Path | None = None, timeout: float = 3600) -> dict:
    out = subprocess.run([PY, "-c", MEASURE, str(timeout)] + cmd, capture_output=True, text=True, env=env,
                         cwd=cwd).stdout.split()
    rc = out[2] if out[2] == "timeout" else int(out[2])
    return {"seconds": round(float(out[0]), 3), "peak_rss_mib": round(int(out[1]) / 1024, 1), "rc": rc}


def measure_best(cmd: list[str], env: dict | None = None, timeout: float = 3600, repeat: int = 3,
                 long: float = 60) -> dict:
    """The best of `repeat` runs (a shared 2-core machine is noisy; the minimum is the least disturbed run), with
    every run's time kept. A run longer than `long` seconds, or stopped by the timeout, is not repeated."""
    runs = [measure(cmd, env=env, timeout=timeout)]
    while len(runs) < repeat and runs[-1]["rc"] != "timeout" and runs[-1]["seconds"] <= long:
        runs.append(measure(cmd, env=env, timeout=timeout))
    best = min(runs, key=lambda r: (r["rc"] == "timeout", r["seconds"]))
    return dict(best, peak_rss_mib=max(r["peak_rss_mib"] for r in runs), runs=[r["seconds"] for r in runs])


# The benchmark log of earlier rounds: filler from the 22 benign logs the set had then (their names start with a
# capital letter and a dash), so figures stay comparable between rounds. "corpus" uses every benign log.
CLASSIC = re.compile(r"^[A-G]-|^lead-")


def make_log(path: Path, size: int, filler: str = "classic") -> None:
    """Realistic filler (benign build and runtime output) with real error excerpts sprinkled through it."""
    logs = sorted((REPO / "errata/corpus/benign").glob("*.log"))
    if filler == "classic":
        logs = [p for p in logs if CLASSIC.match(p.name)]
    benign = b"".join(p.read_bytes() for p in logs)
    real = [p.read_bytes() for p in sorted((REPO / "errata/corpus/real").glob("*.log"))]
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
    os.sync()       # written back now, not while a tool is being timed


def make_dense_log(path: Path, lines: int) -> None:
    """A log in which every line matches some signature: real example lines of every entry, repeated."""
    loaded, _ = entries.load_all(REPO)
    ex = [line.encode("utf-8") for e in entries.active(loaded) for sig in e["signatures"] if "pattern" in sig
          for x in sig["examples"] for line in x["text"].split("\n") if line.strip()][:400]
    m = matcher.Matcher.from_entries(list(entries.active(loaded)), skipped=[])
    ex = [x for x in ex if m.match_text(x.decode("utf-8", "replace"))] or [b"hipErrorNoBinaryForGpu"]
    with open(path, "wb") as f:
        for i in range(0, lines, len(ex)):
            f.write(b"\n".join(ex[: min(len(ex), lines - i)]) + b"\n")
    os.sync()


def make_dense_distinct_log(dense: Path, path: Path) -> None:
    """The dense log with a distinct timestamp in front of every line (as a real log has): no line repeats."""
    with open(dense, "rb") as src, open(path, "wb") as f:
        for i, line in enumerate(src):
            f.write(b"2026-12-01T%02d:%02d:%02d.%06dZ " % (i // 3600000 % 24, i // 60000 % 60, i // 1000 % 60,
                                                           i % 1000 * 1000) + line)
    os.sync()


def ere(p: str) -> str:
    """A signature pattern in POSIX ERE for grep -E (same meaning for the log lines used here)."""
    p = p.replace("(?:", "(")
    p = re.sub(r"\\d", "[0-9]", p)
    p = re.sub(r"\\s", "[[:space:]]", p)
    p = re.sub(r"\\S", "[^[:space:]]", p)
    p = re.sub(r"\\w", "[[:alnum:]_]", p)
    return p


def _rate(size: int, r: dict) -> dict:
    return dict(r, mb_per_s=round(size / 1e6 / r["seconds"], 1))


def bench_triage(gib: float, sizes: list[float], dense_lines: int) -> dict:
    """errbook triage against grep -E -f and rg -f with the same patterns, on the same files, in one run."""
    loaded, _ = entries.load_all(REPO)
    m = matcher.Matcher.from_entries(list(entries.active(loaded)), skipped=[])
    pats = [s for sig in m.sigs for s in sig.steps]
    tmp = Path(tempfile.mkdtemp(prefix="errbook-bench-"))
    (tmp / "ere.txt").write_text("\n".join(ere(p) for p in pats) + "\n")
    (tmp / "rust.txt").write_text("\n".join(pats) + "\n")
    res: dict = {"signature_patterns": len(pats), "prefilter": m.prefilter.name, "cpus": os.cpu_count(),
                 "sizes": {}}
    errbook = [PY, "-m", "errbook.cli", "--root", str(REPO), "triage", "--json"]
    grep = ["grep", "-E", "-c", "-f", str(tmp / "ere.txt")]
    rg = ["rg", "-c", "-f", str(tmp / "rust.txt")] if shutil.which("rg") else None
    if rg is None:
        res["rg"] = "not installed: no rg figures (bash scripts/bootstrap.sh install puts Debian's ripgrep in)"
        print(f"benchmark: {res['rg']}", file=sys.stderr)
    env_c = dict(os.environ, LC_ALL="C")

    def three(log: Path, timeout: float = 3600) -> dict:
        """The three tools on one file; a reference that runs past `timeout` is stopped and its ratio is a
        lower bound (marked with >=)."""
        size = log.stat().st_size
        subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL)          # warm the page cache for all
        out = {"bytes": size, "errbook": _rate(size, measure_best(errbook + [str(log)]))}
        for name, cmd, env in (("grep", grep, env_c), ("rg", rg, None)):
            if cmd is None:
                continue
            r = _rate(size, measure_best(cmd + [str(log)], env=env, timeout=timeout))
            out[name] = r
            ratio = round(r["seconds"] / out["errbook"]["seconds"], 2)
            out[f"ratio_vs_{name}"] = f">={ratio}" if r["rc"] == "timeout" else ratio
        return out

    subprocess.run([*errbook, "/dev/null"], capture_output=True)    # compiled patterns cached, as for any user
    for g in sorted(set(sizes + [gib])):
        log = tmp / f"{g}.log"
        make_log(log, int(g * (1 << 30)))
        res["sizes"][f"{g} GiB"] = three(log) if g == gib else {
            "bytes": log.stat().st_size, "errbook": _rate(log.stat().st_size, measure_best(errbook + [str(log)]))}
        log.unlink()
    corpus = tmp / "corpus.log"
    make_log(corpus, int(gib * (1 << 30)) // 4, filler="corpus")
    res["corpus_filler"] = three(corpus, timeout=300)
    corpus.unlink()
    dense = tmp / "dense.log"
    make_dense_log(dense, dense_lines)
    res["dense"] = dict(three(dense), lines=dense_lines)
    sparse_rate = res["sizes"][f"{gib} GiB"]["errbook"]["mb_per_s"]
    res["dense"]["throughput_vs_sparse"] = round(res["dense"]["errbook"]["mb_per_s"] / sparse_rate, 2)
    stamped = tmp / "dense-distinct.log"
    make_dense_distinct_log(dense, stamped)
    size = stamped.stat().st_size
    res["dense_distinct"] = {"bytes": size, "lines": dense_lines,
                             "errbook": _rate(size, measure_best(errbook + [str(stamped)]))}
    res["dense_distinct"]["throughput_vs_sparse"] = round(res["dense_distinct"]["errbook"]["mb_per_s"] /
                                                          sparse_rate, 2)
    stamped.unlink()
    dense.unlink()
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
        s = measure([PY, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(root / "mkdocs.yml"),
                     "-d", str(tmp / "s1")],
                    env=env, cwd=root)
        # Reference: the same number of plain pages, same theme and search, no errbook plugin.
        plain = tmp / "plain"
        (plain / "docs" / "entries").mkdir(parents=True)
        for i in range(n):
            (plain / "docs" / "entries" / f"p{i}.md").write_text(f"# Page {i}\n\n" + "Some text about HIP. " * 200)
        (plain / "docs" / "index.md").write_text("# Home\n")
        cfg = {"site_name": "plain", "theme": {"name": "material", "font": False},
               "plugins": [{"search": {"lang": "en"}}]}
        (plain / "mkdocs.yml").write_text(yaml.safe_dump(cfg))
        p = measure([PY, "-m", "mkdocs", "build", "-q", "-f", str(plain / "mkdocs.yml"), "-d", str(tmp / "s2")],
                    env=env, cwd=plain)
        res["site"] = {"errbook_site": s, "plain_material_site": p,
                       "ratio_vs_plain": round(s["seconds"] / p["seconds"], 2)}
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
        runs = [measure([PY, "-m", "papermill", "-k", "python3", "--log-level", "ERROR", str(p),
                         str(Path(d) / "o.ipynb")])
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
    ap.add_argument("--gib", type=float, default=1.0, help="size of the log compared with grep and rg")
    ap.add_argument("--sizes", default="0.25,1,2,4", help="log sizes (GiB) for the memory curve")
    ap.add_argument("--dense-lines", type=int, default=1_000_000)
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--save", metavar="FILE", help="rewrite FILE with the figures so far after each benchmark "
                                                      "(a long run that fails late keeps what it measured)")
    a = ap.parse_args()
    which = set(a.which)
    out: dict = {"machine": {"cpus": os.cpu_count()}}

    def save():
        if a.save:
            Path(a.save).write_text(json.dumps(out, indent=1))

    if "triage" in which:
        out["triage"] = bench_triage(a.gib, [float(x) for x in a.sizes.split(",") if x], a.dense_lines)
        save()
    if which & {"validate", "site"}:
        out.update(bench_validate_and_site(a.entries, which))
        save()
    if "realsite" in which:
        out["site_as_shipped"] = bench_real_site(a.entries)
        save()
    if "runbooks" in which:
        out["runbooks"] = bench_runbooks(a.jobs)
        save()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
