"""The package's shape, as docs/architecture.md describes it: parts that import only the parts below them, no import
cycle, no module over 600 lines, no function at radon complexity rank E or F, and no module named like a module of
the standard library (a script run from its folder, or a folder on sys.path, would shadow it)."""
import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "scripts" / "errbook"
# bottom to top: a module may import its own part and the parts before it
LAYERS = ("common", "kb", "machine", "triage", "runbooks", "web", "cli")
# the module of kb that uses the other parts' checkers of their own data (docs/architecture.md)
ABOVE_THEIR_PART = {"errbook.kb.validate": {"machine", "triage"}, "errbook.kb.msgvalidate": {"machine", "triage"}}
MAX_LINES = 600


def _name(p: Path) -> str:
    parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _imports(path: Path) -> set[str]:
    """errbook modules a module imports, at the top or inside a function."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "errbook":
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                out.add(sub if sub in MODULES else node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "errbook"}
    return {m for m in out if m in MODULES}


GRAPH = {m: _imports(p) - {m} for m, p in MODULES.items()}


def _part(module: str) -> str | None:
    bits = module.split(".")
    return bits[1] if len(bits) > 1 and bits[1] in LAYERS else None


def test_the_parts_are_the_documented_ones():
    assert {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").is_file()} == set(LAYERS)
    assert all(_part(m) or m.count(".") <= 1 for m in MODULES), "a module outside the parts, below errbook/"


def test_no_import_cycle():
    seen: dict[str, int] = {}          # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        seen[m] = 1
        for d in sorted(GRAPH[m]):
            if seen.get(d) == 1:
                pytest.fail("import cycle: " + " -> ".join(path[path.index(d):] + [d]))
            if d not in seen:
                visit(d, path + [d])
        seen[m] = 2

    for m in MODULES:
        if m not in seen:
            visit(m, [m])


def test_each_part_imports_only_the_parts_below_it():
    wrong = []
    for m, deps in sorted(GRAPH.items()):
        pm = _part(m)
        for d in sorted(deps):
            pd = _part(d)
            if pm is None or pd is None or LAYERS.index(pd) <= LAYERS.index(pm):
                continue
            if pd not in ABOVE_THEIR_PART.get(m, set()):
                wrong.append(f"{m} ({pm}) imports {d} ({pd})")
    assert not wrong, "\n".join(wrong)


def test_the_top_level_modules_import_nothing_above_them():
    """errbook/__init__ and errbook/errors are imported by every part; __main__ is the command."""
    for m in ("errbook", "errbook.errors"):
        assert GRAPH[m] == set(), (m, GRAPH[m])


def test_no_module_over_600_lines():
    big = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not big, big


def test_no_module_named_like_a_standard_library_module():
    clash = sorted(m for m in MODULES if m.rsplit(".", 1)[-1] in sys.stdlib_module_names)
    dirs = sorted(p.name for p in PKG.rglob("*") if p.is_dir() and p.name in sys.stdlib_module_names)
    assert not clash and not dirs, (clash, dirs)


def test_no_function_at_complexity_rank_e_or_f():
    radon = shutil.which("radon") or str(Path(sys.executable).with_name("radon"))
    if not Path(radon).is_file():
        pytest.fail("radon is not installed: pip install -e '.[test]'")
    r = subprocess.run([radon, "cc", "-s", "-n", "E", str(PKG)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "", r.stdout
