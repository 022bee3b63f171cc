"""The guided finder on the paste page (web/assets/finder.js) in a real headless Chromium: a log with no diagnosis
gets the questions, one click each, then the same short list as `errbook find` with the same answers and log; a
diagnosed log gets no questions; nothing is sent anywhere."""
import time

import pytest

from conftest import REPO
from errbook.cli.find import Session
from test_browser import (  # noqa: F401  (pytest fixtures, imported to be used here)
    CHROMIUM,
    DRIVER,
    browser,
    open_paste,
    paste_and_match,
    real_site,
    requests_since,
    viewport,
    wait_for,
)

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                 reason="Debian's chromium and chromium-driver are not installed")]

SLOW_LOG = REPO / "errata" / "corpus" / "unseen" / "none-r9700-pytorch-4x-slower-than-7900xtx.log"
DIAGNOSED = REPO / "errata" / "corpus" / "real" / "RMN-0090-1.log"
CLICKS = [("component", "pytorch"), ("happened", "slow"), ("gpu", "radeon-rdna")]


def _state(drv):
    return drv.execute_script("""
      const box = document.querySelector('.eb-finder');
      if (!box) return null;
      const q = box.querySelector('.eb-finder-question');
      return {question: q ? q.textContent : null,
              choices: Array.from(box.querySelectorAll('.eb-finder-choices button')).map(b => b.dataset.value),
              list: Array.from(box.querySelectorAll('.eb-finder-list > li > a'))
                      .map(a => a.textContent.split(' · ')[0]),
              links: Array.from(box.querySelectorAll('.eb-finder-list > li > a')).map(a => a.href),
              checks: box.querySelectorAll('.eb-finder-list > li > p strong').length};""")


def test_a_log_with_no_diagnosis_gets_the_questions_and_the_clis_list(browser, real_site):  # noqa: F811
    log = SLOW_LOG.read_text(encoding="utf-8")
    viewport(browser, 1400, 1000)
    open_paste(browser, real_site)
    browser.get_log("performance")
    paste_and_match(browser, log)
    first = wait_for(lambda: _state(browser))
    assert first["question"].startswith("Question 1 of at most 3") and first["choices"][-1] == "unknown"
    answers = {}
    for facet, value in CLICKS:
        st = _state(browser)
        if st["question"] is None:
            break
        answers[facet] = value
        browser.execute_script("document.querySelector(`.eb-finder button[data-value='${arguments[0]}']`).click()",
                               value)
        time.sleep(0.2)
    done = wait_for(lambda: (lambda s: s if s and s["list"] else None)(_state(browser)))
    expected = Session(REPO, log).step(answers)
    assert expected.question is None
    assert done["list"] == [it.id for it in expected.shortlist]
    assert all(f"/entries/{i}/" in href for i, href in zip(done["list"], done["links"], strict=True))
    assert done["checks"] >= len(done["list"])            # each entry with its confirming (or first) step
    time.sleep(0.5)
    assert requests_since(browser) == [], "the finder made requests"


def test_a_diagnosed_log_gets_no_questions(browser, real_site):  # noqa: F811
    open_paste(browser, real_site)
    paste_and_match(browser, DIAGNOSED.read_text(encoding="utf-8"))
    assert _state(browser) is None


def test_the_questions_never_widen_a_phone(browser, real_site):  # noqa: F811
    viewport(browser, 390, 844)
    try:
        open_paste(browser, real_site)
        paste_and_match(browser, SLOW_LOG.read_text(encoding="utf-8"))
        wait_for(lambda: _state(browser))
        browser.execute_script("document.querySelector('.eb-finder').scrollIntoView()")
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        viewport(browser, 1400, 1000)
