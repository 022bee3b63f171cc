"""Issue 28 M4: a reversed or malformed version range ('<6..2', '>=6..1', '>=7,<6') passed the schema and
validate, then crashed triage (traceback, exit 1), stale (traceback) and doctor ("internal error" for every
machine). validate must name file:line: field, the schema must refuse what the parser cannot read, and every
reader must go on with the other entries."""
import json
import re
import shutil
import subprocess

import pytest
import yaml

from conftest import REPO, errbook, make_root

MALFORMED = ["<6..2", ">=6..1", ">=6.", "~6", "!6", ">=6,,<7", "=> 6", ">=1" + "0" * 20]
REVERSED = [">=7,<6", ">6,<6", "~=6.2,>=7", "<0"]
LOG = "fatal error: 'cuda_runtime.h' file not found\nrocm-6.2.0 installed\n"


def _root(tmp, where: str, rng: str):
    """A checkout whose RMN-0002 (a copy of RMN-0001) carries rng at one of the four places a range can be.
    Returns (root, line of the range in the file, field name validate must use)."""
    root = make_root(tmp / "root")
    data = yaml.safe_load((root / "errata" / "compile" / "RMN-0001.yaml").read_text(encoding="utf-8"))
    data.update(id="RMN-0002", aliases=[])
    t = data["triggers"]
    if where == "applies_to":
        data["applies_to"][0]["versions"] = rng
        field = "applies_to[0].versions"
    elif where == "rocm_versions":
        t["rocm_versions"] = [rng]
        field = "triggers.rocm_versions[0]"
    elif where == "frameworks":
        t["frameworks"] = [{"name": "pytorch", "versions": rng}]
        field = "triggers.frameworks[0].versions"
    else:
        t.pop("not_checkable")
        t["checks"] = [{"id": "a-check", "says": "torch is in the range",
                        "when": [{"fact": "torch.version", "version": rng}]}]
        field = "triggers.checks[0].when[0].version"
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000)
    (root / "errata" / "compile" / "RMN-0002.yaml").write_text(text, encoding="utf-8")
    quoted = [f"'{rng}'", f'"{rng}"', f" {rng}"]
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if any(ln.rstrip().endswith(q) for q in quoted))
    return root, line, field


WHERE = ["applies_to", "rocm_versions", "frameworks", "check"]


@pytest.mark.slow
@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("rng", ["<6..2", ">=6..1", ">=7,<6"])
def test_validate_names_file_line_and_field(tmp_path, where, rng):
    root, line, field = _root(tmp_path, where, rng)
    r = errbook("validate", root=root)
    out = r.stdout.decode()
    assert r.returncode == 1 and b"Traceback" not in r.stderr, (out, r.stderr[-800:])
    mine = [x for x in out.splitlines() if x.startswith(f"errata/compile/RMN-0002.yaml:{line}: {field}: ")]
    assert len(mine) == 1, out             # once, not once from the schema and once from the parser
    assert ("holds no version" if rng == ">=7,<6" else "cannot read") in mine[0]


@pytest.mark.parametrize("rng", ["<6..2", ">=6..1"])
def test_triage_skips_the_entry_and_answers(tmp_path, rng):
    root, line, _ = _root(tmp_path, "rocm_versions", rng)
    (tmp_path / "x.log").write_text(LOG)
    r = errbook("triage", "--json", str(tmp_path / "x.log"), root=root)
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr[-800:]
    assert json.loads(r.stdout)["matches"][0]["id"] == "RMN-0001"
    assert f"errata/compile/RMN-0002.yaml:{line}: triggers.rocm_versions[0]".encode() in r.stderr


@pytest.mark.parametrize("rng", ["<6..2", ">=6.,<6..2"])
def test_stale_reports_the_range_instead_of_a_traceback(tmp_path, rng):
    root, line, _ = _root(tmp_path, "applies_to", rng)
    (root / "errata" / "releases.yaml").write_text("rocm:\n  newest: '7.0'\n")
    r = errbook("stale", "--today", "2026-12-01", root=root)
    assert r.returncode == 1 and b"Traceback" not in r.stderr, r.stderr[-800:]
    assert f"errata/compile/RMN-0002.yaml:{line}: applies_to[0].versions: cannot read".encode() in r.stdout


def test_doctor_evaluates_the_other_entries(tmp_path):
    root, line, _ = _root(tmp_path, "check", ">=6..1")
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"format": "errbook-facts", "version": 1,
                                 "facts": {"torch.version": {"value": "2.5.1", "source": "test"}}}))
    r = errbook("doctor", "--facts", str(facts), "--json", root=root)
    assert r.returncode == 0 and b"internal error" not in r.stderr and b"Traceback" not in r.stderr, r.stderr[-800:]
    rep = json.loads(r.stdout)
    assert rep["counts"]["not_checkable"] == 1          # RMN-0001 was still evaluated
    assert f"errata/compile/RMN-0002.yaml:{line}: triggers.checks[0].when[0].version".encode() in r.stderr


def test_schema_pattern_is_the_parsers_and_keeps_every_real_range():
    """One grammar: the schema's version_range pattern is versions.RANGE_PATTERN; it refuses what the parser
    cannot read and accepts every range the entries in errata/ use today."""
    from errbook.kb import entries, validate, versions
    vr = json.loads((REPO / "scripts" / "errbook" / "kb" / "schema" / "entry.schema.json").read_text())
    vr = vr["$defs"]["version_range"]
    assert vr["pattern"] == versions.RANGE_PATTERN and vr["maxLength"] == versions.MAX_RANGE_CHARS
    for rng in MALFORMED:
        assert not re.search(vr["pattern"], rng), rng
        with pytest.raises(versions.RangeError):
            versions.parse_range(rng)
    loaded, _ = entries.load_all(REPO)
    real = [(e.rel, rng) for e in loaded for _, rng in validate.range_fields(e.data)]
    assert len(real) > 100
    for rel, rng in real:
        assert re.search(vr["pattern"], rng) and not versions.is_empty(rng), (rel, rng)
    for rng in REVERSED:
        assert re.search(vr["pattern"], rng) and versions.is_empty(rng), rng


NODE = shutil.which("node")


@pytest.mark.node
def test_the_page_engine_reads_ranges_as_the_cli_does(tmp_path):
    """engine.js's inRange gives the CLI's answer; where the CLI cannot read the range (RangeError) the page
    says unknown (null) instead of a guess."""
    from errbook.kb import entries, versions
    from errbook.web import bundle
    root = make_root(tmp_path / "root")
    b = bundle.build(root, entries.load_all(root)[0])
    rngs = MALFORMED + REVERSED + ["any", ">=6.2,<7.0", ">=0.46.0, <0.50.0", "==6.2", "<=7.2", "~=6.2", "!=6.1",
                                   "=6", ">20251111", "~=6"]
    vers = ["6.2.1", "6", "7.2.5", "6.1.0-abc", "v0.47", "20251112", "x", "9" * 40 + ".1", "6." + "1" * 16]
    pairs = [[v, r] for r in rngs for v in vers]

    def py(v, r):
        try:
            return versions.in_range(v, r)
        except versions.RangeError:
            return None
    req = json.dumps({"bundle": b, "ranges": pairs})
    out = subprocess.run([NODE, str(REPO / "tests" / "js" / "engine.cjs")], input=req, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == [py(v, r) for v, r in pairs]
