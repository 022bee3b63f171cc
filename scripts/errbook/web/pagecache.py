"""`errbook serve` rebuilds the whole site on every save; most entry pages have not changed. Their Markdown
conversion is the largest part of a rebuild (about 40 % of it, profiled), so in serve mode the HTML that MkDocs
made from an entry page's Markdown is kept, keyed by that Markdown and by the site's list of files (relative links
are resolved against it), and reused while both are the same: the page is then rendered from an empty
document and its HTML, table of contents and anchors are put back. The publication build never uses it.

An entry page's Markdown holds markers of its raw blocks (escape.RawBlocks) with a nonce drawn per build: the key
reads them without the nonce, and the kept HTML gets the new build's nonce, so the blocks are filled as usual."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass
class _Kept:
    key: str
    html: str
    tag: str            # the raw-block nonce of the build that made it
    toc: object
    anchors: frozenset


class PageCache:
    def __init__(self) -> None:
        self._kept: dict[str, _Kept] = {}          # page src_uri -> its last rendering
        self._hits: dict[str, _Kept] = {}
        self._misses: dict[str, str] = {}
        self.files_key = ""
        self.reused = self.rendered = 0

    def begin(self, src_uris) -> None:
        """A new build, with this list of files."""
        self.files_key = hashlib.sha256("\n".join(sorted(src_uris)).encode("utf-8", "surrogatepass")).hexdigest()
        self._hits.clear()
        self._misses.clear()
        self.reused = self.rendered = 0

    def _key(self, markdown: str, tag: str) -> str:
        norm = markdown.replace(tag, "ERRBOOKRAW") if tag else markdown
        return hashlib.sha256(f"{self.files_key}\0{norm}".encode("utf-8", "surrogatepass")).hexdigest()

    def before_render(self, uri: str, markdown: str, tag: str) -> str:
        """The Markdown MkDocs should render: "" when the kept HTML of the same Markdown will be used."""
        key = self._key(markdown, tag)
        kept = self._kept.get(uri)
        if kept is not None and kept.key == key:
            self._hits[uri] = kept
            return ""
        self._misses[uri] = key
        return markdown

    def after_render(self, page, html: str, tag: str) -> str:
        """The page's HTML (before its raw blocks are filled): the kept one on a hit, which also restores the table
        of contents and anchors; else the one just made, which is kept."""
        uri = page.file.src_uri
        kept = self._hits.pop(uri, None)
        if kept is not None:
            page.toc = kept.toc
            page.present_anchor_ids = set(kept.anchors)
            self.reused += 1
            return kept.html.replace(kept.tag, tag) if kept.tag and tag else kept.html
        key = self._misses.pop(uri, None)
        if key is not None:
            self._kept[uri] = _Kept(key, html, tag, page.toc, frozenset(page.present_anchor_ids or ()))
            self.rendered += 1
        return html
