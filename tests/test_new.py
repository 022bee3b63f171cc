"""errbook new: any one-line title is written through the YAML emitter and reads back exactly; an empty title is
a usage error; what it writes is a draft that validate names as such."""
import json
from pathlib import Path

import pytest
import yaml

from conftest import errbook

HOSTILE_TITLES = [
    r"hipcc fails with a backslash \ in the path",
    r"C:\ROCm\bin\hipcc.exe: cannot find clang",
    'hipMalloc returns "out of memory" after "hipFree"',
    "error: hipErrorNoBinaryForGpu: no kernel image",
    "# not a comment, and a trailing one # here",
    "- a leading dash, as a YAML list item starts",
    "编译很慢 on gfx90a — ünïcödé “quotes” ✓",
    "yes",                     # a YAML 1.1 boolean if it were written plain
    "null",
    "0x1F",
    "'single' and `back` quotes, {braces} and [brackets], & * ! | > % @",
    r"\n is not a newline and \" is not a quote",
]


@pytest.mark.parametrize("title", HOSTILE_TITLES)
def test_hostile_title_round_trips(mini_root, title):
    r = errbook("new", "runtime", title, "--json", root=mini_root)
    assert r.returncode == 0, r.stderr
    path = json.loads(r.stdout)["entry"]
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    assert data["title"] == title
    nb = json.loads(Path(json.loads(r.stdout)["runbook"]).read_text(encoding="utf-8"))
    assert title in "".join(nb["cells"][0]["source"])
    r = errbook("validate", path, "--json", root=mini_root)     # a draft: notes, no findings
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["findings"] == [] and out["draft_notes"], r.stdout


def test_placeholder_comments_and_key_order_are_kept(mini_root):
    r = errbook("new", "compile", r"C:\ROCm\bin\hipcc.exe fails", "--json", root=mini_root)
    text = Path(json.loads(r.stdout)["entry"]).read_text(encoding="utf-8")
    keys = [ln.split(":")[0] for ln in text.splitlines() if ln and not ln.startswith((" ", "-", "#"))]
    assert keys[:5] == ["schema_version", "id", "published", "modified", "reviewed"]
    assert "TODO" in text and 'title: "C:\\\\ROCm\\\\bin\\\\hipcc.exe fails"' in text


@pytest.mark.parametrize("title", ["", "   ", "\t"])
def test_empty_title_is_a_usage_error(mini_root, title):
    r = errbook("new", "runtime", title, root=mini_root)
    assert r.returncode == 2 and b"title is empty" in r.stderr and b"Traceback" not in r.stderr
    assert not list(mini_root.glob("errata/runtime/*.yaml"))


@pytest.mark.parametrize("title", ["two\nlines", "a bell \x07 inside"])
def test_control_characters_are_refused_and_nothing_is_left(mini_root, title):
    r = errbook("new", "runtime", title, root=mini_root)
    assert r.returncode == 2 and b"control character" in r.stderr
    assert not list(mini_root.glob("errata/runtime/*.yaml")) and not list(mini_root.glob("runbooks/runtime/*"))
