"""Entry pages split the fix into Confirm (the check and the output that confirms it) and Fix (the change), give
every step its own anchor and permalink, and carry every Chinese block with lang="zh-Hans" (issue 27 items 9, 10).
Checked in the built HTML of a small site; tests/test_browser_fixbox.py checks the same in Chromium."""
import re
from html.parser import HTMLParser

import pytest
import yaml

from conftest import BASE_ENTRY, build, errbook, make_root

CHECK = {"kind": "confirm", "step": "Find the file that includes the CUDA header. Read its path.",
         "step_zh": "找出包含 CUDA 头文件的源文件。",
         "code": {"lang": "bash", "snippet": "grep -rn cuda_runtime.h src/"},
         "expect": "A line such as `src/k.cu:1:#include <cuda_runtime.h>`.",
         "expect_zh": "类似 `src/k.cu:1:#include <cuda_runtime.h>` 的一行。"}
CHECK2 = {"kind": "confirm", "step": "Check which compiler the build runs.", "step_zh": "检查构建使用哪个编译器。",
          "code": {"lang": "bash", "snippet": "grep CMAKE_CXX_COMPILER: build/CMakeCache.txt"}}
ZH = "zh-Hans"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """RMN-0001 with two checks before its fix steps; RMN-0003, the same entry without checks."""
    root = make_root(tmp_path_factory.mktemp("fixbox") / "root", with_docs=True)
    d = yaml.safe_load(BASE_ENTRY.read_text(encoding="utf-8"))
    d["fix"] = [s for s in d["fix"] if s.get("kind") != "confirm"]
    plain = dict(d, id="RMN-0003", aliases=[], related=[], title="The same entry, no checks")
    d["fix"] = [CHECK, CHECK2] + d["fix"]
    (root / "errata" / "compile" / "RMN-0001.yaml").write_text(yaml.safe_dump(d, allow_unicode=True), encoding="utf-8")
    (root / "errata" / "compile" / "RMN-0003.yaml").write_text(yaml.safe_dump(plain, allow_unicode=True),
                                                               encoding="utf-8")
    out = root.parent / "out"
    r = build(root, out)
    assert r.returncode == 0, r.stdout + r.stderr
    return root, out, d


def article(out, eid: str) -> str:
    html = (out / "entries" / eid / "index.html").read_text(encoding="utf-8")
    return re.search(r'<article class="md-content__inner md-typeset">(.*?)</article>', html, re.S).group(1)


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_first_screen_is_title_cause_confirm_then_fix(site):
    _, out, d = site
    html = article(out, "RMN-0001")
    marks = ["<h1", 'class="eb-zh eb-title-zh"', '<p class="eb-cause">', 'class="eb-cause eb-zh"',
             'class="eb-fixbox" id="fix"', 'id="confirm-1"', 'id="fix-1"', 'id="symptoms"', 'id="fix-steps"',
             'id="confirm-2"', 'id="fix-2"', 'id="references"']
    pos = [html.find(m) for m in marks]
    assert min(pos) >= 0 and pos == sorted(pos), dict(zip(marks, pos, strict=True))
    box = html[html.find('id="fix"'):html.find('id="symptoms"')]
    confirm = box[:box.find('id="fix-1"')]
    assert "admonition info eb-confirm" in confirm
    assert "Confirm — check 1 of 2" in text(confirm) and "确认 — 第 1 项，共 2 项" in text(confirm)
    assert "Find the file that includes the CUDA header." in text(confirm) and "grep -rn cuda_runtime.h src/" in confirm
    assert "Expected if this is the problem:" in text(confirm) and "若是此问题，会看到：" in text(confirm)
    assert "<code>src/k.cu:1:#include &lt;cuda_runtime.h&gt;</code>" in confirm
    fix = box[box.find('id="fix-1"'):]
    n = len(d["fix"]) - 2
    assert f"Fix — step 1 of {n}" in text(fix) and f"修复 — 第 1 步，共 {n} 步" in text(fix)
    assert " ".join(d["fix"][2]["step"].split())[:40] in text(fix)
    assert "Check which compiler" not in box                          # the second check is in the list only
    assert 'href="#fix-steps"' in fix and f"All {len(d['fix'])} steps" in text(fix)


def test_every_step_has_one_anchor_and_a_permalink_to_it(site):
    _, out, d = site
    html = article(out, "RMN-0001")
    n = len(d["fix"]) - 2
    names = ["confirm-1", "confirm-2"] + [f"fix-{i}" for i in range(1, n + 1)]
    for name in names:
        assert html.count(f'id="{name}"') == 1, name
        links = re.findall(rf'<a class="headerlink eb-step-link" href="#{name}"[^>]*>', html)
        assert links, name
    assert set(re.findall(r'href="#((?:confirm|fix)-\d+)"', html)) == set(names)     # no link without its anchor
    steps = html[html.find('id="fix-steps"'):html.find('id="references"')]
    labels = re.findall(r'<p class="eb-steps-label">(.*?)</p>', steps, re.S)
    assert [text(x) for x in labels] == ["Confirm 确认", "Fix 修复"]
    assert steps.find('id="confirm-2"') < steps.find("eb-steps-label", steps.find("eb-steps-label") + 1) \
        < steps.find('id="fix-2"')


def test_an_entry_without_checks_has_only_the_fix(site):
    _, out, d = site
    html = article(out, "RMN-0003")
    box = html[html.find('id="fix"'):html.find('id="symptoms"')]
    assert "eb-confirm" not in box and 'id="fix-1"' in box
    assert f"Fix — step 1 of {len(d['fix']) - 2}" in text(box)
    assert "eb-steps-label" not in html                                  # one list, no Confirm/Fix labels


class _Lang(HTMLParser):
    """Chinese text outside any element with lang="zh-Hans", and eb-zh elements without it."""
    VOID = {"br", "img", "input", "hr", "meta", "link", "wbr", "source", "col", "area", "base", "embed", "param",
            "track"}

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, str | None]] = []
        self.loose: list[str] = []
        self.unmarked: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        lang = a.get("lang") or (self.stack[-1][1] if self.stack else None)
        if "eb-zh" in (a.get("class") or "").split() and a.get("lang") != ZH:
            self.unmarked.append(tag)
        if tag not in self.VOID:
            self.stack.append((tag, lang))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        tag, lang = self.stack[-1] if self.stack else ("", None)
        if re.search(r"[\u4e00-\u9fff]", data) and lang != ZH and not (tag == "label" and data.strip() == "中文"):
            self.loose.append(data.strip()[:40])


def test_chinese_blocks_carry_lang_on_the_whole_page(site):
    """Every Chinese text of the article sits inside lang="zh-Hans" (the 中文 tab labels excepted: Material
    writes them), and every eb-zh element carries it."""
    _, out, _ = site
    for eid in ("RMN-0001", "RMN-0003"):
        p = _Lang()
        p.feed(article(out, eid))
        assert not p.loose and not p.unmarked, (eid, p.loose[:5], p.unmarked[:5])


def test_show_splits_confirm_and_fix(site):
    root, _, d = site
    out = errbook("show", "RMN-0001", "--no-color", root=root).stdout.decode()
    assert out.index("\nConfirm\n") < out.index("1. Find the file") < out.index("\nFix\n")
    assert "Expected if this is the problem: A line such as" in " ".join(out.split())
    fix = " ".join(out[out.index("\nFix\n"):].split())
    assert fix.startswith("Fix 1. " + " ".join(d["fix"][2]["step"].split())[:30])
    zh = errbook("show", "RMN-0001", "--lang", "zh", "--no-color", root=root).stdout.decode()
    assert "Confirm · 确认" in zh and "若是此问题，会看到：" in zh and "找出包含 CUDA 头文件的源文件。" in zh
