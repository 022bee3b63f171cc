"""A fix list's confirm steps (`kind: confirm`, `expect`) and fix steps: what the schema and errbook validate
accept, each finding with its file, line and field (issue 27 item 9); and symptoms listed twice (item 10)."""
import re

import pytest
import yaml

from conftest import errbook
from errbook.kb import fixsteps, listdups, validate

REL = "errata/compile/RMN-0001.yaml"
CHECK = """  - kind: confirm
    step: Find the file that includes the CUDA header.
    step_zh: 找出包含 CUDA 头文件的源文件。
    code:
      lang: bash
      snippet: "grep -rn 'cuda_runtime.h' src/"
    expect: "src/k.cu:1:#include <cuda_runtime.h>"
"""
CHANGE = """  - step: Include the HIP runtime header instead of the CUDA one.
    step_zh: 把 CUDA 运行时头文件换成 HIP 运行时头文件。
    code:
      lang: cpp
      before: "#include <cuda_runtime.h>"
      after: "#include <hip/hip_runtime.h>"
"""


def with_fix(root, steps: str) -> tuple[str, list]:
    """RMN-0001 with its fix list replaced by `steps`; (the entry's text, the findings of errbook validate)."""
    p = root / "errata" / "compile" / "RMN-0001.yaml"
    text = re.sub(r"(?ms)^fix:\n.*?^(?=corrects:)", lambda _: "fix:\n" + steps, p.read_text(encoding="utf-8"))
    p.write_text(text, encoding="utf-8")
    return text, validate.validate(root)[1]


def line(text: str, needle: str, nth: int = 0) -> int:
    return [i for i, ln in enumerate(text.splitlines(), 1) if needle in ln][nth]


def test_a_confirm_step_with_its_expected_output_before_the_fix_is_valid(mini_root):
    text, f = with_fix(mini_root, CHECK + CHANGE)
    assert f == []
    entry = next(e for e in validate.usable_entries(mini_root)[0] if e.id == "RMN-0001")
    confirm, fix = fixsteps.split(entry["fix"])
    assert [s["step"][:8] for s in confirm] == ["Find the"] and [s["step"][:8] for s in fix] == ["Include "]


def test_an_unknown_kind_names_its_line(mini_root):
    text, f = with_fix(mini_root, CHECK.replace("kind: confirm", "kind: diagnose") + CHANGE)
    assert [(x.file, x.line, x.field) for x in f] == [(REL, line(text, "kind: diagnose"), "fix[0].kind")]
    assert "confirm" in f[0].message


def test_a_confirm_step_needs_code(mini_root):
    no_code = "".join(ln + "\n" for ln in CHECK.splitlines() if not ln.startswith(("    code", "      ")))
    text, f = with_fix(mini_root, no_code + CHANGE)
    assert [(x.line, x.field) for x in f] == [(line(text, "kind: confirm"), "fix[0].code")]


def test_confirm_steps_come_before_the_fix(mini_root):
    text, f = with_fix(mini_root, CHANGE + CHECK)
    assert [(x.file, x.line, x.field) for x in f] == [(REL, line(text, "kind: confirm"), "fix[1].kind")]
    assert "before the fix" in f[0].message


def test_an_entry_keeps_at_least_one_fix_step(mini_root):
    text, f = with_fix(mini_root, CHECK + CHECK.replace("src/", "include/"))
    assert [(x.line, x.field) for x in f] == [(line(text, "fix:"), "fix")]
    assert "at least one fix step" in f[0].message
    # readers rely on it: such an entry is not usable (the page's fix box would have no fix)
    usable, warnings = validate.usable_entries(mini_root)
    assert not usable and "at least one fix step" in warnings[0]


@pytest.mark.parametrize("key", ["expect", "expect_zh"])
def test_expected_output_belongs_to_a_confirm_step(mini_root, key):
    text, f = with_fix(mini_root, CHECK + CHANGE + f'    {key}: "some output"\n')
    assert [(x.line, x.field) for x in f] == [(line(text, f"{key}: \"some output\""), f"fix[1].{key}")]


def test_a_symptom_listed_twice_is_a_finding(mini_root):
    p = mini_root / "errata" / "compile" / "RMN-0001.yaml"
    text = p.read_text(encoding="utf-8")
    first = re.search(r"(?m)^symptoms_zh:\n(  - .*\n)", text).group(1)
    reworded = first.replace("报错", "报出错误") if "报错" in first else first.replace("。", "，随后停止。")
    assert reworded != first
    text = text.replace("symptoms_zh:\n" + first, "symptoms_zh:\n" + first + reworded, 1)
    p.write_text(text, encoding="utf-8")
    f = validate.validate(mini_root)[1]
    assert [(x.file, x.line, x.field) for x in f] == [(REL, line(text, reworded.strip()), "symptoms_zh[1]")]
    assert "repeats symptoms_zh[0]" in f[0].message


def test_same_frame_different_messages_are_not_repeats():
    """RMN-0051's two symptoms share a sentence but quote different builtins: both stay."""
    a = "hipcc stops with: error: '__builtin_amdgcn_wmma_...' needs target feature gfx11-insts (for gfx90a)."
    b = "hipcc stops with: error: '__builtin_amdgcn_mfma_...' needs target feature mai-insts (for gfx1100)."
    assert listdups.repeated([a, b]) == []
    assert listdups.repeated([a, b, a.upper()]) == [(2, 0, "the same text")]
    assert listdups.repeated([b, "Other words", " " + b.replace(" ", "  ")]) == [(2, 0, "the same text")]


def test_errbook_new_starts_with_a_confirm_step_then_a_fix_step(mini_root):
    r = errbook("new", "runtime", "hipFoo fails on start", root=mini_root)
    assert r.returncode == 0, r.stderr
    path = next((mini_root / "errata" / "runtime").glob("RMN-*.yaml"))
    d = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [s.get("kind") for s in d["fix"]] == ["confirm", None]
    assert {"code", "expect", "expect_zh"} <= set(d["fix"][0]) and fixsteps.problems(d["fix"]) == []
