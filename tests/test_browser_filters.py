"""The filters of the entries index and the verification matrix in real Chromium, at desktop and phone size, on
the real site: the rows a choice leaves visible are exactly those computed here from the real entries and the
real ledger (tests/test_filterdata.py's independent readings), the choice survives a reload, Back and a visit
to an entry, the phone layout stays short, and the matrix's summary counts the ledger's runs."""
import re

import pytest

import test_browser
import test_filterdata
from errbook.machine import fingerprint
from errbook.web.status import BAD, TIER_ORDER
from test_browser import CHROMIUM, DRIVER, SIZES, viewport, wait_for
from test_filterdata import expected_gpu, expected_rocm, expected_verified, fleet_of, latest_per_platform, rocm_ranges

# the fixtures this file shares: Chromium, the real site built once for this file, the real entries and ledger
browser, real_site, real = test_browser.browser, test_browser.real_site, test_filterdata.real

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                 reason="Debian's chromium and chromium-driver are not installed")]

# A phone card is three lines of .7rem text at line-height 1.4 (3 x 19.6 px) plus its padding and border
# (about 8 px): 72 px allows a pixel of rounding per line. The page's head (title, links, the filters) and
# footer take under 1500 px at 390 px wide. Before the cards, a row was about 670 px tall (144,000 px in all).
CARD_PX = 72
HEAD_PX = 1500

VISIBLE = """return [...document.querySelectorAll(arguments[0] + ' tbody tr')]
  .filter(r => r.getClientRects().length > 0).map(r => r.cells[0].querySelector('a').textContent.trim())"""


def visible(browser, scope):
    return set(browser.execute_script(VISIBLE, scope))


def choose(browser, label, value):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    Select(browser.find_element(By.CSS_SELECTOR, f'.eb-filter select[aria-label="{label}"]')).select_by_value(value)


def chosen(browser):
    return browser.execute_script("return Object.fromEntries([...document.querySelectorAll('.eb-filter select')]"
                                  ".map(s => [s.dataset.key, s.value]))")


def ready(browser, url=None):
    if url:
        browser.get(url)
    wait_for(lambda: browser.execute_script("return !!document.querySelector('.eb-filter[data-ready]')"))


def note(browser):
    return browser.execute_script("return document.querySelector('.eb-filter-any').textContent")


@pytest.mark.parametrize("size", SIZES)
def test_gpu_and_rocm_filters_keep_any_entries_and_live_in_the_address(browser, real_site, real, size):
    viewport(browser, *size)
    ready(browser, f"{real_site}/overview/")
    every = {e.id for e in real.entries}
    assert visible(browser, ".eb-entries") == every

    choose(browser, "GPU", "gfx942")
    gpu = {e.id for e in real.entries if expected_gpu(e, "gfx942")}
    any_gpu = {e.id for e in real.entries if expected_gpu(e, "no-such-gpu")}      # the entries for any GPU
    assert any_gpu and any_gpu <= gpu < every
    assert visible(browser, ".eb-entries") == gpu
    assert f"includes {len(any_gpu)} entries for any GPU" in note(browser)
    assert browser.current_url.endswith("?gpu=gfx942")

    choose(browser, "ROCm", "7.2")
    both = {e.id for e in real.entries if e.id in gpu and expected_rocm(e, "7.2")}
    assert visible(browser, ".eb-entries") == both
    any_rocm = {e.id for e in real.entries if e.id in both and not rocm_ranges(e)}
    assert f"includes {len(any_rocm)} entries for any ROCm version" in note(browser)
    assert "rocm=7.2" in browser.current_url

    browser.refresh()
    ready(browser)
    assert chosen(browser)["gpu"] == "gfx942" and chosen(browser)["rocm"] == "7.2"
    assert visible(browser, ".eb-entries") == both

    browser.back()                                    # the choice before ROCm 7.2
    wait_for(lambda: chosen(browser)["rocm"] == "")
    assert visible(browser, ".eb-entries") == gpu
    browser.forward()
    wait_for(lambda: chosen(browser)["rocm"] == "7.2")
    assert visible(browser, ".eb-entries") == both

    # to an entry and Back: the filtered list is there again
    first = sorted(both)[0]
    browser.execute_script("document.querySelector(`.eb-entries a[href*='${arguments[0]}']`).click()", first)
    wait_for(lambda: f"/entries/{first}/" in browser.current_url)
    browser.back()
    ready(browser)
    wait_for(lambda: chosen(browser).get("rocm") == "7.2")
    assert visible(browser, ".eb-entries") == both


def test_verified_filter_names_the_platforms_as_the_ledger_records_them(browser, real_site, real):
    viewport(browser, 1400, 1000)
    own = latest_per_platform(real.records)
    for key in ("cuda-gpu", "cpu"):
        ready(browser, f"{real_site}/overview/?verified={key}")
        want = {e.id for e in real.entries if expected_verified(own.get(e.id, {}), key)}
        assert want and visible(browser, ".eb-entries") == want, key
    choose(browser, "Class", "runtime")
    assert visible(browser, ".eb-entries") == {e.id for e in real.entries if e.klass == "runtime"
                                               and expected_verified(own.get(e.id, {}), "cpu")}


def test_entries_index_is_a_short_list_of_cards_on_a_phone(browser, real_site, real):
    viewport(browser, 390, 844)
    ready(browser, f"{real_site}/overview/")
    m = browser.execute_script("""
      const rows = [...document.querySelectorAll('.eb-entries tbody tr')];
      return {height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth,
              rows: rows.length, tallest: Math.max(...rows.map(r => r.getBoundingClientRect().height)),
              widest: Math.max(...rows.map(r => r.getBoundingClientRect().right))};""")
    assert m["rows"] == len(real.entries)
    assert m["width"] <= 390 and m["widest"] <= 390, m                  # nothing wider than the phone
    assert m["tallest"] <= CARD_PX, m
    assert m["height"] <= CARD_PX * m["rows"] + HEAD_PX, m
    choose(browser, "GPU", "gfx90a")                                      # hidden cards take no room
    shown = len(visible(browser, ".eb-entries"))
    assert shown < m["rows"]
    assert browser.execute_script("return document.documentElement.scrollHeight") <= CARD_PX * shown + HEAD_PX


def summary_rows(browser) -> dict:
    """The matrix summary as the page shows it: machine -> its cells' texts."""
    rows = browser.execute_script("""
      const t = document.querySelector('#summary ~ .md-typeset__scrollwrap table, #summary ~ table');
      return [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent.trim()));""")
    return {r[0]: r[1:] for r in rows}


@pytest.mark.parametrize("size", SIZES)
def test_matrix_summary_counts_the_ledger_and_its_filters_live_in_the_address(browser, real_site, real, size):
    viewport(browser, *size)
    ready(browser, f"{real_site}/verification/")
    fleet = fleet_of(real.records)
    cols = {k for per in fleet.values() for k in per}
    shown = summary_rows(browser)
    assert set(shown) == {fingerprint.fleet_label(k) for k in cols}
    for k in cols:
        recs = [fleet.get(e.id, {}).get(k) for e in real.entries]
        cur = [r for r in recs if r and r.get("current") is True]
        want = [sum(r["outcome"] == "passed" for r in cur), sum(r["outcome"] in BAD for r in cur),
                sum(r["outcome"] == "skipped" for r in cur),
                sum(1 for r in recs if r and r.get("current") is not True), recs.count(None)]
        cells = shown[fingerprint.fleet_label(k)]
        assert [int(x) for x in cells[:5]] == want, k
        for t, cell in zip(TIER_ORDER, cells[5:], strict=True):
            n = sum((r["tiers"].get(t) or {}).get("outcome") == "passed" for r in cur)
            assert (f"✓ {n}" in cell) == (n > 0), (k, t, cell)

    def runs(e, plat, tier):
        return [r for k, r in fleet.get(e.id, {}).items() if k[0] == plat and tier in r["tiers"]]

    choose(browser, "Platform", "cuda")
    choose(browser, "Tier", "gpu")
    choose(browser, "Outcome", "passed")
    want = {e.id for e in real.entries if any(r.get("current") is True and r["tiers"]["gpu"]["outcome"] == "passed"
                                              for r in runs(e, "cuda", "gpu"))}
    assert want and visible(browser, ".eb-matrix") == want
    assert re.search(r"platform=cuda&tier=gpu&outcome=passed$", browser.current_url)
    browser.refresh()
    ready(browser)
    assert visible(browser, ".eb-matrix") == want

    choose(browser, "Outcome", "none")                   # no gpu tier run on a CUDA machine at all
    none = {e.id for e in real.entries if not runs(e, "cuda", "gpu")}
    assert visible(browser, ".eb-matrix") == none
    browser.back()
    wait_for(lambda: chosen(browser)["outcome"] == "passed")
    assert visible(browser, ".eb-matrix") == want
