"""Real Chromium at 1400×1000 and 390×844 (issue 27 items 9 and 10): the fix box's Confirm and Fix parts, with
their anchors and permalinks, are on the first screen of every entry page; #fix, #confirm-1 and #fix-N land on
their step; with 中文 chosen the first screen (title, cause, fix box) is Chinese, in lang="zh-Hans", and stays
Chinese on the next page and after a reload."""
import pytest

import test_browser as tb
from errbook.kb import fixsteps

# test_browser's fixtures, by name (a Chromium, the site of this checkout, its active entries)
browser, real_site, real_entries = tb.browser, tb.real_site, tb.real_entries
CHROMIUM, DRIVER, SIZES, viewport, wait_for = tb.CHROMIUM, tb.DRIVER, tb.SIZES, tb.viewport, tb.wait_for

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                 reason="Debian's chromium and chromium-driver are not installed")]

PARTS_JS = """
const part = (id) => {
  const p = document.getElementById(id);
  if (!p) return null;
  const r = p.getBoundingClientRect(), t = p.querySelector(':scope > .admonition-title');
  const a = t.querySelector('a.eb-step-link'), ar = a.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, label: t.innerText.replace('¶', '').trim(),
          href: a.getAttribute('href'),
          link: ar.width > 0 && ar.top >= 0 && ar.bottom <= innerHeight && +getComputedStyle(a).opacity > 0};
};
const box = document.getElementById('fix');
return {confirm: part('confirm-1'), fix: part('fix-1'), vh: innerHeight,
        box: !!box && box.contains(document.getElementById('fix-1'))};
"""

# The first screen's pieces in the language shown: each element that is displayed, its text and its lang.
SHOWN_JS = """
const shown = (sel) => [...document.querySelectorAll(sel)]
  .filter(e => e.offsetParent !== null || e.getClientRects().length);
const one = (sel) => { const e = shown(sel)[0]; if (!e) return null; const r = e.getBoundingClientRect();
  const l = e.closest('[lang]'); return {text: e.innerText, lang: l ? l.getAttribute('lang') : null,
  inScreen: r.top >= 0 && r.bottom <= innerHeight}; };
return {h1: shown('article h1').length, title: one('.eb-title-zh, article h1'), cause: one('.eb-cause'),
        confirmLabel: one('#confirm-1 > .admonition-title > span'), confirmText: one('#confirm-1 .eb-clamp'),
        fixLabel: one('#fix-1 > .admonition-title > span'), fixText: one('#fix-1 .eb-clamp'),
        expect: one('#confirm-1 .eb-expect > span'),
        tab: [...document.querySelectorAll('.tabbed-set > input:checked')].map(i =>
               document.querySelector(`label[for="${i.id}"]`).innerText.trim())};
"""


def _has_cjk(s: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in s or "")


def test_confirm_and_fix_with_their_anchors_on_the_first_screen(browser, real_site, real_entries):
    """Every entry page at both sizes: a check's entry shows Confirm then Fix, each with its anchor's visible
    permalink, the whole Fix part above the fold; an entry without a check shows Fix alone."""
    bad = []
    for w, h, e in tb.each_entry_page(browser, real_site, real_entries):
        confirm, _fixes = fixsteps.split(e["fix"])
        m = browser.execute_script(PARTS_JS)
        fix, chk = m["fix"], m["confirm"]
        ok = (m["box"] and fix and fix["href"] == "#fix-1" and fix["link"] and fix["label"].startswith("Fix")
              and fix["top"] >= 0 and fix["bottom"] <= m["vh"])
        if confirm:
            ok = ok and chk and chk["href"] == "#confirm-1" and chk["link"] and \
                chk["label"].startswith("Confirm") and 0 <= chk["top"] < chk["bottom"] <= fix["top"]
        else:
            ok = ok and chk is None
        if not ok:
            bad.append((e.id, w, h, m))
    assert not bad, bad[:5]
    assert sum(1 for e in real_entries if fixsteps.split(e["fix"])[0]) >= 100       # the split is in the data


def _in_view(browser, element_id: str) -> bool:
    return wait_for(lambda: browser.execute_script(
        "const e = document.getElementById(arguments[0]); if (!e) return null; const r = e.getBoundingClientRect();"
        "return r.top >= 0 && r.top < innerHeight && (e.offsetParent !== null || e.getClientRects().length > 0);",
        element_id), timeout=10)


@pytest.mark.parametrize("size", SIZES)
def test_step_anchors_land_on_their_step(browser, real_site, real_entries, size):
    from selenium.webdriver.common.by import By
    e = next(x for x in real_entries if len(fixsteps.split(x["fix"])[1]) >= 2 and fixsteps.split(x["fix"])[0])
    viewport(browser, *size)
    try:
        for name in ("fix", "confirm-1", "fix-1", "fix-2", "fix-steps"):
            browser.get(f"{real_site}/entries/{e.id}/#{name}")
            assert _in_view(browser, name), (e.id, name)
        browser.get(f"{real_site}/entries/{e.id}/")
        link = browser.find_element(By.CSS_SELECTOR, "#fix-2 ~ a.eb-step-link")
        assert link.get_attribute("href").endswith("#fix-2")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
        link.click()                                              # the permalink: a link to itself, in view
        assert browser.current_url.endswith("#fix-2") and _in_view(browser, "fix-2")
    finally:
        viewport(browser, 1400, 1000)


def _choose(browser, lang: str) -> None:
    from selenium.webdriver.common.by import By
    b = wait_for(lambda: [x for x in browser.find_elements(By.CSS_SELECTOR, ".eb-langswitch button") if
                          x.get_attribute("data-eb-lang") == lang and x.is_displayed()])[0]
    b.click()
    wait_for(lambda: browser.execute_script("return document.documentElement.dataset.ebLang") == lang)


def _assert_chinese(m: dict, where: str, check: bool = True) -> None:
    assert m["h1"] == 0, where                                             # the English title is hidden
    parts = ["title", "cause", "fixLabel", "fixText"] + (["confirmLabel", "confirmText", "expect"] if check else [])
    for k in parts:
        v = m[k]
        assert v and _has_cjk(v["text"]) and v["lang"] == "zh-Hans" and v["inScreen"], (where, k, v)
    assert m["fixLabel"]["text"].startswith("修复"), where
    if check:
        assert m["confirmLabel"]["text"].startswith("确认"), where


@pytest.mark.parametrize("size", SIZES)
def test_chinese_first_screen_persists_across_pages_and_reloads(browser, real_site, real_entries, size):
    with_check = [x for x in real_entries if fixsteps.split(x["fix"])[0] and
                  any(s.get("expect_zh") for s in fixsteps.split(x["fix"])[0][:1])]
    a, b = with_check[0], with_check[-1]
    plain = next(x for x in real_entries if not fixsteps.split(x["fix"])[0])
    viewport(browser, *size)
    try:
        browser.get(f"{real_site}/entries/{a.id}/")
        browser.execute_script("localStorage.clear()")
        browser.refresh()
        m = browser.execute_script(SHOWN_JS)
        assert m["h1"] == 1 and not _has_cjk(m["title"]["text"]) and m["title"]["lang"] != "zh-Hans"   # English
        _choose(browser, "zh")
        m = browser.execute_script(SHOWN_JS)
        _assert_chinese(m, a.id)
        assert "中文" in m["tab"] and "English" not in m["tab"]             # the page's tabs follow the choice
        browser.get(f"{real_site}/entries/{b.id}/")                          # the next page
        _assert_chinese(browser.execute_script(SHOWN_JS), b.id)
        browser.refresh()                                                    # and a reload
        _assert_chinese(browser.execute_script(SHOWN_JS), b.id + " reloaded")
        browser.get(f"{real_site}/entries/{plain.id}/")
        _assert_chinese(browser.execute_script(SHOWN_JS), plain.id, check=False)
        _choose(browser, "en")
        browser.refresh()
        m = browser.execute_script(SHOWN_JS)
        assert m["h1"] == 1 and m["fixLabel"]["text"].startswith("Fix") and "English" in m["tab"]
    finally:
        browser.execute_script("localStorage.clear()")
        viewport(browser, 1400, 1000)


def test_the_chinese_tab_switches_the_first_screen_too(browser, real_site, real_entries):
    """One choice: picking 中文 in the summary's tabs further down turns the first screen Chinese as well."""
    from selenium.webdriver.common.by import By
    e = next(x for x in real_entries if fixsteps.split(x["fix"])[0])
    browser.get(f"{real_site}/entries/{e.id}/")
    browser.execute_script("localStorage.clear()")
    browser.refresh()
    try:
        label = next(x for x in browser.find_elements(By.CSS_SELECTOR, ".tabbed-labels > label")
                     if x.text.strip() == "中文")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", label)
        label.click()
        wait_for(lambda: browser.execute_script("return document.documentElement.dataset.ebLang") == "zh")
        browser.execute_script("window.scrollTo(0, 0)")
        _assert_chinese(browser.execute_script(SHOWN_JS), e.id)
    finally:
        browser.execute_script("localStorage.clear()")
