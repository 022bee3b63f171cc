"""Accessibility of the built site in real Chromium (issue 27 item 16): axe-core (pinned in tests/axe/, installed
by scripts/bootstrap.sh with `npm ci`) over home, the paste page before and after matching a real log, the site
search with results, an entry page, the entry and class indexes, the matrix, a run page and what's new, at desktop
and phone size, in both of Material's palettes. Serious and critical violations fail the test; every violation is
printed, one line per rule and one per element."""
import os
import re

import pytest

import test_browser
from conftest import REPO
from errbook.web import addresses, phrases
from test_browser import SIZES, search, viewport, wait_for

# test_browser's fixtures, shared by name: Chromium, the real site served, the real entries
browser, real_site, real_entries = test_browser.browser, test_browser.real_site, test_browser.real_entries

AXE = REPO / "tests" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
SCHEMES = ("default", "slate")          # mkdocs.yml's two palettes: light, dark
FAILING = ("serious", "critical")
REAL_LOG = REPO / "errata" / "corpus" / "real" / "RMN-0090-1.log"
ENTRY = "RMN-0090"

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (test_browser.CHROMIUM and test_browser.DRIVER),
                                 reason="Debian's chromium and chromium-driver are not installed")]


@pytest.fixture(scope="module")
def axe_source():
    """axe-core as the bootstrap installed it. Missing, the test fails (always under CI), as the Node twins do; it
    skips only where the bootstrap said it skipped the install (ERRBOOK_ALLOW_NO_AXE=1) outside CI."""
    if AXE.is_file():
        return AXE.read_text(encoding="utf-8")
    if os.environ.get("ERRBOOK_ALLOW_NO_AXE") == "1" and not os.environ.get("CI"):
        pytest.skip("axe-core is not installed (ERRBOOK_ALLOW_NO_AXE=1: the bootstrap did not install it)")
    pytest.fail(f"axe-core is not installed at {AXE.relative_to(REPO)}: run `bash scripts/bootstrap.sh install` "
                "(npm ci in tests/axe/), or outside CI set ERRBOOK_ALLOW_NO_AXE=1 to skip", pytrace=False)


def run_page() -> str:
    nb = sorted((REPO / "docs" / "verification" / "runs").glob("*.ipynb"))[0]
    return "/" + addresses.run_page_src(nb.name)[:-len(".md")] + "/"


PAGES = [("home", "/"), ("paste", "/triage/"), ("entry", f"/entries/{ENTRY}/"), ("entries index", "/overview/"),
         ("class index", "/classes/runtime/"), ("matrix", "/verification/"), ("run", None),
         ("what's new", "/whats-new/")]

AXE_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations.map((v) => ({
  id: v.id, impact: v.impact, help: v.help,
  nodes: v.nodes.map((n) => ({target: n.target.join(' '), summary: (n.failureSummary || '').split('\\n')
    .slice(1).join(' ').trim()}))})))).catch((e) => done({error: String(e)}));
"""


def loaded(browser, base, path):
    browser.get(base + path)
    wait_for(lambda: browser.execute_script("return document.readyState === 'complete'"))


def set_scheme(browser, scheme):
    """Material's own palette toggle: the header button that switches to the other palette (the choice is kept in
    local storage, so every page loaded after it has this palette)."""
    if browser.execute_script("return document.body.getAttribute('data-md-color-scheme')") != scheme:
        browser.execute_script(   # the one label not hidden is the button to the other palette
            "document.querySelector('[data-md-component=palette] label:not([hidden])').click();")
    wait_for(lambda: browser.execute_script("return document.body.getAttribute('data-md-color-scheme')") == scheme)


def axe(browser, source):
    if not browser.execute_script("return typeof axe !== 'undefined'"):
        browser.execute_script(source)
    browser.set_script_timeout(120)
    out = browser.execute_async_script(AXE_RUN)
    assert not isinstance(out, dict), out
    return out


def states(browser, base):
    """Each page state to check, as (name, function that puts the browser in it)."""
    def page(path):
        return lambda: loaded(browser, base, path)

    def pasted():
        loaded(browser, base, "/triage/")
        wait_for(lambda: browser.execute_script("return !!(window.ErrbookPaste && window.ErrbookPaste.ready)"))
        browser.execute_script("document.getElementById('errbook-log').value = arguments[0];"
                               "document.getElementById('errbook-go').click();", REAL_LOG.read_text())
        wait_for(lambda: browser.execute_script(
            "return document.getElementById('errbook-results').dataset.state === 'done'"), timeout=60)
        assert browser.execute_script("return document.querySelector('.eb-card') !== null")

    def searched():
        loaded(browser, base, "/")
        search(browser, "hipErrorNoBinaryForGpu")

    out = [(name, page(path or run_page())) for name, path in PAGES]
    out.insert(2, ("paste, a real log matched", pasted))
    out.insert(3, ("search with results", searched))
    return out


def report(found: dict) -> str:
    lines = []
    for where, violations in found.items():
        for v in violations:
            lines.append(f"{where}: [{v['impact']}] {v['id']}: {v['help']} ({len(v['nodes'])} elements)")
            lines += [f"      {n['target']}  {n['summary'][:220]}" for n in v["nodes"][:6]]
            if len(v["nodes"]) > 6:
                lines.append(f"      ... and {len(v['nodes']) - 6} more")
    return "\n".join(lines)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_axe_finds_no_serious_violation(axe_source, browser, real_site, size, scheme):
    viewport(browser, *size)
    try:
        loaded(browser, real_site, "/")
        set_scheme(browser, scheme)
        found, counts = {}, {}
        for name, go in states(browser, real_site):
            go()
            assert browser.execute_script("return document.body.getAttribute('data-md-color-scheme')") == scheme
            violations = axe(browser, axe_source)
            counts[name] = sum(len(v["nodes"]) for v in violations if v["impact"] in FAILING)
            if violations:
                found[f"{name} ({size[0]}x{size[1]}, {scheme})"] = violations
        print(f"\naxe at {size[0]}x{size[1]}, {scheme}: serious or critical elements per page: {counts}")
        print(report(found))
        serious = {k: [v for v in vs if v["impact"] in FAILING] for k, vs in found.items()}
        assert not any(serious.values()), "\n" + report({k: v for k, v in serious.items() if v})
    finally:
        set_scheme(browser, "default")
        viewport(browser, 1400, 1000)


# --- site search: entry results name the entry and its class (issue 27 item 13) ------------------------------

def test_search_results_show_the_entry_id_and_class(browser, real_site, real_entries):
    viewport(browser, 1400, 1000)
    loaded(browser, real_site, "/")
    by_id = {e.id: e for e in real_entries}
    for eid in (ENTRY, "RMN-0001", next(e.id for e in real_entries if e.klass == "performance")):
        e = by_id[eid]
        search(browser, phrases.primary_identifier(e.data))
        heads = browser.execute_script(
            "return [...document.querySelectorAll('.md-search-result__item > .md-search-result__link')]"
            ".map((a) => [a.getAttribute('href'), (a.querySelector('h1, h2') || {}).innerText || ''])")
        head = next((h for href, h in heads if re.search(rf"/entries/{eid}/(\?|$)", href)), None)
        assert head is not None, (eid, heads[:5])
        assert head.startswith(f"{eid} · {phrases.CLASSES[e.klass][0]}"), head
        assert e.data["title"][:20] in head.replace("\n", " "), head    # the title is still there


# --- phones: entry pages at 390 x 844 (issue 27 item 11) -----------------------------------------------------

PHONE_JS = r"""
const h1 = document.querySelector('h1'), box = document.querySelector('.eb-fix');
const lh = parseFloat(getComputedStyle(h1).lineHeight), hr = h1.getBoundingClientRect();
const br = box.getBoundingClientRect();
const under = document.querySelector('.eb-title-under');
const out = {lines: Math.round(hr.height / lh), h1Left: hr.left, boxLeft: br.left, boxRight: br.right, vw: innerWidth,
             sw: document.documentElement.scrollWidth, h1: h1.innerText.replace(/¶\s*$/, ''),
             under: under && getComputedStyle(under).display !== 'none' ? under.innerText : null, codes: []};
for (const code of box.querySelectorAll('pre > code')) {
  const cr = code.getBoundingClientRect(), cs = getComputedStyle(code);
  code.scrollLeft = 1e6;
  const c = {right: cr.right, wide: code.scrollWidth > code.clientWidth + 1, overflowX: cs.overflowX,
             reached: Math.abs(code.scrollLeft + code.clientWidth - code.scrollWidth) <= 1, covered: []};
  code.scrollLeft = 0;
  const btns = [...code.parentElement.querySelectorAll('.md-code__button')].filter((b) => {
    const s = getComputedStyle(b), r = b.getBoundingClientRect();
    return s.display !== 'none' && s.visibility !== 'hidden' && r.width > 0; });
  const range = document.createRange(); range.selectNodeContents(code);
  const text = [...range.getClientRects()].filter((r) => r.width > 0 && r.bottom <= cr.bottom && r.top >= cr.top)
    .map((r) => ({left: Math.max(r.left, cr.left), right: Math.min(r.right, cr.right), top: r.top, bottom: r.bottom}));
  for (const b of btns) {
    const r = b.getBoundingClientRect();
    for (const t of text) if (t.left < r.right && t.right > r.left && t.top < r.bottom && t.bottom > r.top)
      c.covered.push([Math.round(t.left), Math.round(t.top)]);
  }
  out.codes.push(c);
}
return out;
"""


def test_entry_pages_on_a_phone(browser, real_site, real_entries):
    """Every entry page at 390 x 844: the heading takes at most two lines (title_short, with the full title under
    it, where the title is longer); the fix box's code stays inside the box and scrolls sideways to its end; the
    copy button covers no code text; the content uses the screen's width (no empty column beside it)."""
    bad, longest = [], (0, None)
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/search/search_index.json*"]})
    viewport(browser, 390, 844)
    try:
        for e in real_entries:
            browser.get(f"{real_site}/entries/{e.id}/")
            m = browser.execute_script(PHONE_JS)
            longest = max(longest, (m["lines"], e.id))
            problems = []
            if m["lines"] > 2:
                problems.append(f"heading of {m['lines']} lines")
            short = e.data.get("title_short")
            # paired backticks in the full title render as code, a lone one (gcc's `x' quotes) stays: compare the
            # text with backticks removed on both sides
            if short and (m["h1"].strip() != short or not m["under"]
                          or m["under"].strip().replace("`", "") != e.data["title"].replace("`", "")):
                problems.append(f"short title shown wrong: {m['h1']!r} / {m['under']!r}")
            if m["h1Left"] > 24 or m["boxLeft"] > 24 or m["vw"] - m["boxRight"] > 24 or m["sw"] > m["vw"]:
                problems.append(f"content not across the screen: {m}")
            for c in m["codes"]:
                if c["right"] > m["boxRight"] + 0.5:
                    problems.append(f"code cut at the box's edge: {c}")
                if c["wide"] and (c["overflowX"] not in ("auto", "scroll") or not c["reached"]):
                    problems.append(f"wide code does not scroll to its end: {c}")
                if c["covered"]:
                    problems.append(f"copy button covers code text at {c['covered'][:3]}")
            if problems:
                bad.append((e.id, problems))
    finally:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        browser.get("about:blank")
        viewport(browser, 1400, 1000)
    print(f"{len(real_entries)} entry pages at 390x844; most heading lines: {longest}")
    assert not bad, bad


def test_desktop_keeps_the_full_title_as_the_heading(browser, real_site, real_entries):
    e = next(x for x in real_entries if x.data.get("title_short"))
    viewport(browser, 1400, 1000)
    loaded(browser, real_site, f"/entries/{e.id}/")
    h1, under = browser.execute_script(
        "const u = document.querySelector('.eb-title-under');"
        "return [document.querySelector('h1').innerText.replace(/¶\\s*$/, ''), getComputedStyle(u).display];")
    assert h1.strip() == e.data["title"] and under == "none"


def test_short_titles_stay_out_of_the_search_index(real_site, real_entries):
    """The search index has each entry's full title (as the page's heading renders it) as its page title, and
    neither the short title nor the copy of the full title under it: an entry ranks as it did without one."""
    import html
    import json
    from urllib.request import urlopen

    def text(h: str) -> str:
        return html.unescape(re.sub(r"<[^>]+>", "", h)).replace("\u200b", "").strip()

    with urlopen(f"{real_site}/search/search_index.json") as r:
        docs = {d["location"]: d for d in json.load(r)["docs"]}
    with_short = [e for e in real_entries if e.data.get("title_short")]
    assert with_short
    for e in with_short:
        with urlopen(f"{real_site}/entries/{e.id}/") as r:
            full = text(re.search(r'<span class="eb-title-full">(.*?)</span>', r.read().decode(), re.S).group(1))
        d = docs[f"entries/{e.id}/"]
        assert text(d["title"]) == full, e.id                                 # no short title added to it
        assert not text(d["text"]).startswith(full), e.id                     # nor the copy under the heading
