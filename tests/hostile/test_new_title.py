"""Issue 28 L3: `errbook new` pasted the title into YAML between double quotes. A Windows path or a trailing
backslash made unparsable YAML (or a different title), a control character an unloadable file, and all of
them said "created"; '"' silently became "'" and an empty title was accepted."""
import json
from pathlib import Path

import pytest
import yaml

from conftest import errbook, make_root

TITLES = [
    r"C:\new\temp\kernel.hip fails to compile",        # \n, \t, \k: escapes or errors in a YAML "..." string
    "hipcc fails on paths ending in \\",               # a trailing backslash escapes the closing quote
    'hipMalloc says "out of memory" after it\'s freed',
    "ROCm 6.2: #include <hip/hip_runtime.h> - [x] {y} &a *b !c %d @e `f` |g >h",
    "rocBLAS на gfx1100 — 找不到 Tensile 库 😀",
]


@pytest.mark.slow
def test_the_title_is_written_as_given_and_the_entry_loads(tmp_path):
    root = make_root(tmp_path / "root")
    for title in TITLES:
        r = errbook("new", "compile", title, "--json", root=root)
        assert r.returncode == 0, (title, r.stderr[-800:])
        out = json.loads(r.stdout)
        data = yaml.safe_load(Path(out["entry"]).read_text(encoding="utf-8"))
        assert data["title"] == title
        nb = json.loads(Path(out["runbook"]).read_text(encoding="utf-8"))
        assert title in "".join(nb["cells"][0]["source"])
    # validate reads them all: nothing about YAML or the titles, only what the author still has to write (draft
    # notes, which --strict, the publication check, counts as findings)
    v = errbook("validate", "--strict", "--json", root=root)
    found = [f for f in json.loads(v.stdout)["findings"] if f["file"] != "errata/compile/RMN-0001.yaml"]
    assert {f["file"] for f in found} == {f"errata/compile/RMN-{n:04d}.yaml" for n in range(2, 2 + len(TITLES))}
    assert not [f for f in found if f["field"] in ("", "title")], found


@pytest.mark.parametrize("title,needle", [
    ("", b"empty"),
    ("   \t  ", b"empty"),
    ("bell \x07 in a title", b"control character U+0007"),
    ("colour \x1b[31mred\x1b[0m", b"control character U+001B"),
    ("two\nlines", b"control character U+000A"),
    ("ab", b"too short"),
    ("x" * 200, b"too long"),
])
def test_a_title_no_entry_can_hold_is_a_usage_error_and_leaves_nothing(tmp_path, title, needle):
    root = make_root(tmp_path / "root")
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    r = errbook("new", "compile", title, root=root)
    assert r.returncode == 2 and needle in r.stderr and b"Traceback" not in r.stderr, r.stderr[-800:]
    assert b"created" not in r.stdout
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
