"""Message pages (errata/messages/): validate names every problem with file, line and field; triage ranks a
message's causes by the evidence in real logs of the corpus and by doctor facts; the CLI's text and JSON show the
block."""
import json
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import REPO, errbook
from errbook.kb import entries as entries_mod
from errbook.kb import messages, validate
from errbook.machine import facts as facts_mod
from errbook.triage import messages as msg
from errbook.triage import msgscan, pipeline

CORPUS = REPO / "errata" / "corpus"
MACHINES = Path(__file__).parent / "doctor_machines"

PAGE = {
    "id": "test-message",
    "title": "'hipcc: cuda_runtime.h not found': a test message",
    "title_zh": "测试消息：cuda_runtime.h not found",
    "summary": "A message page used by the tests.",
    "summary_zh": "测试用的消息页。",
    "signatures": [{"id": "not-found", "pattern": "fatal error: 'cuda_runtime\\.h' file not found",
                    "examples": [{"text": "fatal error: 'cuda_runtime.h' file not found",
                                  "source": "https://github.com/ROCm/hip/issues/1"}]}],
    "causes": [{"entry": "RMN-0001", "evidence": [
        {"id": "include-line", "says": "The source includes the CUDA header", "says_zh": "源码包含 CUDA 头文件",
         "pattern": "#include <cuda_runtime\\.h>",
         "examples": [{"text": "#include <cuda_runtime.h>", "source": "https://github.com/ROCm/hip/issues/1"}]},
        {"id": "no-hipcc", "says": "hipcc is not installed", "says_zh": "没有安装 hipcc",
         "when": [{"fact": "tools.hipcc", "present": False}]}]}],
}


def write_page(root: Path, page: dict) -> tuple[Path, str]:
    d = root / "errata" / "messages"
    d.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(page, allow_unicode=True, sort_keys=False)
    p = d / f"{page['id']}.yaml"
    p.write_text(text, encoding="utf-8")
    return p, text


def line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def findings_of(root: Path) -> list:
    _, found = validate.validate(root)
    return [f for f in found if f.file.startswith("errata/messages/")]


# -- the content model and validate ------------------------------------------------------------------------

def test_the_shipped_pages_are_valid_and_name_active_entries():
    loaded, _ = entries_mod.load_all(REPO)
    from errbook.kb import msgvalidate
    assert msgvalidate.validate(REPO, loaded) == []
    pages, errors = messages.load_all(REPO)
    assert errors == [] and len(pages) >= 3
    active = {e.id for e in entries_mod.active(loaded)}
    for p in pages:
        assert len(p.cause_ids()) >= 1 and set(p.cause_ids()) <= active


def test_message_pages_are_not_entries():
    loaded, errors = entries_mod.load_all(REPO)
    assert not any("messages" in e.rel for e in loaded) and not any("messages" in e.rel for e in errors)


def test_a_valid_test_page_has_no_finding(mini_root):
    write_page(mini_root, PAGE)
    assert findings_of(mini_root) == []


def test_counter_examples_that_do_not_match_are_no_finding(mini_root):
    page = json.loads(json.dumps(PAGE))
    near = {"text": "-- Looking for cuda_runtime.h - found", "source": "https://github.com/ROCm/hip/issues/1"}
    page["signatures"][0]["counter_examples"] = [near]
    page["causes"][0]["evidence"][0]["counter_examples"] = [dict(near)]
    write_page(mini_root, page)
    assert findings_of(mini_root) == []


@pytest.mark.parametrize("change, needle, field, words", [
    (lambda p: p["causes"][0].update(entry="RMN-0999"), "entry: RMN-0999", "causes[0].entry", "no entry with id"),
    (lambda p: p["causes"][0]["evidence"][0].update(pattern="(?<=x)cuda"), "pattern: (?<=x)cuda",
     "causes[0].evidence[0].pattern", "bad pattern"),
    (lambda p: p["causes"][0]["evidence"][0]["examples"][0].update(text="#include <hip/hip_runtime.h>"),
     "hip/hip_runtime.h", "causes[0].evidence[0].examples[0].text", "does not match this example"),
    (lambda p: p["signatures"][0]["examples"][0].update(text="all good"), "text: all good",
     "signatures[0].examples[0].text", "does not match this example"),
    (lambda p: p["causes"][0]["evidence"][1]["when"][0].update(fact="tools.nothing"), "tools.nothing",
     "causes[0].evidence[1].when[0].fact", "unknown fact"),
    (lambda p: p["causes"][0]["evidence"][1]["when"][0].update(gte=1), "fact: tools.hipcc",
     "causes[0].evidence[1].when[0]", "exactly one operator"),
    (lambda p: p["causes"][0].update(weight=3), "weight: 3", "causes[0].weight", "unknown field"),
    (lambda p: p["causes"][0]["evidence"][1].update(id="include-line"), "id: include-line",
     "causes[0].evidence[1].id", "duplicate evidence id"),
    # a counter-example the pattern matches is a finding at its own line, for a signature and for evidence alike
    (lambda p: p["signatures"][0].update(counter_examples=[
        {"text": "b.hip:2:10: fatal error: 'cuda_runtime.h' file not found", "source": "https://github.com/ROCm/hip/issues/1"}]),
     "b.hip:2:10", "signatures[0].counter_examples[0].text", "matches this counter-example"),
    (lambda p: p["causes"][0]["evidence"][0].update(counter_examples=[
        {"text": "  #include <cuda_runtime.h> // kept", "source": "https://github.com/ROCm/hip/issues/1"}]),
     "// kept", "causes[0].evidence[0].counter_examples[0].text", "matches this counter-example"),
    # the portable-subset check is the entries' own: '[^]' means any character to JavaScript
    (lambda p: p["causes"][0]["evidence"][0].update(pattern="#include <cuda_runtime[^]x]h>"), "cuda_runtime[^]x]h",
     "causes[0].evidence[0].pattern", "']' first in a character class"),
])
def test_validate_names_file_line_and_field(mini_root, change, needle, field, words):
    page = json.loads(json.dumps(PAGE))
    change(page)
    path, text = write_page(mini_root, page)
    found = findings_of(mini_root)
    assert [(f.file, f.field) for f in found] == [("errata/messages/test-message.yaml", field)], found
    assert words in found[0].message
    # the line is the one the field is on (the last line holding the needle: examples come after their pattern)
    assert found[0].line == max(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def test_a_withdrawn_entry_cannot_be_a_cause(mini_root):
    entry = mini_root / "errata" / "compile" / "RMN-0001.yaml"
    entry.write_text(entry.read_text(encoding="utf-8") + 'withdrawn: "2026-12-01T00:00:00Z"\n', encoding="utf-8")
    write_page(mini_root, PAGE)
    found = [f for f in findings_of(mini_root) if f.field == "causes[0].entry"]
    assert found and "withdrawn" in found[0].message
    # and triage leaves the page out
    assert msgscan.usable_pages(mini_root) == []


def test_errbook_validate_reports_a_page_file_given_by_name(mini_root):
    page = json.loads(json.dumps(PAGE))
    page["causes"][0]["entry"] = "RMN-0999"
    path, text = write_page(mini_root, page)
    r = errbook("validate", str(path), "--json", root=mini_root)
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    rows = out["findings"] if isinstance(out, dict) else out
    assert [(f["file"], f["line"], f["field"]) for f in rows] == [
        ("errata/messages/test-message.yaml", line_of(text, "RMN-0999"), "causes[0].entry")]


# -- ranking on real logs ------------------------------------------------------------------------------------

def block_of(log: Path, values: dict | None = None) -> dict | None:
    results, _, _ = pipeline.triage_files(REPO, [str(log)])
    return msgscan.explain(REPO, results, [str(log)], values)


def test_rocminfo_enomem_ranks_the_kfd_cause_first_with_its_line():
    log = CORPUS / "unseen" / "RMN-0099-rocminfo-enomem-rx580-atomics.log"
    b = block_of(log)
    assert b["id"] == "no-gpu-found"
    assert "HSA_STATUS_ERROR_OUT_OF_RESOURCES" in b["line"]["text"]
    order = [c["entry"] for c in b["causes"]]
    assert order[0] == "RMN-0099" and set(order) == {"RMN-0021", "RMN-0099", "RMN-0209", "RMN-0022"}
    ev = {e["id"]: e for e in b["causes"][0]["evidence"]}
    text = log.read_text(encoding="utf-8").splitlines()
    line = ev["kfd-open-enomem"]["lines"][0]
    assert ev["kfd-open-enomem"]["state"] == "found" and text[line["line"] - 1].strip() == line["text"]
    # no facts given: every machine condition is unknown, never found
    assert {e["state"] for c in b["causes"] for e in c["evidence"] if e["kind"] == "facts"} == {"unknown"}


def test_wsl_rocminfo_ranks_the_wsl_cause_first():
    b = block_of(CORPUS / "unseen" / "RMN-0209-wsl-rocm642-no-wsl-support.log")
    assert b["causes"][0]["entry"] == "RMN-0209"
    assert [e["id"] for e in b["causes"][0]["evidence"] if e["state"] == "found"] == ["wsl-detected"]


def test_present_state_with_the_runtime_lines_and_the_other_reported_cause():
    b = block_of(CORPUS / "real" / "RMN-0097-1.log")
    assert b["id"] == "present-state" and [c["entry"] for c in b["causes"]] == ["RMN-0097"]
    assert b["causes"][0]["score"] >= 2
    assert [o["source"] for o in b["other_causes"]] == ["https://github.com/invoke-ai/InvokeAI/issues/5738"]


def test_the_message_alone_keeps_the_page_order_and_facts_decide():
    # labelled RMN-0272 (a space in the venv path), whose log is the message and PyTorch's notes only
    log = CORPUS / "unseen" / "none-comfyui-space-in-path-invalid-device-function.log"
    b = block_of(log)
    assert b["id"] == "invalid-device-function"
    assert [c["entry"] for c in b["causes"]] == ["RMN-0090", "RMN-0352", "RMN-0272"]
    assert all(c["score"] == 0 for c in b["causes"])
    values = {"python.executable": "/media/me/My Disk/venv/bin/python3", "torch.hip": "6.2.41133",
              "torch.build": "rocm", "torch.missing_gfx": [], "tools.ollama": None, "gpu.gfx": ["gfx1031"],
              "env.ROCR_VISIBLE_DEVICES": None, "env.HIP_VISIBLE_DEVICES": None, "env.CUDA_VISIBLE_DEVICES": None}
    b = block_of(log, values)
    assert b["causes"][0]["entry"] == "RMN-0272"
    ev = {e["id"]: e for c in b["causes"] for e in c["evidence"]}
    assert ev["python-path-has-space-hip6"]["state"] == "found"
    assert ev["torch-lacks-gpu-target"]["state"] == "absent"        # torch has the target: RMN-0090 is less likely
    assert ev["igpu-and-dgpu-visible"]["state"] == "absent"


def test_a_log_without_a_multi_cause_message_has_no_block():
    assert block_of(CORPUS / "real" / "RMN-0001-1.log") is None


def test_deciding_page_needs_a_diagnosis():
    pages = msgscan.usable_pages(REPO)
    line = {"line": 1, "text": "RuntimeError: HIP error: invalid device function"}
    res = [{"id": "RMN-0090", "level": "diagnosis", "evidence": [{"signature": "x", "lines": [line]}]}]
    assert msg.deciding_page(pages, res)[0]["id"] == "invalid-device-function"
    assert msg.deciding_page(pages, [dict(res[0], level="likely")]) is None
    # a diagnosis demoted to likely because the message is its only line (triage/multicause.py) keeps its block
    demoted = [dict(res[0], level="likely", message_page="invalid-device-function")]
    assert msg.deciding_page(pages, demoted)[0]["id"] == "invalid-device-function"
    other = [{"id": "RMN-0001", "level": "diagnosis", "evidence": [{"signature": "y", "lines": [
        {"line": 1, "text": "fatal error: 'cuda_runtime.h' file not found"}]}]}] + res
    assert msg.deciding_page(pages, other) is None        # the deciding line is another entry's, not the message


# -- the CLI -------------------------------------------------------------------------------------------------

def test_cli_json_has_the_message_object_and_the_same_matches():
    log = CORPUS / "unseen" / "RMN-0099-rocminfo-enomem-rx580-atomics.log"
    r = errbook("triage", str(log), "--json", "--site-url", "https://book.example/", root=REPO)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["matches"][0]["id"] == "RMN-0099"
    m = out["message"]
    assert m["id"] == "no-gpu-found" and m["url"] == "https://book.example/messages/no-gpu-found/"
    first = m["causes"][0]
    assert first["entry"] == "RMN-0099" and first["url"] == "https://book.example/entries/RMN-0099/"
    assert first["title"].startswith("Unable to open /dev/kfd")
    found = [e for e in first["evidence"] if e["state"] == "found"]
    assert found and found[0]["lines"][0]["line"] == 2


def test_cli_reads_stdin_once_and_still_finds_the_evidence():
    log = CORPUS / "real" / "RMN-0097-1.log"
    r = errbook("triage", "--json", root=REPO, input=log.read_bytes())
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["message"]["causes"][0]["score"] >= 2


def test_cli_text_says_how_many_causes_and_facts_reorder_them():
    log = CORPUS / "unseen" / "RMN-0021-vega10-rock-not-loaded.log"
    r = errbook("triage", str(log), "--facts", str(MACHINES / "container-no-kfd.json"), root=REPO)
    text = r.stdout.decode()
    assert "This message has 4 known causes" in text
    block = text[text.index("This message has"):]
    # the container without /dev/kfd (a fact of the machine) outranks the line both causes explain
    assert block.index("1. RMN-0022") < block.index("2. RMN-0021")
    assert "+ This container has no /dev/kfd although the host has an AMD GPU (found)" in block
    values = facts_mod.values_of(facts_mod.load(str(MACHINES / "container-no-kfd.json")))
    assert values["container.detected"] is True and values["dev.kfd.present"] is False


def test_the_ci_formats_do_not_change(tmp_path):
    log = CORPUS / "unseen" / "RMN-0099-rocminfo-enomem-rx580-atomics.log"
    r = errbook("triage", str(log), "--format", "markdown", root=REPO)
    assert r.returncode == 0 and b"known cause" not in r.stdout


def test_mini_root_without_pages_has_no_block(mini_root):
    shutil.rmtree(mini_root / "errata" / "messages", ignore_errors=True)
    assert msgscan.usable_pages(mini_root) == []


def test_a_page_being_edited_costs_only_itself(mini_root):
    """A page with a pattern outside the portable subset is left out of triage (validate names it): the log is
    still answered, without a block; the valid page gives one."""
    log = "k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n#include <cuda_runtime.h>\n"
    write_page(mini_root, PAGE)
    ok = json.loads(errbook("triage", "--json", root=mini_root, input=log.encode()).stdout)
    assert ok["message"]["id"] == "test-message"
    assert [e["state"] for e in ok["message"]["causes"][0]["evidence"]] == ["found", "unknown"]
    page = json.loads(json.dumps(PAGE))
    page["causes"][0]["evidence"][0]["pattern"] = "(?<=x)cuda"
    write_page(mini_root, page)
    assert msgscan.usable_pages(mini_root) == []
    r = errbook("triage", "--json", root=mini_root, input=log.encode())
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["matches"][0]["id"] == "RMN-0001" and "message" not in out
