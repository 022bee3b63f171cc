"""errbook validate: every problem is reported with the file, the exact line and the field path."""
import json
from pathlib import Path

import pytest

from conftest import errbook
from errbook.kb import usable, validate

BASE = (Path(__file__).parent.parent / "errata" / "compile" / "RMN-0001.yaml").read_text(encoding="utf-8")


def line_of(text: str, needle: str, nth: int = 0) -> int:
    lines = [i for i, ln in enumerate(text.splitlines(), 1) if needle in ln]
    return lines[nth]


def run(root: Path, text: str, name: str = "RMN-0001", klass: str = "compile"):
    (root / "errata" / klass / f"{name}.yaml").write_text(text, encoding="utf-8")
    _, findings = validate.validate(root)
    return findings


def test_real_entry_is_valid(mini_root):
    _, findings = validate.validate(mini_root)
    assert findings == []


def test_malformed_yaml_names_line(mini_root):
    text = BASE.replace("tags: [hipcc, hipify, headers, porting]", "tags: [hipcc, hipify\nsummary: oops")
    f = run(mini_root, text)
    assert len(f) == 1 and f[0].file == "errata/compile/RMN-0001.yaml"
    assert "YAML syntax" in f[0].message
    assert f[0].line == line_of(text, "summary: oops")


def test_wrong_type_names_field_and_line(mini_root):
    text = BASE.replace("    priority: 4", "    priority: high")
    f = run(mini_root, text)
    assert [(x.field, x.line) for x in f] == [("signatures[0].priority", line_of(text, "priority: high"))]
    assert "'high' is not of type 'integer'" in f[0].message


def test_missing_required_field_points_at_mapping(mini_root):
    text = BASE.replace('title_zh: "hipcc 编译未移植的 CUDA 源码时报 \'cuda_runtime.h\' file not found"\n', "")
    f = run(mini_root, text)
    assert [(x.field, x.line) for x in f] == [("title_zh", 1)]
    assert "'title_zh' is a required property" in f[0].message


def test_unknown_field(mini_root):
    text = BASE.replace("class: compile", "class: compile\nseverity: high")
    f = run(mini_root, text)
    assert [(x.field, x.line, x.message) for x in f] == [("severity", line_of(text, "severity: high"), "unknown field")]


def test_duplicate_yaml_key(mini_root):
    text = BASE.replace("class: compile", "class: compile\nclass: runtime")
    f = run(mini_root, text)
    assert len(f) == 1 and f[0].line == line_of(text, "class: runtime") and "duplicate key 'class'" in f[0].message


def test_duplicate_ids_across_files(mini_root):
    (mini_root / "errata" / "compile" / "RMN-0002.yaml").write_text(BASE, encoding="utf-8")
    _, f = validate.validate(mini_root)
    msgs = [(x.file, x.field, x.message) for x in f]
    assert ("errata/compile/RMN-0002.yaml", "id", "'RMN-0001' is already used by errata/compile/RMN-0001.yaml") in msgs
    assert ("errata/compile/RMN-0002.yaml", "id", "file name must be RMN-0001.yaml") in msgs


def test_bad_regex(mini_root):
    text = BASE.replace('pattern: "fatal error: \'?cuda', 'pattern: "fatal error: (\'?cuda')
    f = run(mini_root, text)
    assert f[0].field == "signatures[0].pattern" and f[0].line == line_of(text, "pattern: ")
    assert "does not compile" in f[0].message


@pytest.mark.parametrize("pattern, why", [
    (r"(?<=fatal) error: cuda_runtime", "lookbehind"),
    (r"(fatal)\\1 error cuda_runtime", "backreferences"),
    (r"(?:a|aa)*cuda_runtime", "alternation inside an unbounded repeat"),
    (r"(?:x+y)+ cuda_runtime", "nested repeats"),
    (r"id \\d+: \\w+", "literal of at least"),
    (r"\\d+: cuda_runtime", "starts with a wide repeat"),
    (r"cuda_runtime.*.*zzzz", "2 wide repeats that can take the same characters"),
    # JavaScript reads '[^]' as any character and '[]' as an empty class; Python and RE2 take the ']' as a member
    (r"cuda_runtime[^]x]h", "']' first in a character class"),
    (r"cuda_runtime[]x]h", "']' first in a character class"),
])
def test_non_portable_or_unsafe_regex(mini_root, pattern, why):
    import re as _re
    text = _re.sub(r'    pattern: ".*"', lambda m: f'    pattern: "{pattern}"', BASE, count=1)
    f = run(mini_root, text)
    assert any(x.field == "signatures[0].pattern" and why in x.message for x in f), f


def test_example_must_match_and_counter_example_must_not(mini_root):
    text = BASE.replace("a.hip:1:10: fatal error: 'cuda_runtime.h' file not found",
                        "a.hip:1:10: fatal error: 'cuda_runtime.hpp' missing")
    text = text.replace('- text: "-- Looking for cuda_runtime.h - found"',
                        '- text: "x.cu:1:1: fatal error: cuda_fp16.h: No such file or directory"')
    f = run(mini_root, text)
    got = {(x.field, x.line) for x in f}
    assert ("signatures[0].examples[0].text", line_of(text, "- text: |")) in got
    assert ("signatures[0].counter_examples[1].text", line_of(text, "cuda_fp16.h: No such file")) in got


def test_missing_runbook_and_dangling_related(mini_root):
    text = BASE.replace("related: []", "related: [RMN-0999]").replace(
        "runbook: runbooks/compile/RMN-0001.ipynb", "runbook: runbooks/compile/RMN-0077.ipynb")
    f = run(mini_root, text)
    got = {(x.field, x.line, x.message) for x in f}
    assert ("related[0]", line_of(text, "related: [RMN-0999]"), "no entry with id 'RMN-0999'") in got
    assert ("verification.runbook", line_of(text, "runbook: runbooks/compile/RMN-0077.ipynb"),
            "runbook file runbooks/compile/RMN-0077.ipynb does not exist") in got


def test_a_publication_or_change_time_in_the_future_is_a_finding(mini_root):
    text = BASE.replace('modified: "2026-12-07T04:04:28Z"', 'modified: "2999-01-01T00:00:00Z"')
    f = run(mini_root, text)
    assert [(x.field, x.line) for x in f if "in the future" in x.message] == [
        ("modified", line_of(text, 'modified: "2999-01-01'))]
    assert not [x for x in run(mini_root, BASE) if "in the future" in x.message]


def test_reference_must_be_primary_and_https(mini_root):
    text = BASE.replace("    kind: docs", "    kind: article").replace("    kind: issue", "    kind: article")
    text = text.replace("url: https://rocm.docs.amd.com/projects/HIPIFY/en/latest/", "url: javascript:alert(1)")
    f = run(mini_root, text)
    got = {(x.field, x.line) for x in f}
    assert ("references", line_of(text, "references:")) in got
    assert ("references[1].url", line_of(text, "url: javascript:alert(1)")) in got


def test_wrong_class_folder(mini_root):
    (mini_root / "errata" / "runtime").mkdir()
    (mini_root / "errata" / "compile" / "RMN-0001.yaml").rename(mini_root / "errata" / "runtime" / "RMN-0001.yaml")
    _, f = validate.validate(mini_root)
    assert [(x.file, x.field) for x in f] == [("errata/runtime/RMN-0001.yaml", "class")]


def test_cli_exit_codes_and_output(mini_root):
    r = errbook("validate", root=mini_root)
    assert r.returncode == 0, r.stdout + r.stderr
    text = BASE.replace("    priority: 4", "    priority: 9")
    (mini_root / "errata" / "compile" / "RMN-0001.yaml").write_text(text, encoding="utf-8")
    r = errbook("validate", root=mini_root)
    assert r.returncode == 1
    assert f"errata/compile/RMN-0001.yaml:{line_of(text, 'priority: 9')}: signatures[0].priority:" in r.stdout.decode()
    r = errbook("validate", "--json", root=mini_root)
    data = json.loads(r.stdout)
    assert data["findings"][0]["field"] == "signatures[0].priority" and r.returncode == 1
    r = errbook("validate", "--bogus", root=mini_root)
    assert r.returncode == 2


def test_scaffold_next_id_and_todo_flagged(mini_root):
    r = errbook("new", "runtime", "Something breaks", "--json", root=mini_root)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["entry"].endswith("errata/runtime/RMN-0002.yaml")
    assert Path(out["runbook"]).is_file()
    _, f = validate.validate(mini_root)
    assert any(x.file == "errata/runtime/RMN-0002.yaml" and "TODO" in x.message for x in f)


@pytest.mark.slow
def test_fast_schema_path_agrees_with_jsonschema():
    """The fastjsonschema shortcut may only say 'valid' where jsonschema finds nothing."""
    import copy

    from conftest import REPO
    from errbook.kb import entries
    fast = usable._fast_check()
    assert fast is not None
    loaded, _ = entries.load_all(REPO)
    samples = [e.data for e in loaded]
    bad = copy.deepcopy(samples[0])
    bad["signatures"][0]["priority"] = 7
    bad2 = copy.deepcopy(samples[0])
    bad2["references"][0]["url"] = "http://x"
    bad3 = copy.deepcopy(samples[0])
    bad3["signatures"][0]["sequence"] = ["abcd", "efgh"]   # pattern and sequence
    for data in samples + [bad, bad2, bad3]:
        try:
            fast(data)
            fast_ok = True
        except Exception:
            fast_ok = False
        assert fast_ok == (not list(usable._validator().iter_errors(data))), data.get("id")


def test_link_to_the_old_rocm_tracker_is_a_finding(mini_root):
    url = next(ln.split("url: ")[1] for ln in BASE.splitlines() if "url: https://" in ln)
    text = BASE.replace(url, "https://github.com/ROCm/ROCm/issues/2429", 1)
    f = run(mini_root, text)
    got = [(x.field, x.line) for x in f if "legacy-rocm-build" in x.message]
    assert got and got[0][1] == line_of(text, "https://github.com/ROCm/ROCm/issues/2429")
    assert not [x for x in run(mini_root, text.replace("ROCm/ROCm/issues", "ROCm/legacy-rocm-build/issues"))
                if "legacy-rocm-build" in x.message]


def _drop_first_checked_at(text: str) -> str:
    import re as _re
    return _re.sub(r'(?m)^    checked_at: .*\n', "", text, count=1)


def test_missing_checked_at_names_file_line_and_field(mini_root):
    """Issue 25 item 3: an active 1.2 entry's applies_to range records the release it was checked against."""
    text = _drop_first_checked_at(BASE)
    assert text != BASE
    f = run(mini_root, text)
    assert [(x.file, x.field, x.line) for x in f] == [
        ("errata/compile/RMN-0001.yaml", "applies_to[0].checked_at", line_of(text, "- component: rocm"))]
    assert "required: the newest rocm release this range was checked against" in f[0].message
    r = errbook("validate", root=mini_root)
    assert r.returncode == 1
    where = f"errata/compile/RMN-0001.yaml:{line_of(text, '- component: rocm')}"
    assert f"{where}: applies_to[0].checked_at: required".encode() in r.stdout


def test_withdrawn_and_older_format_entries_need_no_checked_at(mini_root):
    """Withdrawn entries and entries of format 1.0/1.1 are not validate findings without checked_at; a 1.1 range
    without it is reported by errbook stale instead (tests/test_stale.py)."""
    text = _drop_first_checked_at(BASE)
    assert 'schema_version: "1.2.0"' in text
    assert run(mini_root, text.replace("class: compile", 'withdrawn: "2026-12-07T00:00:00Z"\nclass: compile')) == []
    assert run(mini_root, text.replace('schema_version: "1.2.0"', 'schema_version: "1.0.0"')) == []
    assert run(mini_root, text.replace('schema_version: "1.2.0"', 'schema_version: "1.1.0"')) == []


def test_component_missing_from_releases_yaml_is_a_finding(mini_root):
    import yaml
    rel_path = mini_root / "errata" / "releases.yaml"
    rel = yaml.safe_load(rel_path.read_text(encoding="utf-8"))
    del rel["hip"], rel["pytorch"]
    rel_path.write_text(yaml.safe_dump(rel), encoding="utf-8")
    # a machine check that compares torch.version names pytorch (stale.FACT_COMPONENTS)
    start, end = BASE.index("  not_checkable: >-"), BASE.index("root_cause:")
    text = BASE[:start] + ("  checks:\n    - id: new-torch\n      says: \"a new torch\"\n      when:\n"
                           "        - {fact: torch.version, version: \">=2.0\"}\n") + BASE[end:]
    f = run(mini_root, text)
    got = {(x.file, x.field, x.line) for x in f}
    assert ("errata/compile/RMN-0001.yaml", "applies_to[1].component", line_of(text, "- component: hip")) in got, f
    assert ("errata/compile/RMN-0001.yaml", "triggers.checks[0].when[0].fact",
            line_of(text, "fact: torch.version")) in got, f
    assert len(f) == 2 and "'hip' is not tracked in errata/releases.yaml" in str(f)


def test_releases_yaml_entries_are_comparable_and_sourced(mini_root):
    rel_path = mini_root / "errata" / "releases.yaml"
    text = rel_path.read_text(encoding="utf-8")
    text = text.replace('rocm:\n  newest: "10.2.0"', 'rocm:\n  newest: "next"')
    text += 'extra:\n  newest: "1.0"\n'
    rel_path.write_text(text, encoding="utf-8")
    _, f = validate.validate(mini_root)
    got = {(x.file, x.field) for x in f}
    assert ("errata/releases.yaml", "rocm.newest") in got
    assert ("errata/releases.yaml", "extra.checked") in got and ("errata/releases.yaml", "extra.source") in got
    line = next(x.line for x in f if x.field == "rocm.newest")
    assert rel_path.read_text().splitlines()[line - 1].strip() == 'newest: "next"'


def test_checked_at_newer_than_releases_yaml_is_a_finding(mini_root):
    import re as _re
    text = _re.sub(r'(?m)^(    checked_at: )".*"', r'\1"99.0"', BASE, count=1)
    f = run(mini_root, text)
    assert [(x.field, x.line) for x in f] == [("applies_to[0].checked_at", line_of(text, 'checked_at: "99.0"'))]
    assert "newer than the newest rocm release" in f[0].message


def test_a_signature_matching_a_benign_tuning_log_is_named_unless_it_is_an_observation(mini_root):
    """Benign output may show a condition an entry describes (an observation), never a diagnosis."""
    benign = mini_root / "errata" / "corpus" / "benign"
    benign.mkdir(parents=True)
    (benign / "x-healthy-build.log").write_text("checking headers\nmain.cpp:1:10: fatal error: 'cuda_runtime.h' file "
                                                "not found (probe of an optional CUDA path)\n", encoding="utf-8")
    (benign / "x-healthy-build.yaml").write_text("source: \"captured: a test\"\ncategory: misc\nnear_miss: true\n"
                                                 "split: dev\n", encoding="utf-8")
    f = run(mini_root, BASE)
    assert len(f) == 1 and "signature 'cuda-header-not-found' matches benign log" in f[0].message
    assert f[0].line == line_of(BASE, "- id: cuda-header-not-found")
    observed = BASE.replace("    priority: 4\n    pattern: \"fatal error: '?cuda",
                            "    priority: 4\n    level: observation\n    pattern: \"fatal error: '?cuda", 1)
    assert observed != BASE
    assert run(mini_root, observed) == []
