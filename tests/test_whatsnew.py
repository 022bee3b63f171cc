"""The What's new page and Atom feed: the pure functions on fixture entries, and a real site build."""
import xml.etree.ElementTree as ET
from urllib.parse import urlsplit

from errbook.web import addresses, whatsnew

A = "{http://www.w3.org/2005/Atom}"


class FakeEntry:
    def __init__(self, eid, **data):
        self.id = eid
        self.data = dict(id=eid, **data)

    def get(self, key, default=None):
        return self.data.get(key, default)


def entry(eid, published, modified=None, reviewed=None, title="Title"):
    return FakeEntry(eid, title=title, published=published, modified=modified or published,
                     reviewed=reviewed or published[:10])


def rec(eid, date, current=True, outcome="passed", label="CPU (no GPU)"):
    return {"entry": eid, "date": date, "current": current, "outcome": outcome, "platform_label": label,
            "fingerprint": {"platform": "cpu"}}


def kinds(news, eid):
    return sorted(i.kind for i in news if i.eid == eid)


def test_new_changed_reviewed_from_the_entry_dates():
    news = whatsnew.items([
        entry("RMN-0001", "2026-11-30T00:00:00Z", modified="2026-12-03T10:00:00Z", reviewed="2026-12-02"),
        entry("RMN-0002", "2026-12-01T08:00:00Z", modified="2026-12-01T09:00:00Z"),   # same-day edit: New only
    ], [])
    assert kinds(news, "RMN-0001") == ["changed", "new", "reviewed"]
    assert kinds(news, "RMN-0002") == ["new"]
    changed = next(i for i in news if i.kind == "changed")
    assert changed.date == "2026-12-03T10:00:00Z" and "2026-12-03" in changed.detail
    assert [i.date for i in news] == sorted((i.date for i in news), reverse=True)


def test_verified_only_at_the_current_digest_one_item_per_entry_and_day():
    es = [entry("RMN-0001", "2026-11-30T00:00:00Z")]
    news = whatsnew.items(es, [
        rec("RMN-0001", "2026-12-04T01:00:00Z", outcome="failed"),
        rec("RMN-0001", "2026-12-04T05:00:00Z"),                                   # same platform, later: wins
        rec("RMN-0001", "2026-12-04T06:00:00Z", label="CUDA · NVIDIA H200"),
        rec("RMN-0001", "2026-12-05T00:00:00Z", current=False),                    # an earlier version's run
        rec("RMN-0009", "2026-12-05T00:00:00Z"),                                   # not a published entry
    ])
    ver = [i for i in news if i.kind == "verified"]
    assert len(ver) == 1 and ver[0].eid == "RMN-0001" and ver[0].date == "2026-12-04T06:00:00Z"
    assert "CPU (no GPU): passed" in ver[0].detail and "CUDA · NVIDIA H200: passed" in ver[0].detail
    assert "failed" not in ver[0].detail


def test_page_links_entries_and_the_feed_and_escapes_titles():
    news = whatsnew.items([entry("RMN-0003", "2026-12-01T00:00:00Z", title="Bad <script>alert(1)</script>")], [])
    md = whatsnew.page(news)
    assert "(entries/RMN-0003.md)" in md and "(feed.xml)" in md and "## 2026-12-01" in md
    assert "<script>" not in md
    assert ": Why? Published" in whatsnew.page(whatsnew.items([entry("RMN-0004", "2026-12-01T00:00:00Z",
                                                                      title="Why?")], []))
    assert "Nothing published yet" in whatsnew.page([])


def test_atom_has_the_required_elements_and_keeps_the_newest():
    es = [entry(f"RMN-{n:04d}", f"2026-11-{1 + n % 28:02d}T00:00:00Z", title=f"T{n} <&>\x01")
          for n in range(1, 80)]
    news = whatsnew.items(es, [])
    feed = ET.fromstring(whatsnew.atom(news, lambda src: "https://ex.org/kb/" + src))
    assert feed.tag == A + "feed"
    for tag in ("id", "title", "updated", "author"):
        assert feed.find(A + tag) is not None, tag
    assert feed.find(A + "updated").text == news[0].date
    got = feed.findall(A + "entry")
    assert len(got) == whatsnew.FEED_ITEMS
    assert [e.find(A + "updated").text for e in got] == [i.date for i in news[:whatsnew.FEED_ITEMS]]
    for e in got:
        for tag in ("id", "title", "updated", "summary"):
            assert (e.find(A + tag).text or "").strip(), tag
        assert e.find(A + "link").get("href").startswith("https://ex.org/kb/entries/RMN-")
    assert len({e.find(A + "id").text for e in got}) == len(got)
    assert "<&>" in got[0].find(A + "title").text             # escaped in the XML, text again once parsed


def test_absolute_urls_keep_the_site_url_path():
    assert addresses.absolute("https://ex.org/kb/", "entries/RMN-0001/") == "https://ex.org/kb/entries/RMN-0001/"
    assert addresses.absolute("https://ex.org/kb", "/feed.xml") == "https://ex.org/kb/feed.xml"
    assert addresses.absolute(None, "feed.xml") == "/feed.xml"


def test_built_site_has_the_page_and_a_feed_linking_existing_pages(built):
    root, out, r = built
    assert r.returncode == 0, r.stderr
    html = (out / "whats-new" / "index.html").read_text(encoding="utf-8")
    assert 'href="../entries/RMN-0001/"' in html and 'href="../feed.xml"' in html
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'type="application/atom+xml"' in index and 'href="feed.xml"' in index
    feed = ET.fromstring((out / "feed.xml").read_text(encoding="utf-8"))
    entries = feed.findall(A + "entry")
    titles = [e.find(A + "title").text for e in entries]
    assert any(t.startswith("New: RMN-0001") for t in titles) and any(t.startswith("New: RMN-0002") for t in titles)
    assert any(t.startswith("Verified: RMN-0001") for t in titles)     # the fixture ledger's current record
    for e in entries:
        path = urlsplit(e.find(A + "link").get("href")).path.strip("/")
        assert (out / path / "index.html").is_file(), path
