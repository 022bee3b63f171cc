"""Drafts and broken saves: a fresh `errbook new` entry previews under a Draft banner in serve mode and is left
out of the publication build; an entry that does not load shows its error on its page in serve mode (the rebuild
does not fail, so requests do not hang); validate reports drafts as drafts and checks single files."""
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import errbook
from errbook.web import livepreview

SERVE_BUILD = """
import sys
from mkdocs.commands.build import build
from mkdocs.config import load_config
cfg = load_config(sys.argv[1] + "/mkdocs.yml", site_dir=sys.argv[2])
cfg.plugins.on_startup(command="serve", dirty=False)
build(cfg, serve_url="http://127.0.0.1:8000/")
"""


def serve_build(root: Path, out: Path) -> subprocess.CompletedProcess:
    """The build `mkdocs serve` (so `errbook serve`) makes, without the server."""
    return subprocess.run([sys.executable, "-c", SERVE_BUILD, str(root), str(out)], capture_output=True, text=True,
                          cwd=root, timeout=600)


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.fixture
def with_draft(site_root):
    r = errbook("new", "runtime", r"C:\ROCm\bin\hipcc.exe fails", "--json", root=site_root)
    assert r.returncode == 0, r.stderr
    return site_root, json.loads(r.stdout)["entry"]


@pytest.mark.slow
def test_a_fresh_draft_previews_with_a_banner(with_draft, tmp_path):
    root, _ = with_draft
    r = serve_build(root, tmp_path / "out")
    assert r.returncode == 0, r.stderr[-3000:]
    page = text(tmp_path / "out" / "entries" / "RMN-0002" / "index.html")
    banner = page.index('class="admonition warning"')
    assert "Draft" in page[banner:banner + 300] and banner < page.index("eb-cause")    # at the top, under the title
    assert "RMN-0002" not in text(tmp_path / "out" / "assets" / "errbook" / "signatures.js")
    assert "RMN-0002 is a draft" in r.stderr or "RMN-0002.yaml is a draft" in r.stderr


@pytest.mark.slow
def test_publication_build_leaves_drafts_out_quietly(with_draft, tmp_path):
    root, _ = with_draft
    r = errbook("build", "--site-dir", str(tmp_path / "out"), root=root)
    out = r.stdout.decode() + r.stderr.decode()
    assert r.returncode == 0, out[-3000:]
    assert not (tmp_path / "out" / "entries" / "RMN-0002").exists()
    assert (tmp_path / "out" / "entries" / "RMN-0001" / "index.html").is_file()
    assert "RMN-0002" not in text(tmp_path / "out" / "assets" / "errbook" / "signatures.js")
    assert "RMN-0002" not in text(tmp_path / "out" / "overview" / "index.html")
    # build noise (issue 31 item 4): no line per page left out of the nav, no jieba start-up lines
    assert "not included in the" not in out
    assert not [ln for ln in out.splitlines() if "prefix dict" in ln.lower() or "Loading model" in ln], out[-2000:]
    assert "1 draft(s) left out of the site: RMN-0002" in out


@pytest.mark.slow
def test_a_broken_save_shows_an_error_page_in_serve_mode(site_root, tmp_path):
    entry = site_root / "errata" / "compile" / "RMN-0001.yaml"
    entry.write_text(text(entry) + "\nsummary: [unclosed\n", encoding="utf-8")
    r = serve_build(site_root, tmp_path / "out")
    assert r.returncode == 0, r.stderr[-3000:]
    page = text(tmp_path / "out" / "entries" / "RMN-0001" / "index.html")
    assert "cannot be shown" in page and "errata/compile/RMN-0001.yaml:" in page
    assert "errata/compile/RMN-0001.yaml:" in r.stderr                 # file:line on the terminal too
    r = errbook("build", "--site-dir", str(tmp_path / "strict"), root=site_root)     # publication stays strict
    assert r.returncode == 1 and b"RMN-0001.yaml" in r.stderr


SERVE_TWICE = """
import shutil, sys
from pathlib import Path
from mkdocs.commands.build import build
from mkdocs.config import load_config
root, out, edit, old, new = sys.argv[1:6]
cfg = load_config(root + "/mkdocs.yml", site_dir=out)
cfg.plugins.on_startup(command="serve", dirty=False)
build(cfg, serve_url="http://127.0.0.1:8000/")
shutil.copytree(out, out + ".first")
Path(edit).write_text(Path(edit).read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
print("SECOND", file=sys.stderr, flush=True)
build(load_config(root + "/mkdocs.yml", site_dir=out), serve_url="http://127.0.0.1:8000/")   # as mkdocs serve does
"""


@pytest.mark.slow
def test_serve_rebuild_reuses_unchanged_entry_pages(with_draft, tmp_path):
    root, draft = with_draft
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-c", SERVE_TWICE, str(root), str(out), draft, "hipcc.exe fails",
                        "hipcc.exe fails again"], capture_output=True, text=True, cwd=root, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    second = r.stderr.split("SECOND", 1)[1]
    assert "1 unchanged entry page(s) reused, 1 rendered" in second, second[-2000:]
    first = tmp_path / "out.first"
    page = "entries/RMN-0001/index.html"
    assert text(out / page) == text(first / page)                          # reused: the very same page
    assert "hipcc.exe fails again" in text(out / "entries/RMN-0002/index.html")
    assert "hipcc.exe fails again" not in text(first / "entries/RMN-0002/index.html")


class FakeServer:
    """The parts of mkdocs.livereload.LiveReloadServer the wrapper uses."""

    def __init__(self, root: Path):
        self.root = str(root)
        self._epoch_cond = threading.Condition()
        self._visible_epoch = self._wanted_epoch = 1


def test_the_real_server_has_what_the_preview_wrapper_uses(tmp_path):
    from mkdocs.livereload import LiveReloadServer
    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path))
    try:
        assert livepreview.supported(server)
    finally:
        server.server_close()


def test_requests_are_answered_from_the_last_build_while_rebuilding(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("old")
    server = FakeServer(site)
    seen = {}

    def build():
        (site / "index.html").unlink()                    # as MkDocs empties the site first
        seen["root"] = server.root
        seen["waits"] = server._wanted_epoch != server._visible_epoch
        seen["served"] = (Path(server.root) / "index.html").read_text()
        (site / "index.html").write_text("new")

    server._wanted_epoch = 2                              # what _build_loop sets before it calls the builder
    livepreview.answering_while_rebuilding(server, build)()
    assert seen == {"root": seen["root"], "waits": False, "served": "old"} and seen["root"] != str(site)
    assert server.root == str(site) and server._wanted_epoch == 2          # the reload follows
    assert not Path(seen["root"]).exists()                                 # the snapshot is gone

    def broken():
        raise RuntimeError("a plugin failed")

    server._visible_epoch, server._wanted_epoch = 2, 3
    livepreview.answering_while_rebuilding(server, broken)()               # no exception: MkDocs would hang
    assert server.root != str(site) and (Path(server.root) / "index.html").read_text() == "new"
    assert server._wanted_epoch == server._visible_epoch == 2


def _two_entries(root: Path) -> tuple[str, str]:
    good = root / "errata" / "compile" / "RMN-0001.yaml"
    bad = root / "errata" / "compile" / "RMN-0003.yaml"
    bad.write_text(text(good).replace("id: RMN-0001", "id: RMN-0003").replace("priority: ", "priority: 9#", 1),
                   encoding="utf-8")
    return str(good), str(bad)


def test_validate_checks_only_the_files_given(mini_root):
    good, bad = _two_entries(mini_root)
    r = errbook("validate", good, "--json", root=mini_root)
    assert r.returncode == 0 and json.loads(r.stdout)["entries"] == 1, r.stdout
    r = errbook("validate", bad, "--json", root=mini_root)
    found = json.loads(r.stdout)["findings"]
    assert r.returncode == 1 and found and {f["file"] for f in found} == {"errata/compile/RMN-0003.yaml"}
    r = errbook("validate", "--json", root=mini_root)                      # everything: the same finding
    assert r.returncode == 1 and {f["file"] for f in json.loads(r.stdout)["findings"]} == {f["file"] for f in found}


def test_validate_file_still_runs_the_cross_checks(mini_root):
    good = mini_root / "errata" / "compile" / "RMN-0001.yaml"
    twin = mini_root / "errata" / "compile" / "RMN-0004.yaml"
    twin.write_text(text(good), encoding="utf-8")                          # id RMN-0001 twice
    r = errbook("validate", str(twin), root=mini_root)
    assert r.returncode == 1 and b"RMN-0004.yaml:2: id: 'RMN-0001' is already used by" in r.stdout


@pytest.mark.parametrize("name", ["README.md", "errata/releases.yaml", "errata/compile/RMN-0999.yaml"])
def test_validate_refuses_what_is_not_an_entry_file(mini_root, name):
    (mini_root / "README.md").write_text("x")
    r = errbook("validate", str(mini_root / name), root=mini_root)
    assert r.returncode == 2 and b"Traceback" not in r.stderr


def test_validate_reports_drafts_as_drafts_unless_strict(mini_root):
    r = errbook("new", "runtime", "Something breaks", "--json", root=mini_root)
    path = json.loads(r.stdout)["entry"]
    r = errbook("validate", "--json", root=mini_root)
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["findings"] == []
    assert {f["file"] for f in out["draft_notes"]} == {"errata/runtime/RMN-0002.yaml"}
    assert any("TODO" in f["message"] for f in out["draft_notes"])
    r = errbook("validate", path, "--strict", root=mini_root)
    assert r.returncode == 1 and b"RMN-0002.yaml:1: draft: a draft" in r.stdout


def test_pre_commit_hook_validates_changed_entries(mini_root):
    import re

    import yaml

    from conftest import REPO
    hooks = {h["id"]: h for repo in yaml.safe_load(text(REPO / ".pre-commit-config.yaml"))["repos"]
             for h in repo["hooks"]}
    hook = hooks["errbook-validate-entries"]
    assert hook["entry"] == "errbook validate" and hook.get("pass_filenames", True)
    files = re.compile(hook["files"])
    assert files.search("errata/runtime/RMN-0090.yaml") and not files.search("errata/corpus/benign/x.yaml")
    assert not files.search("errata/releases.yaml")
    good, bad = _two_entries(mini_root)
    # pre-commit runs the entry with the changed files appended, from the checkout's root
    args = hook["entry"].split()[1:]
    assert errbook(*args, good, root=mini_root).returncode == 0
    assert errbook(*args, good, bad, root=mini_root).returncode == 1
