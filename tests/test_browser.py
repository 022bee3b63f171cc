"""A real headless Chromium: search in English and Chinese reaches the entry; the paste page matches like the
CLI and sends nothing anywhere."""
import functools
import http.server
import json
import shutil
import threading
import time

import pytest

from errbook import entries, matcher

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="Debian's chromium and chromium-driver are not installed")


@pytest.fixture(scope="module")
def server(built):
    _, out, r = built
    assert r.returncode == 0, r.stderr
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
              f"--user-data-dir={tmp_path_factory.mktemp('chrome')}"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    drv.set_page_load_timeout(60)
    yield drv
    drv.quit()


def wait_for(fn, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError("timed out waiting")


def search_and_open(browser, server, query):
    from selenium.webdriver.common.by import By
    from urllib.parse import quote
    browser.get(f"{server}/?q={quote(query)}")
    links = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, ".md-search-result__link"))
    hrefs = [a.get_attribute("href") for a in links]
    target = next(h for h in hrefs if "/entries/" in h)
    browser.get(target)
    return browser.current_url, browser.title


@pytest.mark.parametrize("query", ["HIPIFY", "未移植"])
def test_search_reaches_the_entry(browser, server, query):
    url, title = search_and_open(browser, server, query)
    assert "/entries/RMN-0001/" in url
    assert "cuda_runtime.h" in title


def test_paste_page_matches_like_the_cli_and_sends_nothing(browser, server, built):
    from selenium.webdriver.common.by import By
    root, _, _ = built
    log = ("[ 50%] Building HIP object CMakeFiles/k.dir/k.hip.o\nSECRET-MARKER-7f3a\n"
           "k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n1 error generated when compiling for gfx90a.\n")
    loaded, _ = entries.load_all(root)
    expected = matcher.Matcher.from_entries(list(entries.active(loaded))).match_text(log)
    browser.get(f"{server}/triage/")
    wait_for(lambda: browser.execute_script("return !!window.ErrbookTriage"))
    browser.get_log("performance")                     # drop the page-load requests
    browser.execute_script("document.getElementById('errbook-log').value = arguments[0];", log)
    browser.find_element(By.ID, "errbook-go").click()
    text = wait_for(lambda: browser.find_element(By.ID, "errbook-results").text)
    assert text.splitlines()[1].startswith(f"{expected[0]['id']} · ")
    assert f"score {expected[0]['score']}" in text
    assert "3: k.hip:1:10: fatal error: 'cuda_runtime.h' file not found" in text
    time.sleep(1)
    sent = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
    requests = [m["params"]["request"] for m in sent if m["method"] == "Network.requestWillBeSent"
                and not m["params"]["request"]["url"].startswith("data:")]    # inline icons are not network
    assert requests == [], f"the paste page made requests: {[r['url'] for r in requests]}"
    # and nothing the page could leak: no element took the log into a URL
    assert "SECRET-MARKER" not in browser.current_url


def test_paste_page_survives_hostile_input(browser, server):
    from selenium.webdriver.common.by import By
    browser.get(f"{server}/triage/")
    wait_for(lambda: browser.execute_script("return !!window.ErrbookTriage"))
    browser.execute_script(
        "const big = 'cuda_runtime.h '.repeat(400000) + '\\n' + '\\u0000\\ufffd<img src=x onerror=window.pwned=1>\\n';"
        "document.getElementById('errbook-log').value = big + \"a.hip:1:10: fatal error: 'cuda_runtime.h' file not found\";")
    t0 = time.time()
    browser.find_element(By.ID, "errbook-go").click()
    text = wait_for(lambda: browser.find_element(By.ID, "errbook-results").text, timeout=60)
    assert time.time() - t0 < 30
    assert "RMN-0001" in text
    assert browser.execute_script("return window.pwned === undefined")
