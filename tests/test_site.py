"""The site: `mkdocs build --strict` alone builds everything from the entries and the ledger."""
import html as html_mod
import json
import re

from conftest import build, make_root


def text_of(page: str) -> str:
    return html_mod.unescape(re.sub(r"<[^>]+>", " ", page))


def test_strict_build_passes(built):
    _, out, r = built
    assert r.returncode == 0, r.stdout + r.stderr


def test_one_page_per_entry_and_indexes(built):
    _, out, _ = built
    assert sorted(p.name for p in (out / "entries").iterdir()) == ["RMN-0001", "RMN-0002"]
    for page in ("overview", "classes/compile", "classes/runtime", "classes/performance", "corrections",
                 "verification", "tags", "triage", "onboarding", "contributing", "schema"):
        assert (out / page / "index.html").is_file(), page
    assert json.loads((out / "schema" / "entry-1.schema.json").read_text())["title"].startswith("ROCm")
    compile_idx = (out / "classes" / "compile" / "index.html").read_text()
    assert "RMN-0001" in compile_idx and "RMN-0002" in compile_idx


def test_entry_text_is_inert(built):
    _, out, _ = built
    html = (out / "entries" / "RMN-0002" / "index.html").read_text()
    for bad in ("<script>alert", "<img src=x", 'href="javascript:alert', "<iframe"):
        assert bad not in html, bad
    # parsed as a browser would: no element carries an injected handler, no script holds injected code
    from html.parser import HTMLParser

    found = []

    class P(HTMLParser):
        in_script = False

        def handle_starttag(self, tag, attrs):
            self.in_script = tag == "script"
            found.extend((tag, k, v) for k, v in attrs if v and "alert" in v and (k.startswith("on") or v.strip().lower().startswith("javascript:")))
            found.extend([(tag, "tag", "")] if tag in ("img", "iframe") else [])

        def handle_data(self, data):
            if self.in_script and "alert(" in data:
                found.append(("script", "body", data[:80]))

    P().feed(html)
    assert found == []
    assert "&lt;script&gt;alert" in html          # shown as text
    assert "not a heading" in html and "<h1 id=\"not-a-heading\"" not in html
    assert "alert(6)" in re.sub(r"<[^>]+>", "", html) and "<script>alert(6)" not in html


def test_entry_page_shows_verification_and_corrections(built):
    _, out, _ = built
    page = (out / "entries" / "RMN-0001" / "index.html").read_text()
    t = text_of(page)
    assert re.search(r"toolchain <span class=\"twemoji\">.*?</span> CPU \(no GPU\)", page)   # passed mark as SVG
    assert "Not yet verified on AMD hardware" in t
    assert "What people believe" in t and "What is true" in t
    m = text_of((out / "verification" / "index.html").read_text())
    assert "CUDA · NVIDIA H200" in m and "ROCm (AMD GPU)" in m
    assert "ledger.jsonl:3: corrupt record" in m
    c = text_of((out / "corrections" / "index.html").read_text())
    assert "ROCM_PATH only tells tools where ROCm is" in c


def test_related_links_both_ways(built):
    _, out, _ = built
    assert "../RMN-0002/" in (out / "entries" / "RMN-0001" / "index.html").read_text()


def test_search_index_has_segmented_chinese(built):
    _, out, _ = built
    idx = json.loads((out / "search" / "search_index.json").read_text())
    docs = [d for d in idx["docs"] if d["location"].startswith("entries/RMN-0001/")]
    assert docs and any("\u200b" in d["text"] for d in docs)   # jieba segmentation inserted separators


def test_paste_page_assets(built):
    _, out, _ = built
    js = (out / "assets" / "errbook" / "signatures.js").read_text()
    assert js.startswith("window.ERRBOOK_BUNDLE = ") and "cuda-header-not-found" in js
    assert (out / "assets" / "errbook" / "engine.js").is_file()
    assert (out / "assets" / "errbook" / "paste.js").is_file()


def test_invalid_entry_fails_the_build(tmp_path):
    root = make_root(tmp_path / "root", with_docs=True)
    p = root / "errata" / "compile" / "RMN-0001.yaml"
    p.write_text(p.read_text().replace("    priority: 4", "    priority: high"))
    r = build(root, tmp_path / "out")
    assert r.returncode != 0 and "RMN-0001.yaml" in r.stdout + r.stderr and "signatures[0].priority" in r.stdout + r.stderr


def test_unknown_entry_reference_fails_the_build(tmp_path):
    root = make_root(tmp_path / "root", with_docs=True)
    (root / "docs" / "onboarding.md").write_text("# x\n\n[[RMN-0404]]\n")
    r = build(root, tmp_path / "out")
    assert r.returncode != 0 and "RMN-0404" in r.stdout + r.stderr


def test_site_loads_nothing_from_other_hosts(built):
    """No fonts, scripts, images or styles from a CDN: the site works offline and leaks nothing."""
    _, out, _ = built
    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        external = re.findall(r'<(?:script|img|link|iframe)[^>]+(?:src|href)="(https?://[^"]+)"', html)
        external = [u for u in external if not u.startswith("https://rocm.docs")]
        assert not [u for u in external if "stylesheet" in u or u.endswith((".js", ".css", ".svg", ".png", ".woff2"))], (page, external)
