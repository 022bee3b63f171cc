"""The paste page's message block (engine.js messageBlock, paste.js messageBox): the same causes and evidence as
`errbook triage --json`, and its links land on the message page and the cause's entry page."""
import contextlib
import json

import pytest

from conftest import errbook
from test_browser import CHROMIUM, DRIVER, browser, follow, open_paste, paste_and_match, serve  # noqa: F401
from test_site_messages import msg_site  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="no chromium")]

LOG = ("k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n"
       "#include <cuda_runtime.h>\n"
       "1 error generated when compiling for gfx90a.\n")


@contextlib.contextmanager
def _built_and_served(root):
    """The site of a test checkout, built and served while the fixture lasts: its base URL."""
    from conftest import build
    out = root.parent / "site"
    r = build(root, out)
    assert r.returncode == 0, r.stdout + r.stderr
    httpd, base = serve(out)
    try:
        yield base
    finally:
        httpd.shutdown()


@pytest.fixture(scope="module")
def msg_server(msg_site):  # noqa: F811
    _, out = msg_site
    httpd, base = serve(out)
    yield base
    httpd.shutdown()


def test_paste_page_shows_the_cli_block_and_its_links_land(browser, msg_site, msg_server):  # noqa: F811
    from selenium.webdriver.common.by import By
    root, _ = msg_site
    cli = json.loads(errbook("triage", "--json", root=root, input=LOG.encode()).stdout)["message"]
    open_paste(browser, msg_server)
    paste_and_match(browser, LOG)
    box = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-message")
    assert box.get_attribute("data-message") == cli["id"] == "test-message"
    assert "This message has 1 known cause" in box.text
    items = box.find_elements(By.CSS_SELECTOR, ".eb-message-causes > li")
    assert [li.get_attribute("data-entry") for li in items] == [c["entry"] for c in cli["causes"]]
    found = [e for e in cli["causes"][0]["evidence"] if e["state"] == "found"]
    assert found and f"{found[0]['lines'][0]['line']}: {found[0]['lines'][0]['text']}" in box.text
    page_link = box.find_element(By.LINK_TEXT, "All causes of this message")
    status, _ = follow(browser, page_link)
    assert status == 200 and "/messages/test-message/" in browser.current_url
    open_paste(browser, msg_server)
    paste_and_match(browser, LOG)
    entry_link = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-message-causes > li > a")
    status, _ = follow(browser, entry_link)
    assert status == 200 and "/entries/RMN-0001/" in browser.current_url


@pytest.fixture(scope="module")
def two_cause_server(tmp_path_factory):
    """The test page with a second, reported cause: the message alone no longer says which."""
    from conftest import make_root
    from test_messages import PAGE, write_page
    root = make_root(tmp_path_factory.mktemp("twocause") / "root", with_docs=True)
    write_page(root, dict(PAGE, other_causes=[{"says": "a second reported cause", "says_zh": "第二个原因",
                                               "source": "https://github.com/ROCm/hip/issues/2"}]))
    with _built_and_served(root) as base:
        yield root, base


def test_paste_page_shows_a_message_alone_as_likely_not_green(browser, two_cause_server):  # noqa: F811
    """triage/multicause.py on the page: the CLI's level, its note on the card, no green card; the entry's own
    evidence line makes it a diagnosis again (a green card)."""
    from selenium.webdriver.common.by import By
    root, base = two_cause_server
    alone = LOG.replace("#include <cuda_runtime.h>\n", "")
    cli = json.loads(errbook("triage", "--json", root=root, input=alone.encode()).stdout)["matches"][0]
    assert (cli["id"], cli["level"]) == ("RMN-0001", "likely")
    open_paste(browser, base)
    paste_and_match(browser, alone)
    card = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-card")
    assert "success" not in card.get_attribute("class").split() and "eb-likely" in card.get_attribute("class")
    assert cli["note"] in card.text and "other known problems print it too" in card.text
    verdict = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-verdict").text
    assert verdict.startswith("Likely RMN-0001") and "several known causes" in verdict
    browser.find_element(By.XPATH, "//p[contains(@class,'eb-langs')]//button[text()='中文']").click()
    card = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-card")
    assert "其他已知问题也会打印它" in card.text and cli["note"] not in card.text     # no English note in Chinese
    browser.find_element(By.XPATH, "//p[contains(@class,'eb-langs')]//button[text()='English']").click()
    paste_and_match(browser, LOG)
    card = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-card")
    assert "success" in card.get_attribute("class").split()


@pytest.fixture(scope="module")
def bare_message_server(tmp_path_factory):
    """A page whose message no entry's signature names (triage/pageonly.py): its cause is the likely answer."""
    from conftest import make_root
    from test_messages import PAGE, write_page
    root = make_root(tmp_path_factory.mktemp("baremsg") / "root", with_docs=True)
    bare = "hipErrorTestBare: the runtime refused the call"
    write_page(root, dict(PAGE, id="bare-message", signatures=[
        {"id": "bare", "pattern": "hipErrorTestBare\\b",
         "examples": [{"text": bare, "source": "https://github.com/ROCm/hip/issues/1"}]}]))
    with _built_and_served(root) as base:
        yield root, base, bare + "\n"


def test_paste_page_shows_a_bare_page_message_s_causes_as_likely(browser, bare_message_server):  # noqa: F811
    """The CLI's likely answer and note for a message no signature names, on a likely card with the message block."""
    from selenium.webdriver.common.by import By
    root, base, log = bare_message_server
    out = json.loads(errbook("triage", "--json", root=root, input=log.encode()).stdout)
    cli = out["matches"][0]
    assert (cli["id"], cli["level"], cli["message_only"]) == ("RMN-0001", "likely", True)
    open_paste(browser, base)
    paste_and_match(browser, log)
    card = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-card")
    assert "success" not in card.get_attribute("class").split() and "eb-likely" in card.get_attribute("class")
    assert cli["note"] in card.text and "words your log shares" not in card.text
    box = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-message")
    assert box.get_attribute("data-message") == out["message"]["id"] == "bare-message"


@pytest.fixture(scope="module")
def generic_line_server(tmp_path_factory):
    """RMN-0001 with a generic (priority 1) signature beside its own: that line alone is likely (multicause.py)."""
    import yaml

    from conftest import make_root
    root = make_root(tmp_path_factory.mktemp("generic") / "root", with_docs=True)
    path = root / "errata" / "compile" / "RMN-0001.yaml"
    entry = yaml.safe_load(path.read_text(encoding="utf-8"))
    line = "hipErrorTestGeneric: the runtime refused the call"
    entry["signatures"].append({"id": "generic-test", "priority": 1, "pattern": "hipErrorTestGeneric\\b",
                                "examples": [{"text": line, "source": "https://github.com/ROCm/hip/issues/1"}]})
    path.write_text(yaml.safe_dump(entry, allow_unicode=True, sort_keys=False), encoding="utf-8")
    with _built_and_served(root) as base:
        yield root, base, line + "\n"


def test_paste_page_shows_a_generic_line_alone_as_likely_in_both_languages(browser, generic_line_server):  # noqa: F811
    """The CLI's level and generic flag on a likely card that says why (not "words your log shares"), in English
    and in Chinese; the entry's own line beside it makes it a diagnosis (a green card)."""
    from selenium.webdriver.common.by import By
    root, base, log = generic_line_server
    cli = json.loads(errbook("triage", "--json", root=root, input=log.encode()).stdout)["matches"][0]
    assert (cli["id"], cli["level"], cli["generic"]) == ("RMN-0001", "likely", True) and "message_page" not in cli
    open_paste(browser, base)
    paste_and_match(browser, log)
    card = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-card")
    assert "success" not in card.get_attribute("class").split() and "eb-likely" in card.get_attribute("class")
    assert "a generic one: alone it seldom names the problem" in card.text and "words your log shares" not in card.text
    verdict = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-verdict").text
    assert verdict.startswith("Likely RMN-0001") and "generic line" in verdict
    browser.find_element(By.XPATH, "//p[contains(@class,'eb-langs')]//button[text()='中文']").click()
    card = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-card")
    assert "通用信息" in card.text and "generic" not in card.text
    browser.find_element(By.XPATH, "//p[contains(@class,'eb-langs')]//button[text()='English']").click()
    paste_and_match(browser, LOG + log)
    card = browser.find_element(By.CSS_SELECTOR, "#errbook-results .eb-card")
    assert "success" in card.get_attribute("class").split()
