"""Issue 28, M2 M3 L4 L10 L11: what the site publishes from docs/, and the executed notebooks `errbook run`
writes there.

Policy under test: a file the site refuses (a notebook in a subfolder of docs/verification/runs/, anything there
that is not a notebook, a symlink leading out of docs/) is left out of the site with a build finding that names
it, and the build goes on, strict mode included: nothing unsafe is published, and one stray file does not take
the site down. A hand-written page at an address errbook generates (docs/entries/RMN-0001.md) gets the same kind
of finding; the generated page wins.
"""
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import BASE_ENTRY, REPO, build, make_root
from test_hostile import live_html  # one detector of live markup for every hostile site test

RUNS = Path("docs/verification/runs")


def notebook(marker: str, *extra: dict) -> str:
    """An executed notebook (the RMN-0001 runbook) with a marker paragraph and extra cells."""
    nb = json.loads((REPO / "runbooks" / "compile" / "RMN-0001.ipynb").read_text(encoding="utf-8"))
    nb["cells"] += [{"cell_type": "markdown", "metadata": {}, "source": marker}, *extra]
    return json.dumps(nb)


EVIL_CELLS = [
    {"cell_type": "markdown", "metadata": {}, "source": "<script>alert(1)</script> [click](javascript:alert(2))"},
    {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "show()",
     "outputs": [{"output_type": "display_data", "metadata": {},
                  "data": {"text/html": "<img src=x onerror=alert(3)>", "application/javascript": "alert(4)"}}]},
]


def live(out: Path) -> dict:
    found = {}
    for p in out.rglob("*.html"):
        hits = live_html(p.read_text(encoding="utf-8", errors="replace"))
        if hits:
            found[str(p.relative_to(out))] = hits
    return found


def published(out: Path, sub: str) -> set:
    return {str(p.relative_to(out / sub)) for p in (out / sub).rglob("*") if p.is_file()}


def findings(r) -> list:
    return re.findall(r"^WARNING -  errbook: (.*)$", r.stderr, re.M)


# --- M2: only the notebooks directly in docs/verification/runs/ are published ------------------------------------

@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nested")
    root = make_root(tmp / "root", with_docs=True)
    runs = root / RUNS
    (runs / "notebooks").mkdir(parents=True)
    (runs / "sub").mkdir()
    (runs / "RMN-0001--cpu.ipynb").write_text(notebook("REAL-RUN-7301"))
    # Matched by mkdocs-jupyter's "notebooks/*.ipynb" from the right, and named like the real run.
    (runs / "notebooks" / "RMN-0001--cpu.ipynb").write_text(notebook("FAKE-RUN-7302", *EVIL_CELLS))
    (runs / "sub" / "odd.ipynb").write_text(notebook("ODD-7303"))    # its run page linked a missing download
    (runs / "stray.html").write_text("<p>STRAY-7304</p><script>alert(5)</script>")
    r = build(root, tmp / "out")
    return root, tmp / "out", r


def test_nested_run_notebooks_are_refused_with_a_finding(nested):
    root, out, r = nested
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]          # strict, as `errbook build` runs it
    got = findings(r)
    for name in ("notebooks/RMN-0001--cpu.ipynb", "sub/odd.ipynb", "stray.html"):
        assert any(f.startswith(f"not publishing {RUNS}/{name}:") for f in got), (name, got)
    assert published(out, "verification/runs") == {"RMN-0001--cpu/index.html", "RMN-0001--cpu.ipynb"}
    page = (out / "verification/runs/RMN-0001--cpu/index.html").read_text(encoding="utf-8")
    assert "REAL-RUN-7301" in page and "FAKE-RUN-7302" not in page         # the real run keeps its page
    assert live(out) == {}
    text = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file() and p.suffix != ".gz")
    assert "FAKE-RUN-7302" not in text and "ODD-7303" not in text and "STRAY-7304" not in text


@pytest.mark.slow
def test_jupyter_include_is_anchored_at_docs(tmp_path):
    """mkdocs-jupyter matches `include` against the absolute path from the right; after the errbook plugin's
    on_config only docs/notebooks/*.ipynb matches, even in a checkout whose path holds glob characters."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import File
    root = make_root(tmp_path / "check[1]*out", with_docs=True)
    config = load_config(str(root / "mkdocs.yml"))
    config.plugins["errbook"].on_config(config)
    jupyter = config.plugins["mkdocs-jupyter"]

    def takes(uri):
        return jupyter.should_include(File(uri, config.docs_dir, config.site_dir, True))

    assert takes("notebooks/demo.ipynb")
    for uri in ("verification/runs/notebooks/X.ipynb", "assets/notebooks/X.ipynb", "notebooks/deeper/X.ipynb"):
        assert not takes(uri), uri


@pytest.mark.parametrize("out", [str(RUNS / "notebooks"), str(RUNS / "sub" / "deeper"), "docs/notebooks", "docs"])
def test_run_refuses_an_out_folder_the_site_would_publish_unescaped(tmp_path, out):
    root = make_root(tmp_path / "root")
    cmd = [sys.executable, "-m", "errbook.cli", "--root", str(root), "run", "RMN-0001", "--tier", "static",
           "--no-progress", "--no-ledger", "--out", out]
    r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"--out {out}:" in r.stderr and "docs/verification/runs" in r.stderr, r.stderr
    assert not (root / out).exists() or not any((root / out).rglob("*.ipynb"))


# --- M3 (symlinks), L10 (forged block markers), L11 (hand-written entry pages): one build -----------------------

@pytest.fixture(scope="module")
def hostile_docs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("docs")
    root = make_root(tmp / "root", with_docs=True)
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET-8101\n")
    (outside / "run.ipynb").write_text(notebook("SECRET-NB-8102"))
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[http]\n\textraheader = AUTHORIZATION: basic TOKEN-8103\n")
    docs, runs = root / "docs", root / RUNS
    runs.mkdir(parents=True)
    os.symlink(outside / "secret.txt", docs / "assets" / "leak.txt")                  # a file outside the checkout
    os.symlink(outside, docs / "assets" / "outdir")                                   # a folder outside
    os.symlink(outside / "run.ipynb", runs / "RMN-0001--cuda-NVIDIA-H200.ipynb")      # a "run" from outside
    os.symlink("../../.git/config", docs / "assets" / "config.txt")                   # inside the checkout, not docs/
    (docs / "assets" / "real.txt").write_text("REAL-ASSET-8104\n")
    os.symlink("real.txt", docs / "assets" / "alias.txt")                             # inside docs/: fine
    # L10: entry text that spells the pre-rendered block marker of 7969f27.
    entry = root / "errata" / "compile" / "RMN-0001.yaml"
    data = yaml.safe_load(entry.read_text(encoding="utf-8"))
    data["title"] = "Forged ERRBOOKRAW0X marker"
    entry.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    # L11: a hand-written page at the generated entry page's address.
    (docs / "entries").mkdir()
    (docs / "entries" / "RMN-0001.md").write_text("# HAND-WRITTEN-8105\n")
    r = build(root, tmp / "out")
    return root, tmp / "out", r


def test_symlinks_out_of_docs_are_not_published(hostile_docs):
    root, out, r = hostile_docs
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    got = findings(r)
    for name in ("docs/assets/leak.txt", "docs/assets/outdir/secret.txt", "docs/assets/outdir/run.ipynb",
                 f"{RUNS}/RMN-0001--cuda-NVIDIA-H200.ipynb", "docs/assets/config.txt"):
        assert any(f.startswith(f"not publishing {name}: it leads outside docs/") for f in got), (name, got)
    files = [p for p in out.rglob("*") if p.is_file()]
    text = "".join(p.read_text(errors="replace") for p in files if p.suffix != ".gz")
    for secret in ("TOP-SECRET-8101", "SECRET-NB-8102", "TOKEN-8103"):
        assert secret not in text, secret
    assert not (out / "verification/runs/RMN-0001--cuda-NVIDIA-H200").exists()
    assert (out / "assets/alias.txt").read_text() == "REAL-ASSET-8104\n"        # a link inside docs/ still works


def test_entry_text_cannot_forge_a_pre_rendered_block(hostile_docs):
    _, out, r = hostile_docs
    assert r.returncode == 0, r.stderr[-3000:]
    html = (out / "entries/RMN-0001/index.html").read_text(encoding="utf-8")
    h1 = re.sub(r'<a class="headerlink".*?</a>', "", re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S).group(1))
    h1 = re.sub(r'<span class="eb-title-short".*?</span>', "", h1)       # the phone heading (title_short)
    assert re.sub(r"<[^>]+>", "", h1).strip() == "Forged ERRBOOKRAW0X marker", h1[:300]
    assert not re.search(r"ERRBOOKRAW[0-9a-f]+N\d+X", html)                     # every real marker was filled


def test_raw_block_markers_carry_a_nonce():
    from errbook.web import escape
    a, b = escape.RawBlocks(), escape.RawBlocks()
    ma, mb = a.put("<pre>A</pre>"), b.put("<pre>B</pre>")
    assert ma != mb
    page = f"<p>{ma}</p><p>{mb}</p><p>ERRBOOKRAW0X</p>"
    assert a.fill(page) == f"<pre>A</pre><p>{mb}</p><p>ERRBOOKRAW0X</p>"


def test_hand_written_entry_page_gets_a_finding_and_the_generated_page_wins(hostile_docs):
    _, out, r = hostile_docs
    assert r.returncode == 0, r.stderr[-3000:]
    assert any(f.startswith("docs/entries/RMN-0001.md is replaced by the page errbook generates")
               for f in findings(r)), r.stderr[-3000:]
    html = (out / "entries/RMN-0001/index.html").read_text(encoding="utf-8")
    assert "HAND-WRITTEN-8105" not in html and "Forged ERRBOOKRAW0X marker" in html


# --- L4: two runs of one entry never show a reader half a notebook ----------------------------------------------

GATED = """import os, pathlib, time
sync = pathlib.Path(os.environ["ERRBOOK_ROOT"]) / "sync"
(sync / f"started-{os.getpid()}").touch()
ceiling = time.monotonic() + 900
while not (sync / "go").exists() and time.monotonic() < ceiling:
    time.sleep(0.05)

@rb.check("static", "fine")
def _():
    assert True
"""


@pytest.mark.slow
def test_concurrent_runs_of_one_entry_publish_whole_notebooks(tmp_path):
    """Both runs block mid-notebook (papermill has written the cells so far). While they do, the published
    notebook must not exist yet, and each run writes a file of its own; afterwards one whole notebook is there
    and nothing else."""
    from errbook.kb import scaffold
    root = make_root(tmp_path / "root")
    d = dict(yaml.safe_load(BASE_ENTRY.read_text(encoding="utf-8")), id="RMN-0002", aliases=[], related=[])
    d["verification"] = {"runbook": "runbooks/compile/RMN-0002.ipynb", "tiers": ["static"]}
    (root / "errata" / "compile" / "RMN-0002.yaml").write_text(yaml.safe_dump(d, allow_unicode=True))
    scaffold.write_notebook(root / "runbooks" / "compile" / "RMN-0002.ipynb",
                            scaffold.build_notebook("RMN-0002", "t", "i", [("code", GATED)]))
    (root / "sync").mkdir()
    runs = root / RUNS
    cmd = [sys.executable, "-m", "errbook.cli", "--root", str(root), "run", "RMN-0002", "--tier", "static",
           "--record", "--no-progress", "--json", "--timeout", "900"]     # --record: the published notebook
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
             for _ in range(2)]
    try:
        ceiling = time.monotonic() + 600                       # only catches a hang; the event is what we wait on
        while len(list((root / "sync").glob("started-*"))) < 2:
            if time.monotonic() > ceiling:                     # a hang, not a slow machine
                pytest.fail("the runbooks never started")
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
            time.sleep(0.1)
        in_progress = sorted(p.name for p in runs.iterdir())
        visible = sorted(runs.glob("RMN-0002--*.ipynb"))
        (root / "sync" / "go").touch()
        results = [p.communicate(timeout=600) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.communicate()
    assert visible == [], f"a run in progress is published: {visible}"
    assert len(in_progress) == 2, in_progress                 # one file per run, not one shared
    for p, (so, se) in zip(procs, results, strict=True):
        assert p.returncode == 0, se.decode()[-2000:]
        assert json.loads(so)["records"][0]["outcome"] == "passed"
    left = sorted(runs.iterdir())
    assert len(left) == 1 and left[0].name.startswith("RMN-0002--") and left[0].suffix == ".ipynb", left
    nb = json.loads(left[0].read_text(encoding="utf-8"))
    assert all(c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code")   # a whole run
