"""The reader's 中文 in a real Chromium: with 中文 chosen on an entry page, the first screen's own words (the
Applies-to line, the verification badges, the line naming the entry) are Chinese, in lang="zh-Hans", with only the
entry's data (component names, versions, dates, platforms) left in Latin letters; the choice carries to the paste
page, whose labels and result titles are then Chinese, and a choice made there carries back to the entry pages."""
# ruff: noqa: F811  (the fixtures imported from test_browser come back as the tests' parameters, as pytest wants)
import re

import test_browser
from errbook.web import phrases
from test_browser import browser, open_paste, real_entries, real_site, server, viewport, wait_for  # noqa: F401

pytestmark = test_browser.pytestmark          # a browser test, skipped without Debian's chromium

CJK = re.compile(r"[\u4e00-\u9fff]")
# names that stay as written in Chinese text (platforms), besides the entry's own data
PLATFORMS = {"GPU", "ROCm", "CUDA", "CPU"}

# The first screen's own words as shown: each displayed element's text and its language.
SHOWN_JS = """
const shown = (sel) => [...document.querySelectorAll(sel)]
  .filter(e => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden');
const lang = (e) => { const l = e.closest('[lang]'); return l ? l.getAttribute('lang') : null; };
const meta = document.querySelector('.eb-fixbox .eb-fix-meta');
const applies = meta ? [...meta.querySelectorAll(':scope > p > span')] : [];
const names = [...document.querySelectorAll('article p')].find(p => p.querySelector('strong') &&
  /^RMN-\\d{4}$/.test(p.querySelector('strong').innerText.trim()));
return {
  applies: shown('.eb-fixbox .eb-fix-meta > p > span').map(e => ({text: e.innerText, lang: lang(e)})),
  appliesAll: applies.length,
  badges: shown('.eb-fixbox .eb-badge').map(e => ({text: e.innerText, lang: lang(e),
                                                   display: getComputedStyle(e).display})),
  badgesAll: document.querySelectorAll('.eb-fixbox .eb-badge').length,
  names: names ? names.innerText : null,
};
"""


def _latin_words(s: str) -> set[str]:
    return set(re.findall(r"[A-Za-z][A-Za-z0-9_.+-]*", s))


def _entry_data_words(d: dict) -> set[str]:
    """The Latin words the entry's own data may put in the Applies-to line: component names, versions, archs."""
    data = [phrases.component_name(a["component"]) + " " + str(a["versions"]) + " " + str(a.get("fixed_in") or "")
            for a in d.get("applies_to") or []]
    t = d.get("triggers") or {}
    data += [str(v) for v in t.get("rocm_versions") or []] + list(t.get("gpu_archs") or [])
    return _latin_words(" ".join(data)) | PLATFORMS


def _choose(browser, lang: str) -> None:
    from selenium.webdriver.common.by import By
    b = wait_for(lambda: [x for x in browser.find_elements(By.CSS_SELECTOR, ".eb-langswitch button") if
                          x.get_attribute("data-eb-lang") == lang and x.is_displayed()])[0]
    b.click()
    wait_for(lambda: browser.execute_script("return document.documentElement.dataset.ebLang") == lang)


def _entry(real_entries):
    """An entry whose first screen has an Applies-to range and a Chinese title (so the page has the switch)."""
    return next(e for e in real_entries if e.data.get("applies_to") and e.data.get("title_zh")
                and any(a["versions"] not in ("any", "") for a in e.data["applies_to"]))


def test_chinese_applies_to_line_and_badges(browser, real_site, real_entries):
    e = _entry(real_entries)
    browser.get(f"{real_site}/entries/{e.id}/")
    browser.execute_script("localStorage.clear()")
    browser.refresh()
    try:
        m = browser.execute_script(SHOWN_JS)
        # English first: the English line and badges are the ones shown, nothing Chinese
        assert m["applies"] and all(x["text"].startswith("Applies to") and x["lang"] != "zh-Hans"
                                    for x in m["applies"]), m
        assert m["badges"] and not any(CJK.search(b["text"]) for b in m["badges"]), m
        assert m["appliesAll"] == 2 and m["badgesAll"] == 2 * len(m["badges"])     # both languages on the page
        _choose(browser, "zh")
        m = browser.execute_script(SHOWN_JS)
        allowed = _entry_data_words(e.data)
        [line] = m["applies"]
        assert line["lang"] == "zh-Hans" and line["text"].startswith("适用于"), line
        assert _latin_words(line["text"]) <= allowed, (line, allowed)              # no English UI words left
        assert m["badges"] and len(m["badges"]) == m["badgesAll"] // 2, m
        for b in m["badges"]:
            assert b["lang"] == "zh-Hans" and CJK.search(b["text"]), b
            assert _latin_words(b["text"]) <= PLATFORMS, b
            assert b["display"] == "inline-block", b                                # still drawn as a badge
        assert m["names"] and CJK.search(m["names"]) and "tags:" not in m["names"], m["names"]
        assert not re.search(r"\b(?:Compile time|Runtime|Performance and numerics)\b", m["names"]), m["names"]
    finally:
        browser.execute_script("localStorage.clear()")


def _match(browser, text):
    browser.execute_script("sessionStorage.clear(); document.getElementById('errbook-log').value = arguments[0];"
                           "document.getElementById('errbook-go').click()", text)
    wait_for(lambda: browser.execute_script(
        "return document.getElementById('errbook-results').dataset.state === 'done'"), timeout=60)


def test_choice_carries_to_the_paste_page_and_back(browser, real_site, real_entries):
    from selenium.webdriver.common.by import By
    by_id = {x.id: x for x in real_entries}
    e = _entry(real_entries)
    log = "k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n"
    browser.get(f"{real_site}/entries/{e.id}/")
    browser.execute_script("localStorage.clear(); sessionStorage.clear()")
    try:
        # never chosen: the paste page speaks the browser's language (English here)
        open_paste(browser, real_site)
        _match(browser, log)
        res = browser.find_element(By.ID, "errbook-results")
        assert not CJK.search(res.find_element(By.CSS_SELECTOR, ".eb-status").text)
        # 中文 chosen on an entry page: the paste page's labels and titles are Chinese
        browser.get(f"{real_site}/entries/{e.id}/")
        _choose(browser, "zh")
        open_paste(browser, real_site)
        assert browser.execute_script("return document.documentElement.dataset.ebLang") == "zh"
        _match(browser, log)
        res = browser.find_element(By.ID, "errbook-results")
        status = res.find_element(By.CSS_SELECTOR, ".eb-status").text
        assert status.startswith("匹配到") and "matching" not in status, status
        title = res.find_element(By.CSS_SELECTOR, ".eb-card .admonition-title").text
        eid = title.split(" · ")[0]
        assert title == f"{eid} · {by_id[eid].data['title_zh']}", title
        pressed = [b.text for b in res.find_elements(By.CSS_SELECTOR, ".eb-langs button[aria-pressed='true']")]
        assert pressed == ["中文"], pressed
        # English picked on the paste page: redrawn at once, and the entry pages open in English
        next(b for b in res.find_elements(By.CSS_SELECTOR, ".eb-langs button") if b.text == "English").click()
        status = wait_for(lambda: (lambda s: s if not CJK.search(s) else None)(
            browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-status").text))
        assert re.match(r"\d+ matching entr", status), status
        browser.get(f"{real_site}/entries/{e.id}/")
        assert browser.execute_script("return document.documentElement.dataset.ebLang") == "en"
        m = browser.execute_script(SHOWN_JS)
        assert m["applies"][0]["text"].startswith("Applies to"), m
    finally:
        browser.execute_script("localStorage.clear(); sessionStorage.clear()")
        viewport(browser, 1400, 1000)
