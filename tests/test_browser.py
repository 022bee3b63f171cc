"""A real headless Chromium: entry pages put the fix in the first screen, the copy button copies the corrected
command, the site search finds every entry by its error text, the paste page matches like the CLI in a Web
Worker under a time budget, never widens the page and sends nothing anywhere."""
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from urllib.parse import quote, unquote_plus

import pytest

from conftest import REPO
from errbook.kb import entries
from errbook.triage import matcher, pipeline, ranking
from errbook.web import phrases

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                 reason="Debian's chromium and chromium-driver are not installed")]

SIZES = ((1400, 1000), (390, 844))


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def serve(directory):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture(scope="module")
def server(built):
    _, out, r = built
    assert r.returncode == 0, r.stderr
    httpd, base = serve(out)
    yield base
    httpd.shutdown()


@pytest.fixture(scope="module")
def real_site(tmp_path_factory):
    """The site of this checkout: every real entry, the real ledger and executed runbooks."""
    out = tmp_path_factory.mktemp("real") / "site"
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(REPO / "mkdocs.yml"),
                        "-d", str(out)], capture_output=True, text=True, cwd=REPO, timeout=600,
                       env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    httpd, base = serve(out)
    yield base
    httpd.shutdown()


@pytest.fixture(scope="module")
def real_entries():
    loaded, _ = entries.load_all(REPO)
    return sorted(entries.active(loaded), key=lambda e: e.id)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
              "--hide-scrollbars", f"--user-data-dir={tmp_path_factory.mktemp('chrome')}"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    drv.set_page_load_timeout(60)
    viewport(drv, 1400, 1000)
    yield drv
    drv.quit()


def viewport(drv, w, h):
    """An exact CSS viewport (a phone: mobile emulation, so the page may not zoom out to fit)."""
    drv.set_window_rect(width=w, height=h)
    drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                        {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600})


def wait_for(fn, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


# --- entry pages ---------------------------------------------------------------------------------------------

FIX_BOX_JS = """
const box = document.querySelector('.eb-fix');
if (!box) return null;
const r = box.getBoundingClientRect(), pre = box.querySelector('pre');
return {top: r.top, bottom: r.bottom, pre: pre ? pre.getBoundingClientRect().bottom : null,
        vh: innerHeight, vw: innerWidth, sw: document.documentElement.scrollWidth,
        hx: document.querySelector('h1').getBoundingClientRect().top};
"""


def test_fix_box_in_the_first_screen_on_every_entry_page(browser, real_site, real_entries):
    """Title, cause, the first fix step with its command, the link to the full fix, the versions and the
    verification badges: the whole box inside the first viewport, at desktop and phone size."""
    bad = []
    worst = {}
    for w, h, e in each_entry_page(browser, real_site, real_entries):
        m = browser.execute_script(FIX_BOX_JS)
        assert m, e.id
        worst[(w, h)] = max(worst.get((w, h), 0), m["bottom"])
        if not (m["top"] >= 0 and m["bottom"] <= m["vh"] and m["sw"] <= m["vw"]):
            bad.append((e.id, w, h, m))
    print("lowest fix-box bottom per viewport:", worst)
    assert not bad, bad


def each_entry_page(browser, real_site, real_entries):
    """(width, height, entry) with the entry's page loaded, at every size. Every page load starts Material's
    search worker, which fetches and indexes the whole site's search index (about half of each load's time here);
    the layout does not depend on it, so it is not fetched while walking."""
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/search/search_index.json*"]})
    try:
        for w, h in SIZES:
            viewport(browser, w, h)
            for e in real_entries:
                browser.get(f"{real_site}/entries/{e.id}/")
                yield w, h, e
    finally:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        browser.get("about:blank")      # the open page has no search index: a search test after this one reloads
        viewport(browser, 1400, 1000)


def test_copy_button_copies_the_after_command(browser, real_site, real_entries):
    e = next(x for x in real_entries if (x["fix"][0].get("code") or {}).get("before"))
    after = e["fix"][0]["code"]["after"].rstrip("\n")
    browser.get(f"{real_site}/entries/{e.id}/")
    browser.execute_script("window.__copied = null; document.addEventListener('copy', (ev) => {"
                           " window.__copied = (ev.target && ev.target.value !== undefined) ? ev.target.value"
                           " : String(document.getSelection()); }, true);")
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    ActionChains(browser).move_to_element(browser.find_element(By.CSS_SELECTOR, ".eb-fix pre")).perform()
    btn = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, ".eb-fix .md-code__button[data-md-type=copy]"))[0]
    btn.click()                                        # a real click: the copy needs a user gesture
    copied = wait_for(lambda: browser.execute_script("return window.__copied"), timeout=10)
    assert copied.rstrip("\n") == after
    # the full fix opens on "After" too
    checked = browser.execute_script(
        "const g = [...document.querySelectorAll('#fix ~ * .tabbed-set, #fix ~ .tabbed-set')]"
        ".find(s => [...s.querySelectorAll('label')].map(l => l.textContent).join('|') === 'Before|After');"
        "return g ? [...g.querySelectorAll('label')][[...g.querySelectorAll(':scope > input')].findIndex(i => "
        "i.checked)].textContent : null;")
    assert checked == "After"


# --- site search ---------------------------------------------------------------------------------------------

def search(browser, query, _sentinel=True):
    """Type into Material's search box; the distinct pages of the results, best first. A query that finds
    nothing goes first, and results count only once they are this query's (Material marks the matched words
    in each result link's ?h=), so no late result of an earlier query is read as this one's."""
    if _sentinel:
        search(browser, "zqxjvw", _sentinel=False)
    browser.execute_script(
        "const meta = document.querySelector('.md-search-result__meta'); if (meta) meta.textContent = '__pending__';"
        "const list = document.querySelector('.md-search-result__list'); if (list) list.replaceChildren();"
        "document.getElementById('__search').checked = true;"
        "const el = document.querySelector('.md-search__input'); el.focus(); el.value = arguments[0];"
        "el.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true}));", query)
    q = query.lower()

    def state():
        meta, hrefs = browser.execute_script(
            "const m = document.querySelector('.md-search-result__meta');"
            "return [m ? m.textContent : '', [...document.querySelectorAll("
            "'.md-search-result__item > .md-search-result__link')].map(a => a.href)];")
        if meta == "__pending__" or re.search("Initializing", meta, re.I):
            return None
        if re.match(r"No matching", meta, re.I):
            return ("done", [])
        for h in hrefs:
            m = re.search(r"[?&]h=([^#&]*)", h)
            if m and not all(t in q for t in re.findall(r"\w+", unquote_plus(m.group(1)).lower())):
                return None
        return ("done", hrefs) if hrefs else None

    hrefs, prev = wait_for(state, timeout=20)[1], None
    while hrefs != prev:                      # results render in chunks: read until two reads agree
        time.sleep(0.25)
        prev, hrefs = hrefs, (state() or ("", []))[1]
    pages = []
    for h in hrefs:
        p = re.sub(r"[?#].*$", "", h)
        if p not in pages:
            pages.append(p)
    return pages


def rank(pages, base, eids):
    for i, p in enumerate(pages):
        if any(p == f"{base}/entries/{e}/" for e in eids):
            return i
    return None


@pytest.fixture
def search_page(browser, real_site):
    viewport(browser, 1400, 1000)
    if browser.current_url.startswith(f"{real_site}/") and browser.execute_script(
            "return !!document.querySelector('.md-search__input')"):
        return real_site
    browser.get(f"{real_site}/")
    wait_for(lambda: browser.execute_script("return !!document.querySelector('.md-search__input')"))
    search(browser, "HIP")           # waits for the index to load
    return real_site


def test_every_entry_is_found_by_its_error_text(browser, search_page, real_entries):
    ranks = {}
    for e in real_entries:
        q = phrases.primary_identifier(e.data)
        ranks[e.id] = (q, rank(search(browser, q), search_page, [e.id]))
    n = len(ranks)
    top1 = sum(r == 0 for _, r in ranks.values())
    top3 = sum(r is not None and r < 3 for _, r in ranks.values())
    print(f"site search, each entry's primary error text: top-1 {top1}/{n}, top-3 {top3}/{n}")
    missed = {k: v for k, v in ranks.items() if v[1] is None or v[1] >= 3}
    # RMN-0190 and RMN-0200 fell to 4th in the 2026-12-07 content wave; back in the top 3 since a long query's last
    # word is matched whole (search-query.js) and RMN-0190's summary names its 'Config file not found at' line.
    # RMN-0167 and RMN-0352 (and RMN-0020 for 'No HIP GPUs are available') fell out of the top 3 when words of the
    # query stood in other entries' titles; back since errbook-search.js ranks a line's words held together higher.
    assert not missed, missed


ISSUE_QUERIES = [
    ("hipErrorNoBinaryForGpu", ["RMN-0090"]), ("hipErrorNoDevice", ["RMN-0021"]),
    ("No HIP GPUs are available", ["RMN-0020"]),
    # Fell to 5th in 2026-12-07's content wave (other programs' out-of-memory entries hold "hip", "out" and memory_*
    # words densely); back in the top 3 since errbook-search.js scores the query's words held as written (PHRASE).
    ("HIP out of memory", ["RMN-0092"]),
    ("显存不足", ["RMN-0092"]), ("invalid device function", ["RMN-0090"]), ("TensileLibrary.dat", ["RMN-0093"]),
    ("找不到 设备", ["RMN-0021", "RMN-0020"]),
]


@pytest.mark.parametrize("query,expect", ISSUE_QUERIES)
def test_issue_queries_find_their_entry(browser, search_page, query, expect):
    pages = search(browser, query)
    r = rank(pages, search_page, expect)
    print(f"{query!r}: rank {r}")
    assert r is not None and r < 3, pages[:5]


def _natural_queries(held_out):
    import yaml
    data = yaml.safe_load((REPO / "tests" / "search_queries.yaml").read_text(encoding="utf-8"))
    return [q for q in data["queries"] if bool(q.get("held_out")) == held_out]


def _expected(q, real_entries):
    if q.get("expect_class"):
        return [e.id for e in real_entries if e.get("class") == q["expect_class"]]
    return q["expect"]


@pytest.mark.parametrize("q", _natural_queries(False), ids=lambda q: q["query"])
def test_natural_queries_find_their_entry(browser, search_page, real_entries, q):
    """Words people type (issue titles, tests/search_queries.yaml): an entry that answers the query is in the top 3."""
    pages = search(browser, q["query"])
    r = rank(pages, search_page, _expected(q, real_entries))
    print(f"{q['query']!r}: rank {r}")
    assert r is not None and r < 3, (q["source"], pages[:5])


def test_held_out_queries(browser, search_page, real_entries):
    """Queries kept out of the tuning (held_out: true): reported, not asserted, so the figure stays a measurement."""
    held = _natural_queries(True)
    assert len(held) >= 5
    ranks = {q["query"]: rank(search(browser, q["query"]), search_page, _expected(q, real_entries)) for q in held}
    top3 = sum(r is not None and r < 3 for r in ranks.values())
    print(f"held-out natural queries in the top 3: {top3}/{len(held)} {ranks}")


@pytest.mark.parametrize("query", ["HIPIFY", "未移植"])
def test_search_reaches_the_entry(browser, server, query):
    browser.get(f"{server}/?q={quote(query)}")
    from selenium.webdriver.common.by import By
    links = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, ".md-search-result__link"))
    target = next(h for h in (a.get_attribute("href") for a in links) if "/entries/" in h)
    browser.get(target)
    assert "/entries/RMN-0001/" in browser.current_url and "cuda_runtime.h" in browser.title


def test_error_lines_with_query_syntax_still_search(browser, search_page):
    """lunr reads 'read-write:' as a field and '--x' as 'must not': pasted lines must still find entries."""
    pages = search(browser, "Unable to open /dev/kfd read-write: Cannot allocate memory")
    r = rank(pages, search_page, ["RMN-0099"])
    assert r is not None and r < 3, (pages[:5], browser.execute_script(
        "return [document.querySelector('.md-search__input').value, "
        "document.querySelector('.md-search-result__meta').textContent]"))


def test_prefix_queries_survive_lunrs_token_set(browser, search_page):
    """Typing "gpu" used to show no result at all: lunr's token-set key is ambiguous with digits (fixed in the
    worker by assets/errbook/errbook-search.js)."""
    for q in ("gpu", "5", "hip", "rocm"):
        assert search(browser, q), q
    assert browser.execute_script("return performance.getEntriesByType('resource').some("
                                  "r => /workers\\/errbook-search\\.js\\?w=/.test(r.name))")


# --- paste page ----------------------------------------------------------------------------------------------

def open_paste(browser, base):
    browser.get(f"{base}/triage/")
    wait_for(lambda: browser.execute_script("return !!(window.ErrbookPaste && window.ErrbookPaste.ready)"))


def paste_and_match(browser, text, budget_ms=None):
    from selenium.webdriver.common.by import By
    browser.execute_script("document.getElementById('errbook-log').value = arguments[0];"
                           "const r = document.getElementById('errbook-results'); r.replaceChildren(); delete "
                           "r.dataset.state;", text)
    if budget_ms is not None:
        browser.execute_script("document.getElementById('errbook-triage').dataset.budgetMs = arguments[0]",
                               str(budget_ms))
    browser.execute_script("return document.getElementById('errbook-log').scrollHeight")   # lay the text out now
    browser.execute_script("window.scrollTo(0, 0)")     # a previous Match scrolled the page to its verdict
    time.sleep(0.3)
    browser.find_element(By.ID, "errbook-go").click()
    return wait_for(lambda: browser.execute_script(
        "const r = document.getElementById('errbook-results'); return r.dataset.state === 'done' ? r.innerText : null"),
        timeout=60)


def requests_since(browser):
    sent = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
    return [m["params"]["request"] for m in sent if m["method"] == "Network.requestWillBeSent"
            and not m["params"]["request"]["url"].startswith("data:")]


def test_paste_page_matches_like_the_cli_and_sends_nothing(browser, server, built):
    root, _, _ = built
    log = ("[ 50%] Building HIP object CMakeFiles/k.dir/k.hip.o\nSECRET-MARKER-7f3a\n"
           "k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n1 error generated when compiling for gfx90a.\n")
    loaded, _ = entries.load_all(root)
    expected = matcher.Matcher.from_entries(list(entries.active(loaded))).match_text(log)
    viewport(browser, 1400, 1000)
    open_paste(browser, server)
    browser.get_log("performance")                     # drop the page-load requests
    text = paste_and_match(browser, log)
    lines = [x for x in text.splitlines() if x.strip()]
    assert lines[0].startswith(f"{expected[0]['id']}: ")         # the verdict first, then the status line
    assert lines[2].startswith(f"{expected[0]['id']} · ")        # and the first card
    assert f"score {expected[0]['score']}" in text
    assert "3: k.hip:1:10: fatal error: 'cuda_runtime.h' file not found" in text
    time.sleep(1)
    requests = requests_since(browser)
    assert requests == [], f"the paste page made requests: {[r['url'] for r in requests]}"
    assert "SECRET-MARKER" not in browser.current_url


def plain(md: str) -> str:
    """Entry prose as a card shows it: code spans rendered, so no backticks."""
    return re.sub(r"`([^`]+)`", r"\1", md)


def test_paste_card_is_an_incident_card(browser, server, built):
    from selenium.webdriver.common.by import By
    root, _, _ = built
    d = next(e for e in entries.load_all(root)[0] if e.id == "RMN-0001").data
    open_paste(browser, server)
    paste_and_match(browser, "k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n")
    card = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-card")
    text = card.text
    assert "Cause: " + plain(phrases.cause_line(d)) in text                   # the entry's one-line cause
    assert "`" not in text                                         # code spans rendered, no raw backticks
    assert card.find_elements(By.CSS_SELECTOR, "p code")
    assert re.search(r"(Strong|Good|Weak) match: ", text)
    fix = card.find_element(By.LINK_TEXT, "Open the fix").get_attribute("href")
    assert fix.endswith("/entries/RMN-0001/#fix")
    browser.find_element(By.XPATH, "//div[@id='errbook-results']//button[text()='中文']").click()
    card = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-card")
    assert "原因：" + plain(phrases.cause_line_zh(d)) in card.text
    browser.find_element(By.XPATH, "//div[@id='errbook-results']//button[text()='English']").click()


def document_status(browser, url):
    """The HTTP status Chromium got for the document at url (the network log; drained by each call)."""
    want, status = url.split("#")[0], None
    for e in browser.get_log("performance"):
        m = json.loads(e["message"])["message"]
        if m["method"] == "Network.responseReceived" and m["params"]["type"] == "Document" \
                and m["params"]["response"]["url"].split("#")[0] == want:
            status = m["params"]["response"]["status"]
    return status


def follow(browser, element):
    """Click a link as a reader does; return (HTTP status of the page it loaded, whether its anchor is in view)."""
    href = element.get_attribute("href")
    browser.get_log("performance")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()
    wait_for(lambda: browser.current_url == href and browser.execute_script("return document.readyState") == "complete")
    frag = href.split("#", 1)[1] if "#" in href else ""
    in_view = not frag or wait_for(lambda: browser.execute_script(
        "const e = document.getElementById(arguments[0]); if (!e) return null;"
        "const r = e.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight;", frag), timeout=10)
    return document_status(browser, href), in_view


@pytest.mark.parametrize("size", SIZES)
def test_every_paste_page_link_lands(browser, server, size):
    """Every link a result card or the no-match advice generates is clicked and loads with 200, its anchor in
    view (the card links once resolved against the paste page's own address and all 404ed)."""
    from selenium.webdriver.common.by import By
    viewport(browser, *size)
    try:
        cases = [("k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n", ".eb-card a"),
                 ("all good here\nbuild finished: 0 errors, nothing failed to link\n", ".eb-next a")]
        for log, css in cases:
            open_paste(browser, server)
            paste_and_match(browser, log)
            n = len(browser.find_elements(By.CSS_SELECTOR, f"#errbook-results {css}"))
            assert n >= 3, (css, n)
            for i in range(n):
                if i:
                    open_paste(browser, server)
                    paste_and_match(browser, log)
                a = browser.find_elements(By.CSS_SELECTOR, f"#errbook-results {css}")[i]
                href = a.get_attribute("href")
                assert href.startswith(server + "/") and "/triage/" not in href, href
                status, in_view = follow(browser, a)
                assert status == 200 and in_view, (href, status, in_view)
                if "/entries/" in href:                      # the entry's own page, not another one
                    assert "RMN-0001" in browser.find_element(By.TAG_NAME, "article").text
    finally:
        viewport(browser, 1400, 1000)


def test_paste_page_search_result_lands(browser, server):
    """The no-match advice opens the site search on the log's line; a result it lists loads with 200."""
    from selenium.webdriver.common.by import By
    open_paste(browser, server)
    paste_and_match(browser, "onboarding step failed\n")
    browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-next button").click()
    hit = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, ".md-search-result__link"), timeout=30)[0]
    status, _ = follow(browser, hit)
    assert status == 200, hit


def test_paste_page_never_wider_than_a_phone(browser, real_site):
    viewport(browser, 390, 844)
    try:
        open_paste(browser, real_site)
        fault = ("Memory access fault by GPU node-4 (Agent handle: 0x152e220) on address (nil). "
                 "Reason: Page not present or supervisor privilege.")
        log = ("x" * 500 + " " + "y" * 500 + "\n" + "/" * 500
               + "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!" + "z" * 500 + "\n"
               + fault + "\n")
        text = paste_and_match(browser, log)
        assert "RMN-0090" in text and "RMN-0091" in text
        assert browser.execute_script("return document.documentElement.scrollWidth <= innerWidth")
        card = browser.execute_script("return [...document.querySelectorAll('.eb-card')].find(c => "
                                      "c.textContent.includes('RMN-0091')).querySelector('.eb-evidence').textContent")
        assert card.count("Memory access fault by GPU node-4") == 1       # matched by two signatures, shown once
    finally:
        viewport(browser, 1400, 1000)


def card_texts(browser):
    return browser.execute_script("return [...document.querySelectorAll('#errbook-results .eb-card')].map(c => "
                                  "c.innerText)")


def test_paste_page_says_likely_for_the_second_stage(browser, real_site):
    """A report in prose matches no signature: the second stage's entries are shown as likely, in the CLI's
    order, without evidence lines they do not have."""
    text = (REPO / "errata" / "corpus" / "unseen" / "RMN-0039-backprop-2e8-layernorm-prose.log").read_text()
    active = list(entries.active(entries.load_all(REPO)[0]))
    know = pipeline.knowledge(REPO, active)
    cli = ranking.match_text(pipeline.build_matcher(active, pages=know.pages), know, text)
    assert cli and {r["confidence"] for r in cli} == {"likely"}            # the fixture stays a second-stage case
    viewport(browser, 1400, 1000)
    open_paste(browser, real_site)
    out = paste_and_match(browser, text)
    assert "No signature matched" in out and "likely, not certain" in out
    cards = card_texts(browser)
    assert [c.split(" · ")[0] for c in cards] == [r["id"] for r in cli][:5]
    for c in cards:
        assert "Likely: lines close to this problem's messages" in c and "Strong match" not in c
        assert "Lines in your log" not in c and "No line of your log matched this entry's patterns" in c
        assert "Open the fix" in c
    assert re.search(r"\(score \d+\.\d\d\)", cards[0])


def test_paste_page_reads_a_machine_facts_file(browser, real_site):
    """A facts file (errbook doctor --collect) re-ranks in the page as `errbook triage --facts` does: the status
    says it was loaded, the card shows the machine's finding, and neither the facts nor the log is sent."""
    from selenium.webdriver.common.by import By
    facts = REPO / "tests" / "doctor_machines" / "radeon-bad-override.json"
    log = ("Memory access fault by GPU node-2 (Agent handle: 0x63155be5d980) on address (nil). Reason: Unknown.\n"
           "Aborted (core dumped)\n")
    finding = "this machine: HSA_OVERRIDE_GFX_VERSION is not major.minor.stepping"
    viewport(browser, 1400, 1000)
    open_paste(browser, real_site)
    paste_and_match(browser, log)
    before = next(c for c in card_texts(browser) if c.startswith("RMN-0023 · "))
    assert finding not in before and "Machine facts loaded" not in browser.find_element(By.ID, "errbook-results").text
    browser.get_log("performance")
    browser.execute_script("const r = document.getElementById('errbook-results'); delete r.dataset.state;")
    browser.find_element(By.ID, "errbook-facts").send_keys(str(facts))      # a log is there: it is matched again
    out = wait_for(lambda: browser.execute_script(
        "const r = document.getElementById('errbook-results'); return r.dataset.state === 'done' ? r.innerText : null"))
    n = len(json.loads(facts.read_text())["facts"])
    assert f"Machine facts loaded ({n} facts)" in out
    after = next(c for c in card_texts(browser) if c.startswith("RMN-0023 · "))
    assert "Environment: " + finding in after
    assert requests_since(browser) == []
    browser.find_element(By.XPATH, "//div[@id='errbook-results']//button[text()='中文']").click()
    assert "已载入机器信息" in browser.find_element(By.ID, "errbook-results").text
    browser.find_element(By.XPATH, "//div[@id='errbook-results']//button[text()='English']").click()


def test_paste_page_no_match_offers_next_steps(browser, server):
    from selenium.webdriver.common.by import By
    open_paste(browser, server)
    browser.get_log("performance")
    url = browser.current_url
    text = paste_and_match(browser, "all good here\nbuild finished: 0 errors, nothing failed to link\n")
    assert "No entry matched" in text
    res = browser.find_element(By.ID, "errbook-results")
    hrefs = [a.get_attribute("href") for a in res.find_elements(By.TAG_NAME, "a")]
    assert any(h.endswith("/classes/compile/") for h in hrefs) and any(h.endswith("/contributing/") for h in hrefs)
    # No line reports a failure ("0 errors", "nothing failed" are not failures, as for the CLI): search the first line.
    assert not res.find_elements(By.CSS_SELECTOR, ".eb-first-failure")
    res.find_element(By.CSS_SELECTOR, ".eb-next button").click()
    query = "return document.querySelector('.md-search__input').value"
    assert wait_for(lambda: browser.execute_script(query)) == "all good here"
    time.sleep(0.5)
    assert browser.current_url == url
    assert not [r for r in requests_since(browser) if "nothing%20failed" in r["url"] or "all%20good" in r["url"]]


def test_paste_page_searches_the_first_failure_line_the_cli_names(browser, real_site):
    """A failure no entry knows: the page shows and searches the line `errbook triage` prints (one definition,
    retrieval.first_failure_line, which engine.js mirrors; tests/test_engines.py compares them on every log)."""
    from selenium.webdriver.common.by import By
    odd = "step 3 of 7: INFO starting the quux\nstep 4 of 7: fatal: the quux did not zorb (code 17)\nstep 5 of 7\n"
    cli = json.loads(subprocess.run([sys.executable, "-m", "errbook", "triage", "--json", "-"], input=odd.encode(),
                                    capture_output=True, cwd=REPO).stdout)
    assert cli["matches"] == [] and "did not zorb" in cli["stats"]["first_failure_line"]
    open_paste(browser, real_site)
    browser.get_log("performance")
    assert "No entry matched" in paste_and_match(browser, odd)
    res = browser.find_element(By.ID, "errbook-results")
    assert res.find_element(By.CSS_SELECTOR, ".eb-first-failure").text == cli["stats"]["first_failure_line"]
    res.find_element(By.CSS_SELECTOR, ".eb-next button").click()
    assert wait_for(lambda: browser.execute_script("return document.querySelector('.md-search__input').value")) \
        == cli["stats"]["first_failure_line"][:160]
    assert not [r for r in requests_since(browser) if "zorb" in r["url"]]
    browser.execute_script("const s = document.getElementById('__search'); s.checked = false;"
                           "s.dispatchEvent(new Event('change'));")


def test_paste_page_shows_an_observation_as_worth_knowing_not_a_match(browser, real_site):
    """Answer levels on the page as in the CLI: RCCL's channel-over-socket line (an `observation` signature of
    RMN-0193) gives an "info" card that says "Worth knowing", never a green success card; with a real error
    line next to it, the diagnosis comes first and is the green card."""
    from selenium.webdriver.common.by import By
    loaded, _ = entries.load_all(REPO)
    e = next(x for x in loaded if x.id == "RMN-0193")
    sig = next(s for s in e["signatures"] if s["id"] == "rccl-channel-via-net-socket")
    assert sig["level"] == "observation"
    obs = sig["examples"][0]["text"]
    open_paste(browser, real_site)
    text = paste_and_match(browser, obs + "\n")
    assert "No known problem named in your log" in text and "worth knowing" in text
    res = browser.find_element(By.ID, "errbook-results")
    cards = res.find_elements(By.CSS_SELECTOR, ".eb-card")
    mine = [c for c in cards if c.text.startswith("RMN-0193 · ")]
    assert mine and "eb-observation" in mine[0].get_attribute("class")
    assert not res.find_elements(By.CSS_SELECTOR, ".eb-card.success")
    assert "Worth knowing" in mine[0].text
    assert res.find_elements(By.CSS_SELECTOR, ".eb-next")         # no answer: the next steps are offered
    paste_and_match(browser, obs + "\nk.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n")
    cards = res.find_elements(By.CSS_SELECTOR, ".eb-card")
    assert cards[0].text.startswith("RMN-0001 · ") and "success" in cards[0].get_attribute("class")
    assert any(c.text.startswith("RMN-0193 · ") and "eb-observation" in c.get_attribute("class") for c in cards[1:])


def test_paste_page_verdict_first_summary_and_back(browser, real_site):
    """Issue 27 items 3, 6, 7, 8: Ctrl+Enter matches; the one-line verdict comes first, holds the focus and is on
    the phone's screen; "Copy summary" copies Markdown with the entries' pages and no log text; Back from the
    entry page shows the last results again (this tab's session storage)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    viewport(browser, 390, 844)
    try:
        open_paste(browser, real_site)
        browser.execute_script("sessionStorage.clear()")
        log = ("SECRET-MARKER-9c1d\nk.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n"
               "step 4 of 7: fatal: the quux did not zorb (code 17)\n")
        area = browser.find_element(By.ID, "errbook-log")
        browser.execute_script("arguments[0].value = arguments[1]", area, log)
        area.send_keys(Keys.CONTROL, Keys.ENTER)
        wait_for(lambda: browser.execute_script(
            "return document.getElementById('errbook-results').dataset.state === 'done'"))
        v = wait_for(lambda: browser.execute_script(
            "const a = document.activeElement; if (!a || !a.classList.contains('eb-verdict')) return null;"
            "const r = a.getBoundingClientRect();"
            "return {text: a.innerText, top: r.top, bottom: r.bottom, vh: innerHeight,"
            " first: a === document.getElementById('errbook-results').firstElementChild};"))
        assert v["text"].startswith("RMN-0001: ") and re.search(r"— (strong|good) match$", v["text"]), v
        assert v["first"] and v["top"] >= 0 and v["bottom"] <= v["vh"], v
        # below the matches, the error lines no entry explains (item 4): the quux line, not the explained one
        unexplained = browser.find_element(By.CSS_SELECTOR, "pre.eb-unexplained").text
        assert unexplained.strip() == "3: step 4 of 7: fatal: the quux did not zorb (code 17)", unexplained
        browser.execute_script("window.__copied = null; document.addEventListener('copy', (ev) => {"
                               " window.__copied = (ev.target && ev.target.value !== undefined) ? ev.target.value"
                               " : String(document.getSelection()); }, true);")
        browser.find_element(By.CSS_SELECTOR, ".eb-copy-summary").click()
        md = wait_for(lambda: browser.execute_script("return window.__copied"), timeout=10)
        assert md.startswith("**errbook triage:** RMN-0001: ") and f"({real_site}/entries/RMN-0001/)" in md, md
        assert "SECRET-MARKER" not in md and "k.hip:1:10" not in md            # entries and pages, no log text
        browser.find_element(By.CSS_SELECTOR, ".eb-card .eb-actions a.md-button--primary").click()
        wait_for(lambda: "/entries/RMN-0001/" in browser.current_url)
        browser.back()
        wait_for(lambda: browser.execute_script("return !!(window.ErrbookPaste && window.ErrbookPaste.ready)"))
        again = browser.find_element(By.ID, "errbook-results")
        assert any(c.text.startswith("RMN-0001 · ") for c in again.find_elements(By.CSS_SELECTOR, ".eb-card"))
        # a fresh load of the page (not the back-forward cache) restores them from session storage, and says so
        browser.refresh()
        wait_for(lambda: browser.execute_script("return !!(window.ErrbookPaste && window.ErrbookPaste.ready)"))
        again = browser.find_element(By.ID, "errbook-results")
        assert again.find_elements(By.CSS_SELECTOR, ".eb-restored")
        assert any(c.text.startswith("RMN-0001 · ") for c in again.find_elements(By.CSS_SELECTOR, ".eb-card"))
        browser.execute_script("sessionStorage.clear()")
        # the home page's first screen offers the paste page, on a phone too
        browser.get(f"{real_site}/")
        cta = browser.find_element(By.CSS_SELECTOR, "a.eb-cta")
        r = browser.execute_script(
            "const r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom, innerHeight]", cta)
        assert r[0] >= 0 and r[1] <= r[2], r
        cta.click()
        wait_for(lambda: browser.current_url.rstrip("/").endswith("/triage"))
    finally:
        viewport(browser, 1400, 1000)


def test_paste_page_budget_gives_partial_results_not_a_freeze(browser, server, tmp_path):
    """Over the time budget the log is matched in parts: the page says so, shows what it found (with the right
    line numbers) and stays usable. Only the page's own worker scripts are fetched; the log goes nowhere."""
    from selenium.webdriver.common.by import By
    open_paste(browser, server)
    browser.execute_script("document.getElementById('errbook-triage').dataset.budgetMs = '1';"
                           "const r = document.getElementById('errbook-results'); delete r.dataset.state;")
    browser.get_log("performance")
    err = "k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n"
    lines = [f"[{i}] ordinary build output line SECRET-MARKER-9\n" for i in range(300000)]
    lines[1000] = err
    log = tmp_path / "big.log"
    log.write_text("".join(lines) + err)
    browser.find_element(By.ID, "errbook-file").send_keys(str(log))       # a file: the textarea shows its head
    text = wait_for(lambda: browser.execute_script(
        "const r = document.getElementById('errbook-results'); return r.dataset.state === 'done' ? r.innerText : null"),
        timeout=90)
    assert "results are partial" in text
    assert "RMN-0001" in text and "1001: k.hip:1:10: fatal error" in text
    assert "300002 lines" in text
    assert browser.execute_script("return 1 + 1") == 2
    for r in requests_since(browser):
        assert r["method"] == "GET" and r["url"].startswith(server) and re.search(r"/assets/errbook/[a-z-]+\.js$",
                                                                                  r["url"]), r["url"]
        assert "SECRET" not in r["url"] and not r.get("postData")


def test_paste_page_survives_hostile_input(browser, server):
    from selenium.webdriver.common.by import By
    open_paste(browser, server)
    browser.execute_script(
        "const big = 'cuda_runtime.h '.repeat(400000) + '\\n' + '\\u0000\\ufffd<img src=x onerror=window.pwned=1>\\n';"
        "document.getElementById('errbook-log').value = big + \"a.hip:1:10: fatal error: 'cuda_runtime.h' file not "
        "found\";")
    browser.find_element(By.ID, "errbook-go").click()
    text = wait_for(lambda: browser.execute_script(      # the budget ends matching; the ceiling only catches a hang
        "const r = document.getElementById('errbook-results'); "
        "return r.dataset.state === 'done' ? r.innerText : null"), timeout=300)
    assert "RMN-0001" in text
    assert browser.execute_script("return window.pwned === undefined")


# --- index tables ----------------------------------------------------------------------------------------------

def test_entry_table_filters(browser, server):
    from selenium.webdriver.common.by import By
    browser.get(f"{server}/overview/")
    box = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, ".eb-filter input"))[0]
    assert {s.get_attribute("aria-label") for s in browser.find_elements(By.CSS_SELECTOR, ".eb-filter select")} == \
        {"Class", "Tags", "GPU", "ROCm", "Verified"}
    box.send_keys("broken")
    rows = browser.execute_script("return [...document.querySelectorAll('table tbody tr')].filter(r => "
                                  "!r.hidden).map(r => r.cells[0].textContent)")
    assert rows == ["RMN-0002"]
    assert browser.find_element(By.CSS_SELECTOR, ".eb-filter-count").text == "1 of 2"
