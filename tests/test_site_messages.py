"""A message page on the site: written next to the entry pages at web/addresses.py's address, listing its causes
(each link followed to its entry page) with the evidence; each cause's entry page links back."""
import json
import re
from pathlib import Path
from urllib.parse import urljoin

import pytest

from conftest import build, make_root
from errbook.web import addresses
from test_messages import PAGE, write_page

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def msg_site(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("msgsite") / "root", with_docs=True)
    write_page(root, PAGE)
    out = root.parent / "site"
    r = build(root, out)
    assert r.returncode == 0, r.stdout + r.stderr
    return root, out


def page_file(out: Path, src: str) -> Path:
    return out / src[:-len(".md")] / "index.html"


def hrefs(html: str) -> list[str]:
    return re.findall(r'href="([^"#]+)', html)


def resolve(out: Path, page_src: str, href: str) -> Path:
    """A relative link of a built page, as a browser resolves it, to the file it serves."""
    url = urljoin("http://site/" + page_src[:-len(".md")] + "/", href)
    path = out / url[len("http://site/"):]
    return path / "index.html" if url.endswith("/") else path


def test_the_message_page_lists_its_causes_and_each_link_lands(msg_site):
    _, out = msg_site
    src = addresses.message_src(PAGE["id"])
    html = page_file(out, src).read_text(encoding="utf-8")
    assert "This message has 1 known cause" in html
    body = html[html.index("<article"):html.index("</article>")]
    entry_links = [h for h in hrefs(body) if "entries/" in h]
    assert entry_links, body[:500]
    for h in entry_links:
        target = resolve(out, src, h)
        assert target.is_file(), (h, target)
        assert "RMN-0001" in target.read_text(encoding="utf-8")
    # the evidence that tells the causes apart: its words, its pattern, its machine condition
    assert "The source includes the CUDA header" in body and "#include &lt;cuda_runtime" in body
    assert "tools.hipcc" in body


def test_the_cause_entry_page_links_back_to_the_message(msg_site):
    _, out = msg_site
    src = addresses.entry_src("RMN-0001")
    html = page_file(out, src).read_text(encoding="utf-8")
    back = [h for h in hrefs(html) if "messages/" in h]
    assert back, "no link to the message page"
    target = resolve(out, src, back[0])
    assert target == page_file(out, addresses.message_src(PAGE["id"])) and target.is_file()


def test_the_paste_page_bundle_carries_the_page_and_its_address(msg_site):
    _, out = msg_site
    js = (out / addresses.ASSETS_DIR / "signatures.js").read_text(encoding="utf-8")
    bundle = json.loads(js.split(" = ", 1)[1].rstrip().rstrip(";"))
    assert [m["id"] for m in bundle["messages"]] == ["test-message"]
    # the paste page's address of a message page is a page that was built
    u = bundle["site"]["message"].format(id="test-message")
    assert (out / u / "index.html").is_file(), u
