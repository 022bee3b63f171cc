"""Issue 28 M1: verification.parameters names are written into the runbook as Python (`name = value`), so a
name that is not an identifier ran as code. The schema, validate and the runner must all refuse it."""
from pathlib import Path

import pytest
import yaml

from conftest import errbook, make_root


def _root_with_params(tmp: Path, params: dict) -> tuple[Path, str]:
    """A checkout whose RMN-0002 (a copy of RMN-0001, same runbook) has these verification.parameters."""
    root = make_root(tmp / "root")
    data = yaml.safe_load((root / "errata" / "compile" / "RMN-0001.yaml").read_text(encoding="utf-8"))
    data.update(id="RMN-0002", aliases=[])
    data["verification"]["parameters"] = params
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    (root / "errata" / "compile" / "RMN-0002.yaml").write_text(text, encoding="utf-8")
    return root, text


def _param_line(text: str, name: str) -> int:
    """Line of a parameter's key (below `parameters:`; 'class' is also a top-level key)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "parameters:")
    needle = "PWNED" if "PWNED" in name else name
    return next(i for i, line in enumerate(lines[start:], start + 1) if needle in line)


def _injection(sentinel: Path) -> str:
    return f"x = 1; open({str(sentinel)!r}, 'w').write('ran'); y"


BAD = [
    ("code", None, "not a Python identifier"),          # the name is replaced by the injection below
    ("class", 1, "is a Python keyword"),
    ("None", 1, "is a Python keyword"),
    ("2fast", 1, "not a Python identifier"),
    ("offload arch", "gfx90a", "not a Python identifier"),
    ("nested", {"a": 1}, "must be a string, number, boolean, null or a list of those"),
    ("deep_list", [[1, 2]], "must be a string, number, boolean, null or a list of those"),
]


@pytest.mark.parametrize("name,value,msg", BAD, ids=[b[0] for b in BAD])
def test_validate_names_the_bad_parameter_with_its_line(tmp_path, name, value, msg):
    if name == "code":
        name, value = _injection(tmp_path / "PWNED"), 1
    root, text = _root_with_params(tmp_path, {"offload_arch": "gfx90a", name: value})
    r = errbook("validate", root=root)
    out = r.stdout.decode()
    assert r.returncode == 1 and b"Traceback" not in r.stderr, (out, r.stderr[-500:])
    key_line = _param_line(text, name)
    hits = [line for line in out.splitlines() if msg in line]
    assert hits, out
    assert hits[0].startswith(f"errata/compile/RMN-0002.yaml:{key_line}: verification.parameters."), hits
    assert "offload_arch" not in out          # the good parameter is not reported


def test_the_schema_itself_refuses_the_names_and_accepts_plain_ones(tmp_path):
    """Editors and other tools read entry.schema.json alone: it must say the same."""
    from errbook.kb import usable
    good = {"offload_arch": "gfx90a", "_n2": 3, "ratio": 0.5, "on": True, "none": None, "archs": ["gfx90a", 1]}
    data = yaml.safe_load((make_root(tmp_path / "r") / "errata" / "compile" / "RMN-0001.yaml").read_text())
    data["verification"]["parameters"] = good
    assert not list(usable._validator().iter_errors(data))
    for name, value, _ in BAD:
        name = _injection(tmp_path / "PWNED") if name == "code" else name
        data["verification"]["parameters"] = {name: 1 if value is None else value}
        errs = list(usable._validator().iter_errors(data))
        assert errs and list(errs[0].absolute_path)[:2] == ["verification", "parameters"], name


def test_errbook_run_does_not_execute_a_parameter_name(tmp_path):
    sentinel = tmp_path / "PWNED"
    root, _ = _root_with_params(tmp_path, {"offload_arch": "gfx90a", _injection(sentinel): 1})
    r = errbook("run", "RMN-0002", "--no-ledger", "--no-progress", "--tier", "static", "--timeout", "300",
                "--out", str(tmp_path / "out"), root=root)
    assert not sentinel.exists(), "the parameter name ran as Python"
    assert r.returncode == 2 and b"Traceback" not in r.stderr, r.stderr[-800:]
    assert b"RMN-0002" in r.stderr and b"verification.parameters" in r.stderr, r.stderr[-800:]


def test_the_runner_refuses_an_entry_that_was_never_validated(tmp_path):
    """Defence in depth: run_one is handed an entry straight from the loader (as a script or another command
    could) and must refuse it before papermill starts."""
    from errbook.kb import entries
    from errbook.runbooks import runner
    sentinel = tmp_path / "PWNED"
    root, _ = _root_with_params(tmp_path, {_injection(sentinel): 1})
    e = entries.load_file(root / "errata" / "compile" / "RMN-0002.yaml", root)
    assert isinstance(e, entries.Entry)
    with pytest.raises(ValueError, match="not a Python identifier"):
        runner.run_one(e, root, "static", 300, tmp_path / "out")
    assert not sentinel.exists(), "the parameter name ran as Python"
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
