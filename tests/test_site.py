"""The site: `mkdocs build --strict` alone builds everything from the entries, the ledger and the executed
runbooks. Pages are checked in their built HTML."""
import copy
import html as html_mod
import json
import os
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from conftest import BASE_ENTRY, REPO, build, make_root
from errbook.web import entrypage, phrases

INLINE_TAGS = r"</?(?:a|code|strong|em|span|small|b|i|kbd|mark|sub|sup)\b[^>]*>"


def text_of(page: str) -> str:
    """Visible text: inline markup vanishes, block markup separates words."""
    return html_mod.unescape(re.sub(r"<[^>]+>", " ", re.sub(INLINE_TAGS, "", page)))


def squash(s: str) -> str:
    return " ".join(s.split())


# --- a site whose entries carry the schema-1.1 fields, with a fleet ledger and executed runbooks ----------------

RICH = {
    "schema_version": "1.1.0",
    "cause": "The source still includes CUDA's `cuda_runtime.h`, which HIP-Clang neither ships nor searches.",
    "cause_zh": "源码仍包含 CUDA 的 `cuda_runtime.h`，HIP-Clang 不提供也不搜索该头文件。",
    "symptoms_zh": ["hipcc 报错：找不到 cuda_runtime.h 头文件。",
                    "报错末尾是 1 error generated when compiling for gfx90a。"],
    "applies_to": [{"component": "rocm", "versions": ">=5.0, <6.2", "fixed_in": "6.2",
                    "evidence": "Fixture: a range with an end, to show how the page words it."},
                   {"component": "hip", "versions": "any", "evidence": "Fixture."}],
    "reviewed": "2026-11-20",
    "aliases": ["seed-001-compile-cuda-headers", "hipErrorFixtureName"],
}
STEP_ZH = "先用 HIPIFY 转换源码，再改为包含 `hip/hip_runtime.h`。"
PORT_ZH = "移植 include：把 CUDA 头文件换成 HIP 头文件，然后重新构建。"
CHECK_SAYS = "a source file includes cuda_runtime.h while HIP_PLATFORM is amd"
NOT_CHECKABLE = "Which headers a third-party dependency pulls in is only known at build time."
CIRCULATES = "Forum answers that suggest adding the CUDA toolkit's include directory to hipcc's flags."
SEED_TEXT = "001 compile section (cuda_runtime.h paragraph and step 1)"


def _rich_entry() -> dict:
    d = yaml.safe_load(BASE_ENTRY.read_text(encoding="utf-8"))
    d.update(copy.deepcopy(RICH))
    d["fix"][0]["step_zh"] = STEP_ZH
    d["fix"].insert(0, {"step": "Port the include: replace the CUDA header with the HIP one. Then rebuild.",
                        "step_zh": PORT_ZH,
                        "code": {"lang": "cpp", "before": "#include <cuda_runtime.h>",
                                 "after": "#include <hip/hip_runtime.h>"}})
    d["triggers"]["checks"] = [{"id": "cuda-include-on-amd", "says": CHECK_SAYS,
                                "when": [{"fact": "env.HIP_PLATFORM", "equals": "amd"}]}]
    d["triggers"].pop("not_checkable", None)         # an entry has checks or not_checkable, not both
    for c in d.get("corrects") or []:
        c["circulates"] = CIRCULATES
        c.pop("seed", None)
    return d


def _legacy_entry() -> dict:
    """A withdrawn entry written before schema 1.1: the schema still accepts it without the 1.1 fields (active
    entries must carry them), so the page's fallbacks are exercised here. Only its first fix step is translated."""
    d = yaml.safe_load(BASE_ENTRY.read_text(encoding="utf-8"))
    for k in ("cause", "cause_zh", "symptoms_zh", "applies_to", "reviewed"):
        d.pop(k, None)
    d.update(schema_version="1.0.0", id="RMN-0004", related=[], aliases=["seed-001-legacy-cuda-headers"],
             modified="2026-11-30T00:00:00Z", withdrawn="2026-11-30T00:00:00Z")
    d["triggers"]["rocm_versions"] = [">=6.0, <6.2"]
    d["triggers"].pop("not_checkable", None)
    d["triggers"].pop("checks", None)
    for st in d["fix"][1:]:
        st.pop("step_zh", None)
    for c in d.get("corrects") or []:
        c.pop("circulates", None)
        c["seed"] = SEED_TEXT
    return d


def _notebook(n_lines: int, extra_md: str = "") -> dict:
    src = json.loads((REPO / "runbooks" / "compile" / "RMN-0001.ipynb").read_text(encoding="utf-8"))
    src["cells"].append({"cell_type": "markdown", "metadata": {}, "id": "md-extra",
                         "source": "## Section two\n\nText with <script>alert(9)</script> and **bold** words.\n"
                                   + extra_md})
    src["cells"].append({"cell_type": "code", "metadata": {}, "id": "big-out", "execution_count": 1,
                         "source": "for i in range(N): print('line', i)",
                         "outputs": [{"output_type": "stream", "name": "stdout",
                                      "text": "".join(f"line {i}\n" for i in range(n_lines))}]})
    return src


RECORD = {"entry": "RMN-0001", "runbook": "runbooks/compile/RMN-0001.ipynb", "outcome": "passed",
          "tiers": {"static": {"outcome": "passed", "checks": 2, "passed": 2},
                    "toolchain": {"outcome": "passed", "checks": 1, "passed": 1},
                    "rocm": {"outcome": "skipped", "reason": "no AMD GPU with ROCm on this machine"}},
          "fingerprint": {"platform": "cpu"}, "platform_label": "CPU (no GPU)", "date": "2026-11-30T00:00:00Z",
          "commit": "abcdef1234567", "notebook": "docs/verification/runs/RMN-0001--cpu.ipynb"}


def _record(**kw) -> dict:
    """RECORD with fields replaced; notebook=None: a run without an executed notebook (the key is left out,
    as the runner writes it; an empty string is not a valid record)."""
    rec = dict(RECORD, **kw)
    if rec.get("notebook") is None:
        rec.pop("notebook")
    return rec


REPO_URL = "https://git.example/team/errbook"     # the rich site's repository (the default site names none)


@pytest.fixture(scope="module")
def rich(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("rich") / "root", with_docs=True)
    (root / "errata" / "compile" / "RMN-0001.yaml").write_text(
        yaml.safe_dump(_rich_entry(), allow_unicode=True, sort_keys=False), encoding="utf-8")
    plain = yaml.safe_load(BASE_ENTRY.read_text(encoding="utf-8"))        # a second entry: no checks, no runs
    plain.update(id="RMN-0003", related=["RMN-0001"], aliases=[], title="A plain entry about cuda_fp16.h headers")
    plain["verification"]["runbook"] = "runbooks/compile/RMN-0001.ipynb"
    plain["triggers"].pop("checks", None)
    plain["triggers"]["not_checkable"] = NOT_CHECKABLE
    (root / "errata" / "compile" / "RMN-0003.yaml").write_text(yaml.safe_dump(plain, allow_unicode=True),
                                                               encoding="utf-8")
    (root / "errata" / "compile" / "RMN-0004.yaml").write_text(
        yaml.safe_dump(_legacy_entry(), allow_unicode=True, sort_keys=False), encoding="utf-8")
    runs = root / "docs" / "verification" / "runs"
    runs.mkdir(parents=True)
    (runs / "RMN-0001--cpu.ipynb").write_text(json.dumps(_notebook(5000)), encoding="utf-8")
    (runs / "RMN-0001--rocm-gfx942.ipynb").write_text(json.dumps(_notebook(3)), encoding="utf-8")
    big = _notebook(3, extra_md="x" * (6 << 20))          # 6 MiB: gets a page, not published as a download
    (runs / "RMN-0003--cpu.ipynb").write_text(json.dumps(big), encoding="utf-8")
    recs = [RECORD,
            _record(tiers={"gpu": {"outcome": "passed"}}, fingerprint={"platform": "cuda", "gpu": "NVIDIA H200"},
                    platform_label="CUDA · NVIDIA H200", notebook=None, date="2026-11-29T00:00:00Z"),
            _record(outcome="failed",
                    fingerprint={"platform": "rocm", "arch": "gfx942", "rocm": "6.4.1", "gpu": "MI300X"},
                    platform_label="ROCm 6.4.1 · gfx942", date="2026-11-28T00:00:00Z",
                    tiers={"rocm": {"outcome": "failed", "reason": "kernel ran on the wrong device"}},
                    notebook="docs/verification/runs/RMN-0001--rocm-gfx942.ipynb"),
            _record(outcome="passed", fingerprint={"platform": "rocm", "arch": "gfx90a", "rocm": "6.2.0"},
                    platform_label="ROCm 6.2.0 · gfx90a", date="2026-11-27T00:00:00Z",
                    tiers={"rocm": {"outcome": "passed"}},
                    notebook=None),
            _record(entry="RMN-0003", notebook="docs/verification/runs/RMN-0003--cpu.ipynb")]
    from errbook.kb import entries as entries_mod
    from errbook.kb import verified
    digests = {e.id: verified.digest(e, root) for e in entries_mod.load_all(root)[0]}
    recs = [dict(r, digest=digests[r["entry"]]) for r in recs]        # each made at its entry's current content
    (root / "runbooks" / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = root.parent / "out"
    r = build(root, out, ERRBOOK_REPO_URL=REPO_URL)        # a team that named its repository
    assert r.returncode == 0, r.stdout + r.stderr
    return root, out


def page(out: Path, rel: str) -> str:
    return (out / rel / "index.html").read_text(encoding="utf-8")


def article(html: str) -> str:
    """The page's content, without navigation, header and footer."""
    m = re.search(r'<article class="md-content__inner md-typeset">(.*?)</article>', html, re.S)
    return m.group(1) if m else html


# --- the basic site (conftest.built: a real entry and a hostile one) ---------------------------------------------

def test_strict_build_passes(built):
    _, out, r = built
    assert r.returncode == 0, r.stdout + r.stderr


def test_one_page_per_entry_and_indexes(built):
    _, out, _ = built
    assert sorted(p.name for p in (out / "entries").iterdir()) == ["RMN-0001", "RMN-0002"]
    for pg in ("overview", "classes/compile", "classes/runtime", "classes/performance", "corrections",
               "verification", "tags", "triage", "onboarding", "contributing", "schema"):
        assert (out / pg / "index.html").is_file(), pg
    assert json.loads((out / "schema" / "entry-1.schema.json").read_text())["title"].startswith("ROCm")
    compile_idx = page(out, "classes/compile")
    assert "RMN-0001" in compile_idx and "RMN-0002" in compile_idx


def test_entry_text_is_inert(built):
    _, out, _ = built
    html = page(out, "entries/RMN-0002")
    for bad in ("<script>alert", "<img src=x", 'href="javascript:alert', "<iframe"):
        assert bad not in html, bad
    found = []

    class P(HTMLParser):
        in_script = False

        def handle_starttag(self, tag, attrs):
            self.in_script = tag == "script"
            found.extend((tag, k, v) for k, v in attrs
                         if v and "alert" in v and (k.startswith("on") or v.strip().lower().startswith("javascript:")))
            found.extend([(tag, "tag", "")] if tag in ("img", "iframe") else [])

        def handle_data(self, data):
            if self.in_script and "alert(" in data:
                found.append(("script", "body", data[:80]))

    P().feed(html)
    assert found == []
    assert "&lt;script&gt;alert" in html          # shown as text
    assert "not a heading" in html and "<h1 id=\"not-a-heading\"" not in html
    assert "alert(6)" in re.sub(r"<[^>]+>", "", html) and "<script>alert(6)" not in html


def test_entry_page_shows_verification_and_corrections(built):
    _, out, _ = built
    html = page(out, "entries/RMN-0001")
    t = text_of(html)
    assert re.search(r'<small class="eb-badge eb-passed eb-en" data-search-exclude>toolchain: passed \(no GPU\)'
                     r'</small>', html)
    assert re.search(r'<small class="eb-badge eb-passed eb-zh" lang="zh-Hans" data-search-exclude>'
                     r'工具链：通过（无 GPU）</small>', html)               # the same badge for 中文 (web/uitext.py)
    assert "<svg" not in re.search(r'<small class="eb-badge.*?</small>', html).group(0)       # glyph from CSS
    rows = [squash(text_of(r)) for r in re.findall(r"<tr>(.*?)</tr>", html, re.S)]
    # each tier names where it ran: the toolchain tier its compilers, on a machine without a GPU
    assert "toolchain hipcc 5.2, Triton 3.9.0, no GPU passed 2026-11-30 abcdef1234" in rows
    assert "static CPU (no GPU) passed 2026-11-30 abcdef1234" in rows
    assert "Not yet verified on AMD hardware" in t
    assert "What people believe" in t and "What is true" in t
    m = text_of(page(out, "verification"))
    assert "CUDA · NVIDIA H200" in m and "ROCm (AMD GPU)" in m
    assert "ledger.jsonl:3: corrupt record" in m
    c = text_of(page(out, "corrections"))
    assert "ROCM_PATH only tells tools where ROCm is" in c


def test_related_links_both_ways(built):
    _, out, _ = built
    assert "../RMN-0002/" in page(out, "entries/RMN-0001")


def test_fallbacks_when_entries_lack_the_11_fields(rich):
    """An entry without the 1.1 fields (only a withdrawn one may lack them now): the cause is the summary's first
    sentence, 'updated' stands in for 'reviewed', the trigger's rocm_versions for applies_to, a fix step without
    step_zh shows its English text in the 中文 tab, and seed pointers never reach the page."""
    root, out = rich
    d = yaml.safe_load((root / "errata" / "compile" / "RMN-0004.yaml").read_text(encoding="utf-8"))
    assert d.get("withdrawn") and not {"cause", "cause_zh", "symptoms_zh", "reviewed", "applies_to"} & set(d)
    assert [bool(st.get("step_zh")) for st in d["fix"]] == [True, False, False, False]
    html = article(page(out, "entries/RMN-0004"))
    t = squash(text_of(html))
    assert "Withdrawn on 2026-11-30" in t
    assert "HIP-Clang compiling for an AMD target does not ship or search the CUDA headers." in t
    cause = re.search(r'<p class="eb-cause">(.*?)</p>', html, re.S).group(1)
    assert "HIP-Clang compiling for an AMD target" in cause
    assert "Source that still includes" not in cause                       # one sentence, not the summary
    assert "Applies to ROCm from 6.0, before 6.2 · updated 2026-11-30" in t
    assert "seed-001" not in t and SEED_TEXT not in t
    assert "the team's old internal field notes" in t
    symptoms = html[html.find('id="symptoms"'):html.find('id="what-the-log-says"')]
    assert "中文" not in text_of(symptoms)                                   # no symptoms_zh: no empty tab
    assert "Checked on a machine" not in t and "Not checkable on a machine" not in t
    fix = html[html.find('id="fix-steps"'):html.find('id="verification"')]
    zh_first = fix.find(d["fix"][0]["step_zh"][:12])
    assert zh_first > 0
    assert fix.find("Translate the source with HIPIFY", zh_first) > zh_first    # untranslated step: English in 中文


# --- entry page layout with the 1.1 fields ---------------------------------------------------------------------

def test_entry_page_top_is_title_cause_then_fix_box(rich):
    _, out = rich
    html = article(page(out, "entries/RMN-0001"))
    pos = {k: html.find(v) for k, v in {
        "h1": "<h1", "cause": 'class="eb-cause"', "fix box": "eb-fix", "symptoms": 'id="symptoms"',
        "log": 'id="what-the-log-says"', "triggers": 'id="triggers"', "root cause": 'id="root-cause"',
        "fix": 'id="fix-steps"', "references": 'id="references"'}.items()}
    assert all(v >= 0 for v in pos.values()), pos
    assert list(pos) == sorted(pos, key=pos.get), pos
    cause = re.search(r'<p class="eb-cause">(.*?)</p>', html, re.S).group(1)
    assert "neither ships nor searches" in cause and "<code>cuda_runtime.h</code>" in cause
    box = html[pos["fix box"]:pos["symptoms"]]
    code = text_of(re.search(r"<pre.*?</pre>", box, re.S).group(0))
    assert "Port the include: replace the CUDA header with the HIP one." in text_of(box)
    assert code.strip() == "#include <hip/hip_runtime.h>"                    # the corrected command only
    assert 'id="fix"' in box and 'href="#fix-steps"' in box and "All 5 steps" in text_of(box)
    assert ("Applies to ROCm from 5.0, before 6.2 (changed in 6.2); HIP any version · reviewed 2026-11-20"
            in squash(text_of(box)))
    assert "eb-badge eb-passed" in box and "static: passed" in text_of(box) and "toolchain: passed" in text_of(box)


def test_log_examples_first_patterns_collapsed(rich):
    _, out = rich
    html = article(page(out, "entries/RMN-0001"))
    sec = html[html.find('id="what-the-log-says"'):html.find('id="triggers"')]
    example = sec.find("1 error generated when compiling for gfx90a")
    pattern = sec.find("file not found|No such file or directory")
    assert 0 <= example < pattern
    details = re.findall(r"<details[^>]*>", sec)
    assert details and not any("open" in d for d in details)     # regexes are collapsed
    assert sec.rfind("<details", 0, pattern) > sec.rfind("</details>", 0, pattern)


def test_chinese_tab_has_cause_symptoms_and_fix_steps(rich):
    _, out = rich
    html = article(page(out, "entries/RMN-0001"))
    tabs = re.findall(r'<label[^>]*>(English|中文)</label>', html)
    assert tabs.count("中文") >= 2                      # summary, symptoms (fix steps: English and 中文 side by side)
    steps = html[html.find('id="fix-steps"'):html.find('id="verification"')]
    assert f'<span class="eb-zh" lang="zh-Hans">{PORT_ZH}</span>' in steps
    t = text_of(html)
    assert "源码仍包含 CUDA 的" in t                       # cause_zh
    for s in RICH["symptoms_zh"]:
        assert s in t
    assert "先用 HIPIFY 转换源码" in t and PORT_ZH in t


def test_before_after_opens_on_after(rich):
    _, out = rich
    html = article(page(out, "entries/RMN-0001"))
    fix = html[html.find('id="fix-steps"'):]
    group = re.search(r'<div class="tabbed-set tabbed-alternate"[^>]*>(?:(?!<div '
                      r'class="tabbed-set).)*?Before.*?After.*?</div>', fix, re.S)
    assert group
    inputs = re.findall(r"<input[^>]*>", group.group(0))
    labels = re.findall(r"<label[^>]*>([^<]*)</label>", group.group(0))
    assert labels[:2] == ["Before", "After"]
    assert "checked" not in inputs[0] and "checked" in inputs[1]


def test_trigger_checks_in_plain_words(rich):
    _, out = rich
    t = squash(text_of(article(page(out, "entries/RMN-0001"))))
    assert ("Checked on a machine: errbook doctor reports this entry when one of these holds "
            f"{CHECK_SAYS} — when HIP_PLATFORM is 'amd'.") in t
    t3 = squash(text_of(article(page(out, "entries/RMN-0003"))))
    assert f"Not checkable on a machine {NOT_CHECKABLE}" in t3


def test_aliases_show_identifiers_not_internal_ids(rich):
    _, out = rich
    t = text_of(article(page(out, "entries/RMN-0001")))
    assert "hipErrorFixtureName" in t and "seed-001" not in t


def test_corrections_say_where_advice_circulates(rich):
    _, out = rich
    for rel in ("corrections", "entries/RMN-0001"):
        t = squash(text_of(article(page(out, rel))))
        assert "Where it circulates: " + CIRCULATES in t, rel
        assert SEED_TEXT not in t, rel


def test_edit_and_runbook_links_point_at_the_sources(rich):
    _, out = rich
    html = page(out, "entries/RMN-0001")
    edit = re.search(r'<a href="([^"]+)"[^>]*class="md-content__button md-icon"', html)
    assert edit and edit.group(1) == REPO_URL + "/edit/main/errata/compile/RMN-0001.yaml", edit and edit.group(1)
    assert REPO_URL + "/blob/main/runbooks/compile/RMN-0001.ipynb" in html
    assert "md-content__button" not in page(out, "overview")             # generated: nothing to edit
    assert re.search(r'href="[^"]+/edit/main/docs/contributing\.md"', page(out, "contributing"))


def test_no_repository_named_means_no_repository_or_edit_links(built):
    """Without ERRBOOK_REPO_URL the site links no repository: no edit button, no source link, no placeholder host
    (a link to errbook.invalid leads nowhere; issue 27 item 15)."""
    _, out, r = built
    assert r.returncode == 0, r.stderr
    for rel in ("entries/RMN-0001", "contributing", "index"):
        html = page(out, rel) if rel != "index" else (out / "index.html").read_text(encoding="utf-8")
        assert "md-content__button" not in html and 'class="md-source"' not in html, rel
        assert "errbook.invalid" not in re.sub(r'"\$id"[^,]*', "", html), rel


def test_a_cosmetic_entry_is_boosted_less_in_search_on_the_page_and_in_errbook_search():
    """One source for the page's front matter and the CLI's index: a harmless-message entry gets half the boost,
    so a generic query reaches the causes first; its own words still find it (test_browser's error-text test)."""
    from errbook.kb import entries as entries_mod
    from errbook.web import searchindex
    loaded, _ = entries_mod.load_all(REPO)
    act = {e.id: e for e in entries_mod.active(loaded)}
    cosmetic = [i for i, e in act.items() if e.data.get("cosmetic") is True]
    assert "RMN-0419" in cosmetic and "RMN-0092" not in cosmetic
    assert entrypage.search_boost(act["RMN-0419"].data) == entrypage.COSMETIC_SEARCH_BOOST
    assert entrypage.COSMETIC_SEARCH_BOOST < entrypage.ENTRY_SEARCH_BOOST
    assert entrypage.search_boost(act["RMN-0092"].data) == entrypage.ENTRY_SEARCH_BOOST
    boosts = {d["ref"].split("#")[0]: d["boost"] for d in searchindex.entry_docs([act["RMN-0419"], act["RMN-0092"]])}
    assert boosts == {"RMN-0419": entrypage.COSMETIC_SEARCH_BOOST, "RMN-0092": entrypage.ENTRY_SEARCH_BOOST}
    assert f'"search": {{"boost": {entrypage.COSMETIC_SEARCH_BOOST}}}' in entrypage._header(act["RMN-0419"].data)[0]


def test_entry_search_metadata(rich):
    _, out = rich
    idx = json.loads((out / "search" / "search_index.json").read_text())
    docs = idx["docs"]
    assert not [d for d in docs if d["location"].startswith("verification/runs/")]     # executed runs: not indexed
    top = next(d for d in docs if d["location"] == "entries/RMN-0001/")
    assert top["boost"] == entrypage.ENTRY_SEARCH_BOOST
    assert "hipErrorFixtureName" in top["text"]
    assert "fatal error: &#x27;cuda_runtime.h&#x27;" in html_mod.escape(html_mod.unescape(top["text"]))
    assert not [d for d in docs if d["location"].startswith("entries/RMN-0001/#verification")]
    assert "static: passed" not in top["text"]                                           # badges are not text
    assert idx["config"]["fields"]["tags"]["boost"] < 10                                  # not Material's 1e6
    zh = [d for d in docs if d["location"].startswith("entries/RMN-0001")]
    assert any("\u200b" in d["text"] for d in zh)        # jieba segmentation inserted separators
    # the machine-checks page: its checks table repeats the entry pages (not indexed), its facts are its own
    assert any(CHECK_SAYS in d["text"] for d in docs if d["location"].startswith("entries/RMN-0001/"))
    checks_page = [d for d in docs if d["location"].startswith("machine-checks/")]
    assert checks_page and not [d for d in checks_page if CHECK_SAYS in d["text"] or "RMN-0001" in d["text"]]
    assert any(d["location"] == "machine-checks/#facts" and "dev.kfd.rw" in d["text"] for d in checks_page)


@pytest.mark.node
def test_search_query_rewrite():
    """Pasted error text becomes plain words for lunr: complete words exact, a last word that may still be being
    typed a prefix (in a query of 2 to 4 words only from 3 characters: '=0' must not match every 0-word; never in
    a longer query)."""
    js = ("globalThis.self = globalThis; require(process.argv[1]);"
          "console.log(JSON.stringify(process.argv.slice(2).map((q) => self.ErrbookSearchQuery(q))));")
    qs = ["ROCBLAS_INTERNAL_FP16_ALT_IMPL=0", "Config file not found at", "HIP out of mem", "5", "gp",
          "Unable to open /dev/kfd read-write: Cannot allocate memory", "hipErrorNoDevice ",
          "the ROCBLAS_VERBOSE_HIPBLASLT_ERROR environment variable is set"]
    r = subprocess.run(["node", "-e", js, str(REPO / "scripts/errbook/web/assets/search-query.js"), *qs],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [
        "ROCBLAS_INTERNAL_FP16_ALT_IMPL~0 0~0", "Config~0 file~0 not~0 found~0 at~0", "HIP~0 out~0 of~0 mem", "5", "gp",
        "Unable~0 to~0 open~0 /dev/kfd~0 read-write~0 Cannot~0 allocate~0 memory~0", "hipErrorNoDevice~0",
        # more than 4 words: a pasted line, its last word complete (not set* matching every set_xxx identifier)
        "the~0 ROCBLAS_VERBOSE_HIPBLASLT_ERROR~0 environment~0 variable~0 is~0 set~0"]


def test_primary_identifier():
    d = yaml.safe_load(BASE_ENTRY.read_text(encoding="utf-8"))
    assert phrases.primary_identifier(d) == "fatal error: 'cuda_runtime.h' file not found"
    d["aliases"] = ["seed-001-x", "hipErrorNoDevice"]
    assert phrases.primary_identifier(d) == "hipErrorNoDevice"
    d["aliases"] = ["tensile-library-dat"]                 # a slug is not an identifier
    assert phrases.primary_identifier(d) == "fatal error: 'cuda_runtime.h' file not found"


def test_version_words_and_first_sentences():
    assert phrases.version_words(">=6.0, <6.2") == "from 6.0, before 6.2"
    assert phrases.version_words(">=6.0,<=6.2") == "6.0–6.2"
    assert phrases.version_words("any") == "any version"
    assert phrases.first_sentences("Use `torch.cuda.get_arch_list()`. Then rebuild.", 40) == \
        "Use `torch.cuda.get_arch_list()`."
    assert phrases.first_sentences("One e.g. two. Three.", 14) == "One e.g. two."
    assert phrases.first_sentences("One. Two.", 40, most=1) == "One."
    long = phrases.first_sentences("word " * 100, 50)
    assert len(long) <= 52 and long.endswith("…")


# --- executed runbooks --------------------------------------------------------------------------------------------

def test_run_page_title_badges_backlink_and_truncation(rich):
    _, out = rich
    html = page(out, "verification/runs/RMN-0001--cpu")
    assert "<title>RMN-0001 on CPU (no GPU), 2026-11-30" in html
    art = article(html)
    t = squash(text_of(art))
    assert "static: passed (2/2 checks)" in t and "rocm: skipped" in t
    assert "3 of 3 checks ran on this machine." in t
    assert 'eb-badge eb-passed' in art and 'eb-badge eb-skipped' in art
    assert 'href="../../../entries/RMN-0001/"' in art
    assert "line 4999" not in t and "Output truncated for the page" in t
    assert len(html) < 400_000
    assert "<script>alert(9)" not in art and "&lt;script&gt;alert(9)" in art
    assert "<strong>bold</strong>" in art
    assert 'href="../RMN-0001--cpu.ipynb"' in art and (out / "verification/runs/RMN-0001--cpu.ipynb").is_file()
    ids = set(re.findall(r'id="([^"]+)"', html))
    anchors = re.findall(r'<a href="#([^"]+)" class="md-nav__link"', html)
    assert anchors and not [a for a in anchors if a not in ids]        # no broken table-of-contents anchors


def test_run_page_headline_counts_the_checks_that_ran():
    from errbook.web import runpage
    tiers = {"static": {"outcome": "passed", "checks": 2, "passed": 2},
             "toolchain": {"outcome": "failed", "checks": 1, "passed": 0},
             "gpu": {"outcome": "skipped", "checks": 3, "passed": 0, "reason": "no GPU"},
             "rocm": {"outcome": "skipped", "reason": "no AMD GPU"}, "odd": {"checks": True}, "bad": "x"}
    assert runpage.checks_ran(tiers) == (3, 6)
    assert runpage.checks_ran({}) == (0, 0)


def test_oversize_notebook_gets_a_page_but_no_download(rich):
    _, out = rich
    assert (out / "verification/runs/RMN-0003--cpu/index.html").is_file()
    assert not (out / "verification/runs/RMN-0003--cpu.ipynb").exists()
    assert "too large to publish" in text_of(page(out, "verification/runs/RMN-0003--cpu"))


def test_verification_matrix_shows_the_fleet(rich):
    _, out = rich
    html = article(page(out, "verification"))
    assert "Ledger problems" not in text_of(html)                           # the fixture's records are valid
    html = html[html.index('class="eb-matrix"'):]                           # the matrix, after its summary
    heads = [squash(text_of(h)) for h in re.findall(r"<th[^>]*>(.*?)</th>", html, re.S)]
    assert heads[:5] == ["Entry", "gfx90a · ROCm 6.2.0", "gfx942 · ROCm 6.4.1", "CUDA · NVIDIA H200", "CPU (no GPU)"]
    row = next(r for r in re.findall(r"<tr>(.*?)</tr>", html, re.S) if "RMN-0001" in r)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    assert "cuda_runtime.h" in text_of(cells[0])                                        # titles
    assert 'eb-badge eb-failed' in cells[2] and "2026-11-28" in text_of(cells[2])
    assert 'href="runs/RMN-0001--rocm-gfx942/"' in cells[2]                             # link to the run
    assert 'eb-badge eb-passed' in cells[4] and 'href="runs/RMN-0001--cpu/"' in cells[4]
    assert "no run" in text_of(re.findall(r"<td[^>]*>(.*?)</td>",
                                          next(r for r in re.findall(r"<tr>(.*?)</tr>", html, re.S)
                                               if "RMN-0003" in r), re.S)[1])


@pytest.mark.slow
def test_hostile_ledger_values_are_text(tmp_path):
    """A valid record carries markup in every free-text field the pages show (platform label, fingerprint,
    a tier's reason); an invalid one is reported as a ledger problem. Both reach the pages as text only."""
    root = make_root(tmp_path / "root", with_docs=True)
    evil = "<img src=x onerror=alert(1)>"
    rec = _record(outcome="failed", platform_label=evil, notebook=None,
                  tiers={"static": {"outcome": "failed", "reason": evil}},
                  fingerprint={"platform": "rocm", "arch": evil, "rocm": evil})
    bad = dict(RECORD, outcome=evil, date="2026-11-30" + evil, commit=evil, notebook=evil,
               tiers={"static": {"outcome": evil, "reason": evil}})
    (root / "runbooks" / "ledger.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps(bad) + "\n")
    r = build(root, tmp_path / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    for rel in ("verification", "entries/RMN-0001", "overview"):
        assert "<img src=x" not in page(tmp_path / "out", rel), rel
    matrix = page(tmp_path / "out", "verification")
    assert "&lt;img src=x" in matrix and "ledger.jsonl:2:" in text_of(matrix)      # the valid record is shown
    assert "&lt;img src=x" in page(tmp_path / "out", "entries/RMN-0001")


# --- index pages, home, contributing, paste-page assets ----------------------------------------------------------

def test_entry_tables_are_filterable(rich):
    _, out = rich
    for rel in ("overview", "classes/compile"):
        html = article(page(out, rel))
        assert '<div class="eb-filter"></div>' in html
        data = json.loads(re.search(r'<script type="application/json" class="eb-filter-data">(.*?)</script>',
                                    html, re.S).group(1))
        assert [f["label"] for f in data["filters"]] == ["Class", "Tags", "GPU", "ROCm", "Verified"]
        ids = re.findall(r"<tr>\s*<td[^>]*><a[^>]*>(RMN-\d{4})</a>", html)
        assert ids and sorted(data["rows"]) == sorted(ids)                  # a row of data for every table row
        heads = [squash(text_of(h)) for h in re.findall(r"<th[^>]*>(.*?)</th>", html, re.S)]
        assert heads == ["Entry", "Title", "Class", "Tags", "GPU", "ROCm", "Verified"]
        # RMN-0001 passed on an AMD GPU (gfx90a), in a CUDA gpu tier and on a CPU-only machine: each named
        assert "from 5.0, before 6.2" in text_of(html) and "AMD GPU · CUDA gpu tier · CPU only" in text_of(html)
    assert "assets/errbook/tables.js" in page(out, "overview")


def test_home_says_where_the_tools_are(rich):
    _, out = rich
    t = squash(text_of(article(page(out, ""))))
    assert "bash scripts/bootstrap.sh serve" in t and "bash scripts/bootstrap.sh install" in t
    assert "errbook run RMN-0090" in t and "Get the tools" in t


def test_contributing_shows_link_syntax(built):
    _, out, _ = built
    html = article(page(out, "contributing"))
    assert "<code>[[RMN-0001]]</code>" in html


def test_cjk_font_stack(built):
    _, out, _ = built
    css = (out / "assets" / "errbook" / "errbook.css").read_text()
    assert re.search(r"--md-text-font:[^;]*Noto Sans CJK SC[^;]*Microsoft YaHei", css, re.S) or \
        re.search(r"--md-text-font:[^;]*Microsoft YaHei[^;]*Noto Sans CJK SC", css, re.S)
    assert "assets/errbook/errbook.css" in page(out, "entries/RMN-0001")


@pytest.mark.slow
def test_sitemap_and_404_under_a_sub_path(tmp_path):
    root = make_root(tmp_path / "root", with_docs=True)
    env = dict(os.environ, ERRBOOK_SITE_URL="https://docs.example.org/errbook/")
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(root / "mkdocs.yml"),
                        "-d", str(tmp_path / "out")], capture_output=True, text=True, cwd=root,
                       env=dict(env, NO_MKDOCS_2_WARNING="1"), timeout=600)
    assert r.returncode == 0, r.stderr
    locs = re.findall(r"<loc>([^<]+)</loc>", (tmp_path / "out" / "sitemap.xml").read_text())
    assert locs and all(u.startswith("https://docs.example.org/errbook/") for u in locs)
    assert "https://docs.example.org/errbook/entries/RMN-0001/" in locs
    notfound = (tmp_path / "out" / "404.html").read_text()
    assets = re.findall(r'(?:href|src)="([^"]*assets/[^"]+)"', notfound)
    assert assets and all(a.startswith("/errbook/assets/") for a in assets), assets


@pytest.mark.slow
def test_hand_written_notebooks_render_through_mkdocs_jupyter(tmp_path):
    """mkdocs-jupyter stays the renderer of notebooks written as documentation (docs/notebooks/); executed
    runbooks get the plugin's own pages."""
    root = make_root(tmp_path / "root", with_docs=True)
    (root / "docs" / "notebooks").mkdir()
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# A worked example\n\nSome text."},
                    {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "print(6 * 7)",
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": "42\n"}]}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    (root / "docs" / "notebooks" / "demo.ipynb").write_text(json.dumps(nb))
    r = build(root, tmp_path / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    html = (tmp_path / "out" / "notebooks" / "demo" / "index.html").read_text()
    assert "jp-Notebook" in html and "42" in html


def test_paste_page_assets(built):
    _, out, _ = built
    js = (out / "assets" / "errbook" / "signatures.js").read_text()
    assert js.startswith("(typeof self !== 'undefined' ? self : globalThis).ERRBOOK_BUNDLE = ")
    bundle = json.loads(js.split(" = ", 1)[1].rstrip().rstrip(";"))
    assert "cuda-header-not-found" in js
    meta = bundle["entries"]["RMN-0001"]
    assert meta["cause"] and meta["title_zh"]
    # The paste page's address map: site-root URLs, each a page that was built (the root is given from the
    # folder of the scripts that read it).
    site = bundle["site"]
    assert site["fix"] == "entries/{id}/#fix" and site["root"] == "../../"
    assert (out / "assets" / "errbook" / site["root"]).resolve() == out.resolve()
    for name, u in site.items():
        if name not in ("root", "message"):      # this site has no message page: test_site_messages.py has one
            u = u.format(id="RMN-0001", klass="runtime").split("#")[0]
            assert (out / u / "index.html").is_file(), (name, u)
    for name in ("engine.js", "paste.js", "triage-worker.js", "search-query.js"):
        assert (out / "assets" / "errbook" / name).is_file(), name
    assert (out / "assets" / "javascripts" / "workers" / "errbook-search.js").is_file()
    assert 'src="../assets/errbook/search-query.js"></script></head>' in page(out, "triage")


@pytest.mark.slow
def test_invalid_entry_fails_the_build(tmp_path):
    root = make_root(tmp_path / "root", with_docs=True)
    p = root / "errata" / "compile" / "RMN-0001.yaml"
    p.write_text(p.read_text().replace("    priority: 4", "    priority: high"))
    r = build(root, tmp_path / "out")
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "RMN-0001.yaml" in out and "signatures[0].priority" in out


@pytest.mark.slow
def test_unknown_entry_reference_fails_the_build(tmp_path):
    root = make_root(tmp_path / "root", with_docs=True)
    (root / "docs" / "onboarding.md").write_text("# x\n\n[[RMN-0404]]\n")
    r = build(root, tmp_path / "out")
    assert r.returncode != 0 and "RMN-0404" in r.stdout + r.stderr


def test_site_loads_nothing_from_other_hosts(built):
    """No fonts, scripts, images or styles from a CDN: the site works offline and leaks nothing."""
    _, out, _ = built
    for pg in out.rglob("*.html"):
        html = pg.read_text(encoding="utf-8")
        external = re.findall(r'<(?:script|img|link|iframe)[^>]+(?:src|href)="(https?://[^"]+)"', html)
        external = [u for u in external if not u.startswith("https://rocm.docs")]
        assert not [u for u in external
                    if "stylesheet" in u or u.endswith((".js", ".css", ".svg", ".png", ".woff2"))], (pg, external)
