"""errbook triage --format github|gitlab|junit|sarif|markdown: each output validated against the official schema
(tests/schemas/, sources in its README), answers' levels mapped to each format's severity, entry pages linked,
source positions found, log text capped, exit codes those of triage."""
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import xmlschema
from mkdocs.structure.files import File

from conftest import REPO, errbook
from errbook.cli import formats
from errbook.cli.formats import base, comment, context, github, gitlab, junit, loglines, sarif
from errbook.triage import normalize, pipeline

SCHEMAS = Path(__file__).parent / "schemas"
REAL = REPO / "errata" / "corpus" / "real"
UNSEEN = REPO / "errata" / "corpus" / "unseen"
COMPILER = REAL / "RMN-0075-1.log"          # clang: path:line:col: error: ... (a diagnosis with a source position)
RUNTIME = REAL / "RMN-0090-1.log"           # a HIP runtime log: a diagnosis, then an observation
LIKELY = UNSEEN / "RMN-0042-iree-windows-w7900-enable-peer-access.log"      # second stage only
NONE = UNSEEN / "RMN-0003-kokkos-amdclang-hipregistervar-undefined.log"    # no entry; one failure line
SITE = "https://team.example/errbook/"


def _triage(path: Path):
    results, stats, _ = pipeline.triage_files(REPO, [str(path)])
    return results[:3], stats


@pytest.fixture(scope="module")
def cases():
    """name -> (results, stats, ctx) for each fixture log."""
    out = {}
    for name, path in (("compiler", COMPILER), ("runtime", RUNTIME), ("likely", LIKELY), ("none", NONE)):
        results, stats = _triage(path)
        ctx = context.make(REPO, [str(path)], [str(path)], results, SITE, unexplained=True)
        out[name] = (results, stats, ctx)
    out["observation"] = out["runtime"]     # its second answer is a real observation (a `level: observation` signature)
    return out


def test_fixture_logs_give_the_levels_the_tests_rely_on(cases):
    assert [base.level_of(r) for r in cases["compiler"][0]][:1] == ["diagnosis"]
    assert [base.level_of(r) for r in cases["runtime"][0]][:2] == ["diagnosis", "observation"]
    assert [base.level_of(r) for r in cases["likely"][0]][:1] == ["likely"]
    assert cases["none"][0] == [] and cases["none"][2].unexplained
    assert [base.level_of(r) for r in cases["observation"][0]][:2] == ["diagnosis", "observation"]


def test_level_of_prefers_triages_own_level():
    assert base.level_of({"confidence": "match"}) == "diagnosis"
    assert base.level_of({"confidence": "likely"}) == "likely"
    assert base.level_of({"confidence": "match", "level": "observation"}) == "observation"
    assert base.level_of({"confidence": "likely", "level": "bogus"}) == "likely"
    # one table: every level has a severity in every format
    assert all(set(row) == {"github", "sarif", "gitlab", "junit"} for row in base.SEVERITY.values())
    assert set(base.SEVERITY) == set(base.LEVELS)


def test_page_urls_follow_mkdocs_rule_and_the_address_map():
    from errbook.web import addresses
    src = addresses.entry_src("RMN-0090")
    for directory_urls in (True, False):
        assert base.page_url(src, directory_urls) == File(src, "docs", "site", directory_urls).url
        assert base.page_url("index.md", directory_urls) == File("index.md", "docs", "site", directory_urls).url
    ctx = base.Context(site_url="https://h/sub")
    assert base.entry_url(ctx, "RMN-0090") == "https://h/sub/entries/RMN-0090/"
    assert base.entry_url(base.Context(), "RMN-0090") == "entries/RMN-0090/"
    assert base.links_note(base.Context()) and not base.links_note(ctx)


def test_site_url_from_mkdocs_yml_env_tag(tmp_path, monkeypatch):
    monkeypatch.delenv("ERRBOOK_SITE_URL", raising=False)
    assert context.site_config(REPO) == ("http://127.0.0.1:8000/", True)      # the !ENV default
    monkeypatch.setenv("ERRBOOK_SITE_URL", SITE)
    assert context.site_config(REPO)[0] == SITE
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nuse_directory_urls: false\n")
    assert context.site_config(tmp_path) == (None, False)
    assert context.site_config(tmp_path / "nowhere") == (None, True)


@pytest.mark.parametrize("text,want", [
    ("/w/r/src/k.hip:252:45: error: unknown type name", {"path": "src/k.hip", "line": 252, "col": 45}),
    ("#38 33.73 /opt/rocm/include/hip/x.h:307:62: error: static assertion failed",
     {"path": "/opt/rocm/include/hip/x.h", "line": 307, "col": 62}),
    ("kernel.cu(12): error: identifier \"__shfl_sync\" is undefined", {"path": "kernel.cu", "line": 12}),
    ('  File "/w/r/train.py", line 7, in <module>', {"path": "train.py", "line": 7}),
    ("CMake Error at CMakeLists.txt:31 (find_package):", {"path": "CMakeLists.txt", "line": 31}),
    (":1:hip_code_object.cpp      :456 : 1885938529 us: hipErrorNoBinaryForGpu", None),
    ("RuntimeError: HIP error: invalid device function", None),
])
def test_source_positions(text, want):
    assert base.source_position(text, "/w/r") == want


def _schema(name):
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["compiler", "runtime", "likely", "none", "observation"])
def test_sarif_validates_against_the_official_schema(cases, name):
    results, stats, ctx = cases[name]
    doc = json.loads(sarif.render(results, stats, ctx))
    jsonschema.Draft4Validator(_schema("sarif-schema-2.1.0.json")).validate(doc)
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "errbook" and run["tool"]["driver"]["version"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r["id"] for r in results]
    for rule, r in zip(rules, results, strict=True):
        assert rule["helpUri"] == SITE + f"entries/{r['id']}/" and rule["shortDescription"]["text"] == r["title"]
    for res in run["results"]:
        r = results[res["ruleIndex"]]
        assert res["ruleId"] == r["id"] and res["level"] == base.SEVERITY[base.level_of(r)]["sarif"]
        assert rules[res["ruleIndex"]]["helpUri"] in res["message"]["text"]
    assert bool(results) == bool(run["results"])


def test_sarif_results_are_the_matched_lines_with_source_positions(cases):
    results, stats, ctx = cases["compiler"]
    res = json.loads(sarif.render(results, stats, ctx))["runs"][0]["results"]
    want = [(ln["line"], ln["text"]) for r in results for _, ln in base.evidence(r)]
    logs = [loc["physicalLocation"] for x in res for loc in x["locations"]
            if loc["physicalLocation"]["artifactLocation"]["uri"].endswith(".log")]
    assert [(p["region"]["startLine"], p["region"]["snippet"]["text"]) for p in logs] == \
        [(n, base.cap(t, base.LINE_CAP)) for n, t in want]
    first = res[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"] == "file:///projects/vllm_master/csrc/cache_kernels.hip"
    assert first["region"] == {"startLine": 252, "startColumn": 45}


DOCUMENTED_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


@pytest.mark.parametrize("name", ["compiler", "runtime", "likely", "none", "observation"])
def test_gitlab_report_validates_against_gitlabs_schema_and_documented_fields(cases, name):
    results, stats, ctx = cases[name]
    report = json.loads(gitlab.render(results, stats, ctx))
    assert isinstance(report, list) and len(report) == len(results)
    validator = jsonschema.Draft7Validator(_schema("gitlab-codeclimate.json"))
    for item, r in zip(report, results, strict=True):
        validator.validate(item)
        # GitLab's documentation of a custom tool's report (tests/schemas/README.md)
        assert item["check_name"] == r["id"] and item["severity"] in DOCUMENTED_SEVERITIES
        assert item["severity"] == base.SEVERITY[base.level_of(r)]["gitlab"]
        assert isinstance(item["location"]["path"], str) and item["location"]["lines"]["begin"] >= 1
        # a long answer is cut in its cause or fix, never in the link to its page
        assert item["description"].endswith(f"Entry: {SITE}entries/{r['id']}/")
        assert len(item["description"]) <= gitlab.DESCRIPTION_CAP
    assert len({i["fingerprint"] for i in report}) == len(report)


def test_gitlab_fingerprint_is_stable_when_the_log_shifts(tmp_path):
    shifted = tmp_path / "shifted.log"
    shifted.write_bytes(b"one more line before\n" + RUNTIME.read_bytes())
    ctx = base.Context(site_url=SITE, logs=("build.log",))
    a, b = (json.loads(gitlab.render(*_triage(p), ctx)) for p in (RUNTIME, shifted))
    assert len(a) == len(b) >= 2
    assert [x["fingerprint"] for x in a] == [x["fingerprint"] for x in b]
    assert [x["location"]["lines"]["begin"] + 1 for x in a] == [x["location"]["lines"]["begin"] for x in b]


@pytest.fixture(scope="module")
def junit_xsd():
    return xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd"))


@pytest.mark.parametrize("name", ["compiler", "runtime", "likely", "none", "observation"])
def test_junit_validates_against_the_xsd(cases, junit_xsd, name):
    results, stats, ctx = cases[name]
    xml = junit.render(results, stats, ctx)
    junit_xsd.validate(xml)
    doc = junit_xsd.to_dict(xml)
    suite = doc["testsuite"][0]
    tcs = suite["testcase"]
    if not results:
        assert len(tcs) == 1 and "skipped" in tcs[0] and suite["@skipped"] == "1"
        return
    assert [t["@name"] for t in tcs] == [base.cap(base.headline(r), 200) for r in results]
    for t, r in zip(tcs, results, strict=True):
        lvl = base.level_of(r)
        url = SITE + f"entries/{r['id']}/"
        if lvl == "observation":
            assert "failure" not in t and "First fix:" in t["system-out"][0] and url in t["system-out"][0]
        else:
            fail = t["failure"][0]
            assert fail["@type"] == lvl and ("First fix:" in fail["$"]) and url in fail["$"]
            assert fail["@message"].startswith("likely: ") == (lvl == "likely")
    assert suite["@failures"] == str(sum(base.level_of(r) != "observation" for r in results))


def test_junit_drops_what_xml_cannot_hold(junit_xsd):
    r = {"id": "RMN-0001", "title": "t\x1b[31m", "class": "compile", "confidence": "match", "summary": "s\x00",
         "first_fix": "f", "evidence": [{"signature": "x", "lines": [{"line": 3, "text": "\x1b[1merror\x07 here"}]}]}
    xml = junit.render([r], {"lines": 3}, base.Context(logs=("a.log",)))
    junit_xsd.validate(xml)
    assert "\x1b" not in xml and "\x07" not in xml and "[1merror here" in xml


def _unescape(s: str) -> str:
    return s.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def _parse_command(line: str) -> tuple[str, dict, str]:
    head, _, msg = line[2:].partition("::")
    kind, _, props = head.partition(" ")
    return kind, dict((_unescape(k), _unescape(v)) for k, v in (p.split("=", 1) for p in props.split(",") if p)), \
        _unescape(msg)


def test_github_escaping_follows_the_toolkit():
    assert github.escape_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert github.escape_data("x %0A::error::y") == "x %250A::error::y"      # a log line cannot start a command
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    line = github.command("error", {"file": "a,b.cu", "line": 3, "col": None, "title": "RMN-1: x: y"}, "m::n\nz")
    assert line == "::error file=a%2Cb.cu,line=3,title=RMN-1%3A x%3A y::m::n%0Az"
    assert "\n" not in line


@pytest.mark.parametrize("name", ["compiler", "runtime", "likely", "none", "observation"])
def test_github_annotations(cases, name):
    results, stats, ctx = cases[name]
    lines = github.render(results, stats, ctx).splitlines()
    if not results:
        kind, props, msg = _parse_command(lines[0])
        assert len(lines) == 1 and kind == "notice" and "No entry" in msg
        assert props["line"] == str(ctx.unexplained[0]["line"])
        return
    assert len(lines) == len(results)
    for line, r in zip(lines, results, strict=True):
        kind, props, msg = _parse_command(line)
        assert kind == base.SEVERITY[base.level_of(r)]["github"]
        assert props["title"].startswith(r["id"] + " ") and SITE + f"entries/{r['id']}/" in msg
        assert "First fix: " in msg


def test_github_annotation_points_at_the_source_line_relative_to_the_workspace(cases):
    results, stats, _ = cases["compiler"]
    ctx = base.Context(site_url=SITE, logs=(str(COMPILER),), workspace="/projects/vllm_master")
    kind, props, msg = _parse_command(github.render(results, stats, ctx).splitlines()[0])
    assert (kind, props["file"], props["line"], props["col"]) == ("error", "csrc/cache_kernels.hip", "252", "45")
    # a runtime log names no source position: the annotation points at the log's matched line
    results, stats, ctx = cases["runtime"]
    kind, props, msg = _parse_command(github.render(results, stats, ctx).splitlines()[0])
    first = next(base.evidence(results[0]))[1]
    assert props["file"].endswith("RMN-0090-1.log") and props["line"] == str(first["line"])


@pytest.mark.parametrize("name", ["compiler", "runtime", "likely", "none", "observation"])
def test_markdown_comment(cases, name):
    results, stats, ctx = cases[name]
    md = comment.render(results, stats, ctx)
    first = md.splitlines()[0]
    assert first.startswith("**errbook:**")
    if results:
        assert results[0]["id"] in first
        for r in results:
            assert f"]({SITE}entries/{r['id']}/)" in md and comment.MARK[base.level_of(r)] in md
            assert "first fix: " in md
    else:
        assert "no entry" in first and "Failure lines in the log" in md
    explained = base.explained_lines(results)
    for u in ctx.unexplained:
        assert ("", u["line"]) not in explained and f":{u['line']}: `" in md
    # log text only as capped lines
    assert all(len(line) < base.LINE_CAP + 400 for line in md.splitlines())


def test_markdown_without_reread_lines_names_the_first_failure_line():
    md = comment.render([], {"lines": 2, "first_failure_line": "boom: error"}, base.Context(logs=("-", "b.log")))
    assert "First failure line: `boom: error`" in md and "No line of the log reports a failure" not in md
    md = comment.render([], {"lines": 2}, base.Context(logs=("-", "b.log")))
    assert "No line of the log reports a failure" in md


def test_markdown_code_spans_hold_any_line():
    assert comment.code("a `b` c") == "``a `b` c``"
    assert comment.code("`x") == "`` `x ``"
    long = comment.code("e" * 5000)
    assert len(long) <= base.LINE_CAP + 2 and long.endswith("…`")


def test_unexplained_lines_are_failure_lines_no_diagnosis_covers(tmp_path):
    log = tmp_path / "b.log"
    log.write_bytes(b"INFO: starting\r\nlinking\rld.lld: error: undefined symbol: foo\n"
                    b"0 errors\n" + ERR + b"\nmake: *** [all] Error 2")
    got = loglines.unexplained([(str(log), "")], set())
    assert [(u["line"], u["text"]) for u in got] == [
        (3, "ld.lld: error: undefined symbol: foo"), (5, ERR.decode().strip()), (6, "make: *** [all] Error 2")]
    assert [u["line"] for u in loglines.unexplained([(str(log), "")], {("", 5)})] == [3, 6]
    assert len(loglines.unexplained([(str(log), "")], set(), limit=1)) == 1


ERR = b"a.hip:1:10: fatal error: 'cuda_runtime.h' file not found"


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_failure_lines_are_numbered_as_triage_numbers_lines(monkeypatch, chunk):
    """Line ends \\n, \\r\\n and a lone \\r, split anywhere by the chunks: the numbers are normalize.split_lines'."""
    data = b"error a\r\nerror b\rerror c\n\nerror d\r\r\nerror e\rok\nerror f"
    monkeypatch.setattr(loglines, "CHUNK", chunk)
    want = [(n, t) for n, t in enumerate(normalize.split_lines(data.decode()), 1) if "error" in t]
    assert list(loglines.failure_lines(io.BytesIO(data))) == want
    assert list(loglines.failure_lines(io.BytesIO(data.replace(b"\n", b"")))) == \
        [(n, t) for n, t in enumerate(normalize.split_lines(data.replace(b"\n", b"").decode()), 1)
         if "error" in t]                                     # a CR-only log


def test_an_overlong_line_keeps_its_head_and_the_count(monkeypatch):
    monkeypatch.setattr(loglines, "CHUNK", 4096)
    data = b"error " + b"x" * (normalize.RAW_CAP_BYTES * 3) + b"\nok\nerror here\n"
    got = list(loglines.failure_lines(io.BytesIO(data)))
    assert [n for n, _ in got] == [1, 3] and got[1][1] == "error here"
    assert max(len(b) for b, _ in loglines.blocks(io.BytesIO(data))) <= normalize.RAW_CAP_BYTES + 4096 * 2


def test_cli_formats_keep_triages_exit_codes_and_json_alias(tmp_path):
    for log, code in ((COMPILER, 0), (NONE, 1)):
        for fmt in formats.FORMATS:
            r = errbook("triage", "--format", fmt, "--site-url", SITE, str(log), root=REPO)
            assert r.returncode == code, (fmt, r.stderr)
            if fmt == "sarif":
                jsonschema.Draft4Validator(_schema("sarif-schema-2.1.0.json")).validate(json.loads(r.stdout))
            elif fmt == "junit":
                xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd")).validate(r.stdout.decode())
    a = errbook("triage", "--json", str(COMPILER), root=REPO).stdout
    b = errbook("triage", "--format", "json", str(COMPILER), root=REPO).stdout
    assert a == b and json.loads(a)["matches"][0]["id"] == "RMN-0075"
    assert errbook("triage", "--json", "--format", "sarif", str(COMPILER), root=REPO).returncode == 2
    assert errbook("triage", "--format", "sarif", str(tmp_path / "missing.log"), root=REPO).returncode == 2


def test_cli_markdown_from_stdin_lists_the_unexplained_lines_and_relative_links():
    r = errbook("triage", "--format", "markdown", "--site-url", "", root=REPO, input=NONE.read_bytes())
    md = r.stdout.decode()
    assert r.returncode == 1 and "stdin:2: `ld.lld: error: undefined symbol: __hipRegisterVar`" in md
    assert "entry links are relative" in md
    r = errbook("triage", "--format", "sarif", "--site-url", "", str(COMPILER), root=REPO)
    assert "entry links are relative" in r.stderr.decode() and '"helpUri": "entries/RMN-0075/"' in r.stdout.decode()


def test_cli_github_appends_the_summary(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(summary), ERRBOOK_SITE_URL=SITE)
    r = subprocess.run([sys.executable, "-m", "errbook.cli", "--root", str(REPO), "triage", "--format", "github",
                        str(RUNTIME)], capture_output=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().startswith("::error file=")
    text = summary.read_text()
    assert text.startswith("earlier step\n**errbook:** a known problem — **RMN-0090**")
    assert f"({SITE}entries/RMN-0090/)" in text


HOSTILE_LINES = ["\x1b[31merror:\x1b[0m </failure>]]><script>alert(1)</script> %0A::error::x `y` ``z``",
                 "error: " + "w" * 10000, "error: tab\there, nul\x00, bell\x07, bidi \u202e done"]


def test_every_format_holds_hostile_log_lines(junit_xsd):
    r = {"id": "RMN-0001", "title": "t", "class": "compile", "confidence": "match", "score": 1, "summary": "s",
         "first_fix": "f", "evidence": [{"signature": "x", "lines": [{"line": i + 1, "text": t}
                                                                     for i, t in enumerate(HOSTILE_LINES)]}]}
    ctx = base.Context(site_url=SITE, logs=("a.log",),
                       unexplained=({"line": 9, "text": HOSTILE_LINES[0]},))
    jsonschema.Draft4Validator(_schema("sarif-schema-2.1.0.json")).validate(
        json.loads(sarif.render([r], {"lines": 9}, ctx)))
    for item in json.loads(gitlab.render([r], {"lines": 9}, ctx)):
        jsonschema.Draft7Validator(_schema("gitlab-codeclimate.json")).validate(item)
    junit_xsd.validate(junit.render([r], {"lines": 9}, ctx))
    gh = github.render([r], {"lines": 9}, ctx)
    assert gh.count("\n") == 1 and gh.startswith("::error ")
    md = comment.render([r], {"lines": 9}, ctx)
    assert all(len(line) < base.LINE_CAP + 200 for line in md.splitlines())
    shown = [line for line in md.splitlines() if "<script>" in line]
    assert len(shown) == 2                          # the evidence line and the unexplained line, each in a code span
    for line in shown:
        assert line.index("`") < line.index("<script>") < line.rindex("`") and line.rstrip().endswith("`")
