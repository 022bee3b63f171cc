"""A badge is only for the content it verified: ledger records carry a digest of the entry's signatures, checks,
fix, verification and runbook code; pages, `errbook ledger` and `errbook run --changed` compare it with the
entry as it is now (issue 26)."""
import json

import nbformat
import pytest
import yaml

from conftest import REPO, build, errbook, make_root
from errbook.kb import entries, verified


def _entry(root):
    return next(e for e in entries.load_all(root)[0] if e.id == "RMN-0001")


def _edit_entry(root, fn):
    p = root / "errata" / "compile" / "RMN-0001.yaml"
    d = yaml.safe_load(p.read_text(encoding="utf-8"))
    fn(d)
    p.write_text(yaml.safe_dump(d, allow_unicode=True, sort_keys=False), encoding="utf-8")


def test_digest_covers_what_a_run_verifies_and_nothing_else(mini_root):
    before = verified.digest(_entry(mini_root), mini_root)
    assert verified.digest(_entry(mini_root), mini_root) == before                       # deterministic
    _edit_entry(mini_root, lambda d: d.update(title=d["title"] + " (reworded)", summary="Other words."))
    assert verified.digest(_entry(mini_root), mini_root) == before                       # prose: unchanged
    nbp = mini_root / "runbooks" / "compile" / "RMN-0001.ipynb"
    nb = nbformat.read(nbp, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("A note for readers."))
    nbformat.write(nb, nbp)
    assert verified.digest(_entry(mini_root), mini_root) == before                       # Markdown: unchanged
    changes = [lambda d: d["signatures"][0].update(pattern=d["signatures"][0]["pattern"] + "|another message"),
               lambda d: d["fix"][0].update(step=d["fix"][0]["step"] + " Then rebuild."),
               lambda d: d["verification"].update(tiers=["static"])]
    seen = {before}
    for change in changes:
        _edit_entry(mini_root, change)
        now = verified.digest(_entry(mini_root), mini_root)
        assert now not in seen
        seen.add(now)
    nb.cells.append(nbformat.v4.new_code_cell("print('one more check')"))
    nbformat.write(nb, nbp)
    assert verified.digest(_entry(mini_root), mini_root) not in seen                      # runbook code


def test_marking_a_check_as_confirm_keeps_the_digest_moving_or_rewording_it_does_not(mini_root):
    """kind: confirm and expect say how the page presents a step; no runbook reads them (kb/verified.py). Adding
    them keeps an entry verified; changing the step's text, code or place among the steps un-verifies it."""
    before = verified.digest(_entry(mini_root), mini_root)
    _edit_entry(mini_root, lambda d: d["fix"][0].update(kind="confirm", expect="error: no such file",
                                                        expect_zh="error: no such file（找不到文件）"))
    assert _entry(mini_root)["fix"][0]["kind"] == "confirm"                          # the edit took
    assert verified.digest(_entry(mini_root), mini_root) == before
    _edit_entry(mini_root, lambda d: d["fix"][0].update(expect="another output"))
    assert verified.digest(_entry(mini_root), mini_root) == before
    seen = {before}
    for change in (lambda d: d["fix"][0].update(step=d["fix"][0]["step"] + " Run it twice."),
                   lambda d: d["fix"].append(d["fix"].pop(0))):                   # the check moved to the end
        _edit_entry(mini_root, change)
        now = verified.digest(_entry(mini_root), mini_root)
        assert now not in seen
        seen.add(now)


def _record(root, **kw):
    rec = {"entry": "RMN-0001", "runbook": "runbooks/compile/RMN-0001.ipynb", "outcome": "passed",
           "tiers": {"static": {"outcome": "passed"}, "toolchain": {"outcome": "passed"}},
           "requested_tiers": "static,toolchain", "fingerprint": {"platform": "cpu"},
           "platform_label": "CPU (no GPU)", "date": "2026-11-30T00:00:00Z", "commit": "abc1234"}
    rec.update(kw)
    return rec


@pytest.mark.slow
def test_pages_show_an_earlier_version_for_an_old_digest_and_ignore_a_forged_mark(tmp_path):
    root = make_root(tmp_path / "root", with_docs=True)
    old = "v1:" + "0" * 64
    recs = [_record(root, digest=old),                                # made before the entry changed
            _record(root, current=True, date="2026-12-01T00:00:00Z",   # no digest, claims to be current
                    fingerprint={"platform": "cuda", "gpu": "NVIDIA H200"}, platform_label="CUDA · NVIDIA H200",
                    tiers={"gpu": {"outcome": "passed"}}, requested_tiers="gpu")]
    (root / "runbooks" / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    r = build(root, tmp_path / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    html = (tmp_path / "out" / "entries" / "RMN-0001" / "index.html").read_text(encoding="utf-8")
    assert "eb-badge eb-passed" not in html
    assert "static: earlier version" in html                                # the fix box badge
    assert "passed · earlier version" in html
    matrix = (tmp_path / "out" / "verification" / "index.html").read_text(encoding="utf-8")
    matrix = matrix[matrix.index("<table"):]                                     # the cells, not the legend
    assert "eb-badge eb-passed" not in matrix and "passed · earlier version" in matrix
    overview = (tmp_path / "out" / "overview" / "index.html").read_text(encoding="utf-8")
    assert "verified an earlier version" in overview and "verified without AMD GPU" not in overview

    # the same record at the entry's current digest is a pass again
    recs[0]["digest"] = verified.digest(_entry(root), root)
    (root / "runbooks" / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert build(root, tmp_path / "out2").returncode == 0
    html = (tmp_path / "out2" / "entries" / "RMN-0001" / "index.html").read_text(encoding="utf-8")
    assert "static: passed (CPU)" in html and "gpu: passed" not in html


def test_ledger_command_marks_records_of_earlier_versions(mini_root):
    cur = verified.digest(_entry(mini_root), mini_root)
    recs = [_record(mini_root, digest=cur), _record(mini_root, digest="v1:" + "1" * 64), _record(mini_root)]
    (mini_root / "runbooks" / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    r = errbook("ledger", "--json", root=mini_root)
    assert r.returncode == 0, r.stderr
    assert [x["current"] for x in json.loads(r.stdout)["records"]] == [True, False, False]
    text = errbook("ledger", root=mini_root).stdout.decode().splitlines()
    assert ["earlier version" in line for line in text] == [False, True, True]
    bad = dict(recs[0], digest="sha1:abc")
    (mini_root / "runbooks" / "ledger.jsonl").write_text(json.dumps(bad) + "\n")
    r = errbook("ledger", root=mini_root)
    assert r.returncode == 1 and b"ledger.jsonl:1: digest: must be a content digest" in r.stderr


@pytest.mark.slow
def test_run_changed_reruns_only_what_has_no_record_at_its_digest(mini_root):
    def pending():
        r = errbook("run", "--changed", "--tier", "static", "--dry-run", root=mini_root)
        return r.returncode, r.stdout.decode().split()

    assert pending() == (1, ["RMN-0001"])                                       # never run
    r = errbook("run", "RMN-0001", "--tier", "static", "--no-progress", "--record", root=mini_root, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rec = json.loads((mini_root / "runbooks" / "ledger.jsonl").read_text().splitlines()[-1])
    assert rec["digest"] == verified.digest(_entry(mini_root), mini_root)
    assert pending() == (0, [])                                                 # recorded at this digest
    r = errbook("run", "--changed", "--tier", "static", "--no-progress", root=mini_root)
    assert r.returncode == 0 and b"nothing to run" in r.stdout, r.stdout + r.stderr
    _edit_entry(mini_root, lambda d: d["fix"][0].update(step=d["fix"][0]["step"] + " Then rebuild."))
    assert pending() == (1, ["RMN-0001"])                                       # the fix changed


def test_every_entry_has_a_record_at_its_current_content_for_the_cpu_tiers():
    """The CI gate: an entry or runbook changed without re-running it (`errbook run --changed --tier
    static,toolchain`) and committing the ledger fails here, for the tiers this machine can run."""
    r = errbook("run", "--changed", "--tier", "static,toolchain", "--dry-run", root=REPO)
    assert r.returncode == 0, ("errbook run --changed --tier static,toolchain --record, and commit the ledger, for: "
                               + r.stdout.decode().replace("\n", " "))
