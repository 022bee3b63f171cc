"""The paste page's message block (engine.js messageBlock, paste.js messageBox): the same causes and evidence as
`errbook triage --json`, and its links land on the message page and the cause's entry page."""
import json

import pytest

from conftest import errbook
from test_browser import CHROMIUM, DRIVER, browser, follow, open_paste, paste_and_match, serve  # noqa: F401
from test_site_messages import msg_site  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="no chromium")]

LOG = ("k.hip:1:10: fatal error: 'cuda_runtime.h' file not found\n"
       "#include <cuda_runtime.h>\n"
       "1 error generated when compiling for gfx90a.\n")


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
