"""Big logs on the paste page (issue 27 item 2), in a real Chromium at desktop and phone size: a 5 MB and a 50 MB log
built at test time from real corpus logs (a real RMN-0090 log placed at the end or in the middle of real benign
build output from errata/corpus/benign/, repeated), delivered by file choice and by paste. The page must give the
answer `errbook triage --json` gives on the same file, or say how far it got, never "No entry matched" while
lines remain unchecked; the tab stays responsive (a timer in the page keeps firing), the text box never holds
the log, one worker serves every Match, and nothing is sent anywhere."""
# ruff: noqa: F811  (the fixtures imported from test_browser come back as the tests' parameters, as pytest wants)
import json
import os
import re
import subprocess
import sys
import time

import pytest
import yaml

from conftest import REPO
from test_browser import SIZES, browser, open_paste, real_site, requests_since, viewport, wait_for  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ERROR_LOG = REPO / "errata" / "corpus" / "real" / "RMN-0090-1.log"
MB = 1 << 20
# What an honest page never says while lines remain unchecked: that nothing (known) matched.
NO_MATCH = re.compile(r"No (known )?entry matched(?! so far)|No known entry;|No known problem named")

WATCH = """
clearInterval(window.__watch);
window.__ticks = 0; window.__gap = 0; window.__box = 0; window.__last = performance.now();
window.__watch = setInterval(() => {
  const n = performance.now(); __gap = Math.max(__gap, n - __last); __last = n; __ticks++;
  __box = Math.max(__box, document.getElementById('errbook-log').value.length);
}, 50);
sessionStorage.clear();
const r = document.getElementById('errbook-results'); r.replaceChildren(); delete r.dataset.state;
// when the first verdict shows (an early one while the rest is checked counts), in the page's own time
window.__t0 = performance.now(); window.__verdict = null;
if (window.__seen) window.__seen.disconnect();
window.__seen = new MutationObserver(() => { const v = r.querySelector('.eb-verdict');
  if (v && !window.__verdict) window.__verdict = {ms: performance.now() - window.__t0, text: v.innerText}; });
window.__seen.observe(r, {childList: true, subtree: true});
"""
# A paste as the browser delivers it (of the text already in window.__clip); if the page lets the default happen,
# the text lands in the box, as it would.
PASTE = """
const a = document.getElementById('errbook-log'); a.focus();
const dt = new DataTransfer(); dt.setData('text/plain', window.__clip); window.__clip = null;
const ev = new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true});
window.__t0 = performance.now();
if (a.dispatchEvent(ev)) { a.value = dt.getData('text/plain'); a.dispatchEvent(new Event('input', {bubbles: true})); }
"""
STATE = """
const r = document.getElementById('errbook-results'), v = r.querySelector('.eb-verdict');
return {state: r.dataset.state || null, complete: r.dataset.complete === 'true', text: r.innerText,
        verdict: v ? v.innerText : '', cards: [...r.querySelectorAll('.eb-card')].map(c => c.innerText.split(' · ')[0]),
        focused: !!(document.activeElement && document.activeElement.classList.contains('eb-verdict'))};
"""


def build_log(path, size, where):
    """Benign corpus logs, in turn, up to `size` bytes, with the real RMN-0090 log at the end, in the middle or
    nowhere."""
    # rounds 1-2 only: benign round 3 holds healthy output with observations (vLLM's DEBUG platform lines, HIP
    # traces), which the page lists as worth knowing; this filler must match nothing
    benign = [p for p in sorted((REPO / "errata" / "corpus" / "benign").glob("*.log"))
              if (yaml.safe_load(p.with_suffix(".yaml").read_text(encoding="utf-8")) or {}).get("round", 1) < 3]
    err = ERROR_LOG.read_bytes()
    parts, total, i = [], 0, 0
    while total < size - len(err):
        b = benign[i % len(benign)].read_bytes()
        b += b"" if b.endswith(b"\n") else b"\n"
        parts.append(b)
        total += len(b)
        i += 1
    if where == "end":
        parts.append(err)
    elif where == "middle":
        parts.insert(len(parts) // 2, err)
    path.write_bytes(b"".join(parts))
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("biglogs")
    cases = (("end5", 5 * MB, "end"), ("middle5", 5 * MB, "middle"), ("middle50", 50 * MB, "middle"),
             ("none5", 5 * MB, None))
    return {name: build_log(d / f"{name}.log", size, where) for name, size, where in cases}


CLI = {}


def cli(path):
    """`errbook triage --json` on the file: its answer and its wall time (once per file)."""
    if path not in CLI:
        t0 = time.time()
        r = subprocess.run([sys.executable, "-m", "errbook", "triage", "--json", str(path)], capture_output=True,
                           cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO / "scripts")), timeout=600)
        assert r.returncode in (0, 1), r.stderr
        CLI[path] = (json.loads(r.stdout), time.time() - t0)
    return CLI[path]


def state(browser):
    return browser.execute_script(STATE)


def settled(browser, timeout=300):
    return wait_for(lambda: (lambda s: s if s["state"] == "done" else None)(state(browser)), timeout=timeout)


def assert_honest(st):
    """A pass that stopped with lines unchecked: it says how far it got and offers to go on, never "no match"."""
    assert not st["complete"]
    assert not NO_MATCH.search(st["text"]), st["text"][:400]
    assert re.search(r"\d+\.\d of \d+\.\d MB", st["verdict"] + st["text"]), st["text"][:400]
    assert "Continue matching" in st["text"]


def to_the_end(browser, st, budget_ms=None):
    """Continue pass after pass until the whole log is checked; each stop must be honest. Returns the last state
    and the number of passes."""
    passes = 1
    while not st["complete"]:
        assert_honest(st)
        if budget_ms is not None:
            browser.execute_script("document.getElementById('errbook-triage').dataset.budgetMs = arguments[0]",
                                   str(budget_ms))
        browser.execute_script("document.querySelector('#errbook-results .eb-continue').click()")
        st = settled(browser)
        passes += 1
        assert passes < 200
    return st, passes


def deliver(browser, path, how):
    if how == "file":
        from selenium.webdriver.common.by import By
        browser.execute_script("window.__t0 = performance.now()")
        browser.find_element(By.ID, "errbook-file").send_keys(str(path))
    else:
        # the text reaches the page first (selenium's own transfer is not the page's work), its line ends as they are
        browser.execute_script("window.__clip = arguments[0]", path.read_bytes().decode("utf-8", "replace"))
        browser.execute_script("window.__gap = 0; window.__last = performance.now();")
        browser.execute_script(PASTE)


def match_big(browser, base, path, how, size):
    """Open the page, deliver the log, follow it to the end. Returns timings and the states seen."""
    viewport(browser, *size)
    open_paste(browser, base)
    browser.execute_script(WATCH)
    time.sleep(2)
    idle = browser.execute_script("const g = __gap; __gap = 0; return g")    # this machine's own hiccups
    browser.get_log("performance")
    deliver(browser, path, how)
    since = "return (performance.now() - window.__t0) / 1000"        # seconds since the log was given, page time
    first = settled(browser)
    t_first = browser.execute_script(since)
    focused = first["focused"]
    last, passes = to_the_end(browser, first)
    t_done = browser.execute_script(since)
    watch = browser.execute_script("return {ticks: __ticks, gap: __gap, box: __box}")
    verdict = browser.execute_script("return window.__verdict")
    return {"first": first, "last": last, "passes": passes, "t_first": t_first, "t_done": t_done, "verdict": verdict,
            "idle": idle, "focused": focused, "watch": watch, "requests": requests_since(browser)}


def check_like_the_cli(r, path, label):
    want, cli_s = cli(path)
    ids = [m["id"] for m in want["matches"]][:5]
    last = r["last"]
    print(f"{label}: CLI {cli_s:.1f} s {ids}; page: first verdict {r['verdict']['ms'] / 1000:.1f} s "
          f"({r['verdict']['text'][:40]!r}), first pass over {r['t_first']:.1f} s, "
          f"whole log {r['t_done']:.1f} s in {r['passes']} pass(es); longest gap of the page's timer "
          f"{r['watch']['gap']:.0f} ms over {r['watch']['ticks']} ticks; text box at most {r['watch']['box']} chars")
    assert last["complete"] and last["cards"] == ids, (last["cards"], ids)
    if ids:
        assert last["verdict"].startswith(f"{ids[0]}: "), last["verdict"]
    else:
        assert "No entry matched (" in last["text"]
    # the tab kept answering: its timer fired all along, never held up for seconds (a 5 MB paste in the box froze it
    # for 4.8 s here before at a load of 3, 15 s at a load of 21, 20-26 s in the issue; since, 0.1-0.6 s, and up to
    # 2.1 s only when this 2-core machine ran at a load of 25, so the bound allows for the machine's own idle gaps)
    assert r["watch"]["ticks"] >= 10 and r["watch"]["gap"] < max(3000, 4 * r["idle"]), (r["watch"], r["idle"])
    assert r["watch"]["box"] < 4096, r["watch"]                  # the log never went into the text box
    assert r["focused"], "the verdict has the focus after Match"
    assert r["requests"] == [], [q["url"] for q in r["requests"]]     # matched in the page: nothing was fetched


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name,how", [("end5", "file"), ("middle5", "paste")])
def test_a_5_mb_log_gives_the_clis_answer(browser, real_site, logs, name, how, size):
    r = match_big(browser, real_site, logs[name], how, size)
    check_like_the_cli(r, logs[name], f"5 MB, RMN-0090 at the {name[:-1]}, by {how}, {size[0]}x{size[1]}")
    # what this tab keeps for Back is the results, never the log
    kept = browser.execute_script("return sessionStorage.getItem('errbook-paste-last') || ''")
    assert 0 < len(kept) < 64 * 1024 and "RMN-0090" in kept
    browser.refresh()
    wait_for(lambda: browser.execute_script("return !!(window.ErrbookPaste && window.ErrbookPaste.ready)"))
    again = state(browser)
    assert again["cards"] == r["last"]["cards"] and "kept in this browser tab only" in again["text"]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_50_mb_log_gives_the_clis_answer_or_says_how_far_it_got(browser, real_site, logs, size):
    """The error sits in the middle of 50 MB: the early look (the end and the error lines) names it before the
    in-order check gets there; every pass that stops early says how far it got; the last gives the CLI's answer."""
    r = match_big(browser, real_site, logs["middle50"], "file", size)
    check_like_the_cli(r, logs["middle50"], f"50 MB, RMN-0090 in the middle, by file, {size[0]}x{size[1]}")
    assert r["first"]["verdict"].startswith("RMN-0090: ")


def test_an_unchecked_rest_is_never_called_no_match(browser, real_site, logs):
    """A pass budget of 1 ms stops after the early look and one piece: with no error anywhere the page says how
    far it got and offers to continue (no next steps, no "No entry matched"); continued to the end it gives the
    CLI's answer. With the error in the middle, the early look finds it and the verdict says the rest is unchecked."""
    viewport(browser, 1400, 1000)
    for name in ("none5", "middle5"):
        open_paste(browser, real_site)
        browser.execute_script(WATCH)
        browser.execute_script("document.getElementById('errbook-triage').dataset.budgetMs = '1'")
        deliver(browser, logs[name], "file")
        st = settled(browser)
        assert_honest(st)
        if name == "none5":
            assert re.match(r"Checked \d+\.\d of \d+\.\d MB: no entry matched so far$", st["verdict"]), st["verdict"]
            assert "Next steps" not in st["text"]
        else:
            assert re.match(r"RMN-0090: .* \(found before the whole log was checked: \d+\.\d of \d+\.\d MB so far\)$",
                            st["verdict"]), st["verdict"]
        assert st["focused"]
        last, passes = to_the_end(browser, st, budget_ms=10000)
        want, _ = cli(logs[name])
        assert last["cards"] == [m["id"] for m in want["matches"]][:5] and passes >= 2
        assert "found before the whole log was checked" not in last["verdict"]
        if name == "none5":
            assert "No entry matched (" in last["text"] and "Next steps" in last["text"]


def test_one_worker_serves_every_match(browser, real_site, logs):
    """The worker is started once, when the page loads, and reused: three Matches (a file, a paste, the box) start
    no other."""
    from selenium.webdriver.common.by import By
    viewport(browser, 1400, 1000)
    hook = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": (
        "window.__workers = 0; const W = window.Worker;"              # Material's search worker is not counted
        "window.Worker = function (u, o) { if (String(u).includes('triage-worker.js')) window.__workers++;"
        " return new W(u, o); };")})
    try:
        open_paste(browser, real_site)
        browser.execute_script(WATCH)
        for how in ("file", "paste"):
            browser.execute_script("const r = document.getElementById('errbook-results'); delete r.dataset.state;")
            deliver(browser, logs["end5"], how)
            to_the_end(browser, settled(browser))
        browser.execute_script("const r = document.getElementById('errbook-results'); delete r.dataset.state;"
                               "document.getElementById('errbook-log').value = arguments[0];",
                               "k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n")
        browser.execute_script("window.scrollTo(0, 0)")          # the last Match scrolled to its verdict
        browser.find_element(By.ID, "errbook-go").click()
        assert settled(browser)["cards"][0] == "RMN-0001"        # the box's text, not the held big log
        assert browser.execute_script("return window.__workers") == 1
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": hook["identifier"]})
