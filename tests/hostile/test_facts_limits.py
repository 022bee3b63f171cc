"""Issue 28 L9 and L2 (facts): `doctor --collect` wrote lists over the 512-item limit that its own --facts then
refused; the paste page's engine read any JSON with a "facts" object; a huge "seconds" or a 4300-digit version
in a facts file gave a traceback. One limit, defined in facts.py, shipped in the bundle and read by engine.js;
collect cuts to it (and says so); everything beyond it is a clear error with exit 2."""
import base64
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, errbook, make_root

NODE = shutil.which("node")
MACHINE = json.loads((REPO / "tests" / "doctor_machines" / "cpu-laptop.json").read_text(encoding="utf-8"))


def _doc(**facts) -> dict:
    d = json.loads(json.dumps(MACHINE))
    for k, v in facts.items():
        d["facts"][k.replace("__", ".")] = {"value": v, "source": "test"}
    return d


def _js(bundle: dict, files: list) -> list:
    req = {"bundle": bundle, "read_facts": [f if isinstance(f, dict) else {"text": f} for f in files]}
    r = subprocess.run([NODE, str(REPO / "tests" / "js" / "engine.cjs")], input=json.dumps(req),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_collect_cuts_to_the_limit_its_own_reader_accepts(tmp_path):
    """600 rocBLAS targets (ROCBLAS_TENSILE_LIBPATH with 600 gfx*/ folders) is more than a facts file holds:
    --collect keeps the first 512 and says so in the fact's source, and --facts reads the file it wrote."""
    lib = tmp_path / "rocm" / "lib"
    for i in range(600):
        (lib / f"gfx{0x1000 + i:x}").mkdir(parents=True)
    env = dict(os.environ, ROCM_PATH=str(tmp_path / "rocm"), ROCBLAS_TENSILE_LIBPATH=str(lib))
    out = subprocess.run([sys.executable, "-m", "errbook.cli", "doctor", "--collect", "--no-import"],
                         capture_output=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-800:]
    fact = json.loads(out.stdout)["facts"]["rocblas.gfx"]
    assert len(fact["value"]) == 512 and "first 512 of 600" in fact["source"]
    (tmp_path / "facts.json").write_bytes(out.stdout)
    r = errbook("doctor", "--facts", str(tmp_path / "facts.json"), "--json", root=REPO)
    assert r.returncode in (0, 1) and not r.stderr.strip(), r.stderr[-800:]


CASES = [   # (name, facts file bytes or text); whether the CLI accepts each is asked of facts.parse itself
    ("machine", json.dumps(MACHINE)),
    ("list-512", json.dumps(_doc(gpu__gfx=["gfx90a"] * 512))),
    ("list-513", json.dumps(_doc(gpu__gfx=["gfx90a"] * 513))),
    ("str-8192", json.dumps(_doc(os__distro="d" * 8192))),
    ("str-8193", json.dumps(_doc(os__distro="d" * 8193))),
    ("str-8192-astral", json.dumps(_doc(os__distro="😀" * 8192))),      # 8192 code points, 16384 UTF-16 units
    ("item-8193", json.dumps(_doc(gpu__names=["n" * 8193]))),
    ("int-as-string", json.dumps(_doc(gpu__amd_count="8"))),
    ("int-2^53", json.dumps(_doc(gpu__amd_count=2 ** 53))),
    ("int-bool", json.dumps(_doc(gpu__amd_count=True))),
    ("bool-as-string", json.dumps(_doc(os__wsl="false"))),
    ("list-of-ints", json.dumps(_doc(gpu__gfx=[1, 2]))),
    ("version-4400-digits", json.dumps(_doc(torch__version="9" * 4400))),
    ("version-16-digit-part", json.dumps(_doc(torch__version="2." + "1" * 16))),
    ("version-odd-but-fine", json.dumps(_doc(torch__version="2.8.0.dev20250529+rocm6.4"))),
    ("version-not-a-number", json.dumps(_doc(torch__version="unknown"))),
    ("seconds-huge-int", json.dumps(dict(MACHINE, seconds=10 ** 4000))),
    ("seconds-inf", json.dumps(MACHINE)[:-1] + ', "seconds": 1e400}'),
    ("seconds-negative", json.dumps(dict(MACHINE, seconds=-1))),
    ("seconds-string", json.dumps(dict(MACHINE, seconds="3"))),
    ("seconds-fine", json.dumps(dict(MACHINE, seconds=3.5))),
    ("unknown-fact", json.dumps(_doc(gpu__warp_drive=True))),
    ("no-value", json.dumps(dict(MACHINE, facts={"gpu.gfx": {"source": "x"}}))),
    ("facts-list", json.dumps(dict(MACHINE, facts=[]))),
    ("format", json.dumps(dict(MACHINE, format="other"))),
    ("version-2", json.dumps(dict(MACHINE, version=2))),
    ("version-true", json.dumps(dict(MACHINE, version=True))),
    ("array", "[1, 2]"),
    ("too-big", json.dumps(MACHINE) + " " * (4 << 20)),
    ("not-utf8", b'{"format": "errbook-facts", "version": 1, "facts": {"os.distro": {"value": "\xff"}}}'),
    ("bom", b"\xef\xbb\xbf" + json.dumps(MACHINE).encode()),
]


@pytest.mark.node
def test_the_page_accepts_exactly_the_facts_files_the_cli_accepts(tmp_path):
    from errbook.kb import entries
    from errbook.machine import facts
    from errbook.web import bundle
    root = make_root(tmp_path / "root")
    b = bundle.build(root, entries.load_all(root)[0])
    files = [{"b64": base64.b64encode(c).decode()} if isinstance(c, bytes) else c for _, c in CASES]
    js = _js(b, files)
    for (name, content), page in zip(CASES, js, strict=True):
        try:
            doc = facts.parse(content.encode() if isinstance(content, str) else content, name)
            cli = None
        except facts.FactsError as e:
            doc, cli = None, str(e)
        assert (cli is None) == (page["error"] is None), (name, cli, page["error"])
        if doc is not None:   # the same facts (the file's own, not derived ones), unknown ones left out
            src = json.loads(content)["facts"]
            assert page["values"] == {k: v["value"] for k, v in doc["facts"].items() if k in src}, name
    accepted = {n for (n, _), p in zip(CASES, js, strict=True) if p["error"] is None}
    assert accepted == {"machine", "list-512", "str-8192", "str-8192-astral", "version-odd-but-fine",
                        "version-not-a-number", "seconds-fine", "unknown-fact"}


@pytest.mark.node
def test_the_page_reads_the_limits_from_the_bundle(tmp_path):
    """Not a copy in engine.js: the bundle bundle.py builds carries the facts file's JS_SPEC, and the engine obeys
    whatever limit the bundle says."""
    from errbook.kb import entries
    from errbook.machine import facts
    from errbook.web import bundle
    root = make_root(tmp_path / "root")
    b = bundle.build(root, entries.load_all(root)[0])
    assert b["facts_format"] == facts.JS_SPEC
    b["facts_format"]["max_list"] = 3
    three, four = json.dumps(_doc(gpu__gfx=["gfx90a"] * 3)), json.dumps(_doc(gpu__gfx=["gfx90a"] * 4))
    got = _js(b, [three, four])
    assert got[0]["error"] is None and "more than 3 items" in got[1]["error"]


@pytest.mark.parametrize("name,content,needle", [
    ("seconds-huge-int", json.dumps(dict(MACHINE, seconds=10 ** 4000)), b'"seconds" must be a number'),
    ("seconds-inf", json.dumps(MACHINE)[:-1] + ', "seconds": 1e400}', b'"seconds" must be a number'),
    ("version-4400-digits", json.dumps(_doc(torch__version="9" * 4400, rocm__default_version="6" * 4400)),
     b"more than 15 digits"),
])
def test_huge_numbers_in_a_facts_file_are_a_clear_error(tmp_path, name, content, needle):
    p = tmp_path / "facts.json"
    p.write_text(content)
    (tmp_path / "x.log").write_text("fatal error: 'cuda_runtime.h' file not found\n")
    for cmd in (("doctor", "--facts", str(p)), ("triage", "--facts", str(p), str(tmp_path / "x.log"))):
        r = errbook(*cmd, root=REPO)
        assert r.returncode == 2 and needle in r.stderr, (cmd, r.stderr[-500:])
        assert b"Traceback" not in r.stderr and b"internal error" not in r.stderr, (cmd, r.stderr[-500:])


def test_a_huge_version_in_a_list_fact_is_unknown_not_a_crash(tmp_path):
    """List facts hold any strings; a version check over one with a 5000-digit number says 'could not read'
    for that item instead of int() raising inside doctor."""
    root = make_root(tmp_path / "root")
    f = root / "errata" / "compile" / "RMN-0001.yaml"
    text = f.read_text(encoding="utf-8")
    start = text.index("  not_checkable: >-")
    end = text.index("root_cause:")
    f.write_text(text[:start] + "  checks:\n    - id: old-rocm\n      says: \"an old ROCm is installed\"\n"
                 "      when:\n        - {fact: rocm.versions, version: \"<6.0\"}\n" + text[end:], encoding="utf-8")
    assert errbook("validate", root=root).returncode == 0
    p = tmp_path / "facts.json"
    p.write_text(json.dumps(_doc(rocm__versions=["9" * 5000, "5.7.1"])))
    r = errbook("doctor", "--facts", str(p), "--json", root=root)
    assert r.returncode == 1 and b"Traceback" not in r.stderr and b"internal error" not in r.stderr, r.stderr[-500:]
    assert [a["id"] for a in json.loads(r.stdout)["applies"]] == ["RMN-0001"]      # 5.7.1 is < 6.0
