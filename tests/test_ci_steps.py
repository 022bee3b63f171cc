"""The reusable CI steps, run as CI would run them on fixture logs of errata/corpus/real: the GitHub Action's
script (.github/actions/errbook-triage/run.py) and the GitLab template's (ci/gitlab/errbook-triage.sh), with the
annotations, step summary, outputs and Code Quality report they produce."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import REPO
from errbook.cli.formats import base

ACTION = REPO / ".github" / "actions" / "errbook-triage"
TEMPLATE = REPO / "ci" / "gitlab" / "errbook-triage.yml"
GITLAB_SCRIPT = REPO / "ci" / "gitlab" / "errbook-triage.sh"
REAL = REPO / "errata" / "corpus" / "real"
NONE = REPO / "errata" / "corpus" / "unseen" / "RMN-0003-kokkos-amdclang-hipregistervar-undefined.log"
SITE = "https://team.example/errbook/"


def _action(tmp_path: Path, logs: str, fail_on: str = "never", root: Path | None = REPO, **more):
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    for f in (summary, output):
        f.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    env.update(INPUT_LOGS=logs, INPUT_FAIL_ON=fail_on, INPUT_SITE_URL=SITE, GITHUB_STEP_SUMMARY=str(summary),
               GITHUB_OUTPUT=str(output), GITHUB_WORKSPACE=str(tmp_path), **more)
    if root is not None:
        env["INPUT_ERRBOOK_ROOT"] = str(root)
    r = subprocess.run([sys.executable, str(ACTION / "run.py")], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=600)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return r, summary.read_text(), outputs


def test_action_annotates_the_source_line_and_writes_summary_and_outputs(tmp_path):
    # the log as a CI workspace holds it: a build log whose compiler line names a file of the workspace
    src = (REAL / "RMN-0075-1.log").read_text().replace("/projects/vllm_master/", f"{tmp_path}/")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "build.log").write_text(src)
    r, summary, outputs = _action(tmp_path, "logs/*.log")
    assert r.returncode == 0, r.stderr
    errors = [line for line in r.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1
    assert errors[0].startswith("::error file=csrc/cache_kernels.hip,line=252,col=45,title=RMN-0075 ")
    assert f"Entry: {SITE}entries/RMN-0075/" in errors[0] and "%0AFirst fix: " in errors[0]
    assert summary.startswith("**errbook:** a known problem — **RMN-0075**")
    assert f"({SITE}entries/RMN-0075/)" in summary
    assert outputs == {"level": "diagnosis", "entries": "RMN-0075", "exit-code": "0"}


@pytest.mark.parametrize("fail_on,code", [("never", 0), ("observation", 1), ("likely", 1), ("diagnosis", 1)])
def test_action_fail_on_a_diagnosis(tmp_path, fail_on, code):
    r, _, outputs = _action(tmp_path, str(REAL / "RMN-0090-1.log"), fail_on)
    assert r.returncode == code and outputs["level"] == "diagnosis"
    assert outputs["entries"].split(",")[0] == "RMN-0090"


def test_action_on_a_log_no_entry_explains(tmp_path):
    r, summary, outputs = _action(tmp_path, str(NONE), "observation")
    assert r.returncode == 0
    assert outputs == {"level": "none", "entries": "", "exit-code": "1"}
    assert r.stdout.startswith("::notice ") and "No entry" in r.stdout
    assert "ld.lld: error: undefined symbol: __hipRegisterVar" in summary


def test_action_several_logs_and_its_default_root(tmp_path):
    """One log per line; without errbook-root the action uses the checkout it lives in."""
    r, _, outputs = _action(tmp_path, f"{REAL / 'RMN-0075-1.log'}\n\n{REAL / 'RMN-0090-1.log'}\n", root=None)
    assert r.returncode == 0, r.stderr
    assert {"RMN-0075", "RMN-0090"} <= set(outputs["entries"].split(","))


@pytest.mark.parametrize("logs,fail_on", [("missing/*.log", "never"), ("", "never"), (str(NONE), "sometimes")])
def test_action_errors_exit_2(tmp_path, logs, fail_on):
    r, _, _ = _action(tmp_path, logs, fail_on)
    assert r.returncode == 2 and "::error title=errbook triage::" in r.stdout


def test_action_yml_passes_inputs_only_through_the_environment():
    spec = yaml.safe_load((ACTION / "action.yml").read_text())
    assert {"logs", "errbook-root", "site-url", "fail-on"} <= set(spec["inputs"])
    assert spec["inputs"]["logs"]["required"] is True and spec["inputs"]["fail-on"]["default"] == "never"
    assert spec["runs"]["using"] == "composite"
    steps = spec["runs"]["steps"]
    assert any("run.py" in s["run"] for s in steps) and all(s["shell"] == "bash" for s in steps)
    # an input spliced into a script is a script injection; inputs travel as env only
    assert not any("${{" in s["run"] for s in steps)
    assert set(spec["outputs"]) == {"level", "entries", "exit-code"}


def _requirement_names(lines):
    return {re.split(r"[<>=;\s\[]", x.strip(), maxsplit=1)[0].lower() for x in lines
            if x.strip() and not x.strip().startswith("#")}


def test_triage_requirements_are_a_subset_of_the_package_dependencies():
    tomllib = pytest.importorskip("tomllib")      # Python 3.11+
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    req = (REPO / "ci" / "triage-requirements.txt").read_text().splitlines()
    assert _requirement_names(req) <= _requirement_names(deps)
    assert {x.strip() for x in req if x.strip() and not x.startswith("#")} <= set(deps)


def _gitlab(tmp_path: Path, logs: str, fail_on: str = "never"):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ERRBOOK_", "CI_"))}
    env.update(ERRBOOK_ROOT=str(REPO), ERRBOOK_LOGS=logs, ERRBOOK_FAIL_ON=fail_on, ERRBOOK_INSTALL="false",
               ERRBOOK_PYTHON=sys.executable, ERRBOOK_SITE_URL=SITE, CI_PROJECT_DIR=str(tmp_path))
    return subprocess.run([shutil.which("sh") or "/bin/sh", str(GITLAB_SCRIPT)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=600)


def _check_report(path: Path) -> list:
    report = json.loads(path.read_text())
    schema = json.loads((Path(__file__).parent / "schemas" / "gitlab-codeclimate.json").read_text())
    for item in report:
        jsonschema.Draft7Validator(schema).validate(item)
        assert item["check_name"].startswith("RMN-") and item["location"]["lines"]["begin"] >= 1
    return report


def test_gitlab_script_writes_a_valid_code_quality_report_and_summary(tmp_path):
    shutil.copy(REAL / "RMN-0075-1.log", tmp_path / "build-1.log")
    shutil.copy(REAL / "RMN-0090-1.log", tmp_path / "build-2.log")
    r = _gitlab(tmp_path, "build-*.log")
    assert r.returncode == 0, r.stderr
    report = _check_report(tmp_path / "gl-code-quality-report.json")
    assert {i["check_name"] for i in report} >= {"RMN-0075", "RMN-0090"}
    by_id = {i["check_name"]: i for i in report}
    assert by_id["RMN-0075"]["severity"] == by_id["RMN-0090"]["severity"] == base.SEVERITY["diagnosis"]["gitlab"]
    assert {i["severity"] for i in report} <= {base.SEVERITY[k]["gitlab"] for k in ("diagnosis", "observation")}
    assert by_id["RMN-0075"]["location"] == {"path": "/projects/vllm_master/csrc/cache_kernels.hip",
                                             "lines": {"begin": 252}}
    assert by_id["RMN-0090"]["location"]["path"] == "build-2.log"      # under $CI_PROJECT_DIR: relative
    summary = (tmp_path / "errbook-triage.md").read_text()
    assert summary.startswith("**errbook:** a known problem") and summary in r.stdout
    assert f"({SITE}entries/RMN-0090/)" in summary


@pytest.mark.parametrize("fail_on,code", [("never", 0), ("diagnosis", 1)])
def test_gitlab_script_fail_on(tmp_path, fail_on, code):
    assert _gitlab(tmp_path, str(REAL / "RMN-0090-1.log"), fail_on).returncode == code


def test_gitlab_script_on_a_log_no_entry_explains_and_on_errors(tmp_path):
    r = _gitlab(tmp_path, str(NONE), "observation")
    assert r.returncode == 0 and _check_report(tmp_path / "gl-code-quality-report.json") == []
    assert "ld.lld: error: undefined symbol" in (tmp_path / "errbook-triage.md").read_text()
    r = _gitlab(tmp_path, str(tmp_path / "missing.log"))
    assert r.returncode == 2 and json.loads((tmp_path / "gl-code-quality-report.json").read_text()) == []
    assert _gitlab(tmp_path, "", "never").returncode == 2
    assert _gitlab(tmp_path, str(NONE), "sometimes").returncode == 2


def test_gitlab_template_publishes_the_report():
    spec = yaml.safe_load(TEMPLATE.read_text())
    job = spec[".errbook-triage"]
    assert job["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert "errbook-triage.md" in job["artifacts"]["paths"] and job["artifacts"]["when"] == "always"
    assert any("ci/gitlab/errbook-triage.sh" in s for s in job["script"])
    assert {"ERRBOOK_LOGS", "ERRBOOK_ROOT", "ERRBOOK_SITE_URL", "ERRBOOK_FAIL_ON"} <= set(job["variables"])


def test_annotation_preview_decodes_the_action_output(tmp_path):
    """docs/ci.md's picture is drawn from the action's real output: the preview decodes the runner's escaping."""
    sys.path.insert(0, str(REPO / "scripts"))
    import annotation_preview

    src = (REAL / "RMN-0075-1.log").read_text().replace("/projects/vllm_master/", f"{tmp_path}/")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "build.log").write_text(src)
    r, summary, _ = _action(tmp_path, "logs/build.log")
    (tmp_path / "commands.txt").write_text(r.stdout)
    (tmp_path / "summary.md").write_text(summary)
    (ann,) = annotation_preview.parse(r.stdout)
    assert ann["kind"] == "error" and ann["file"] == "csrc/cache_kernels.hip" and ann["line"] == "252"
    assert ann["title"].startswith("RMN-0075 ") and ": CUDA bf16 names" in ann["title"]   # %3A decoded
    assert "\nFirst fix: " in ann["message"] and "%0A" not in ann["message"]
    assert annotation_preview.main([str(tmp_path / "p.html"), str(tmp_path / "commands.txt"),
                                    str(tmp_path / "summary.md")]) == 0
    page = (tmp_path / "p.html").read_text()
    assert "csrc/cache_kernels.hip#L252:45" in page and f'href="{SITE}entries/RMN-0075/"' in page
