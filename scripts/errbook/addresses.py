"""The site's address map: where every generated or linked page lives, as a source path under docs/.

One table, read by the site plugin (which pages it writes), the page generator (links between pages) and the
paste page (result-card and next-step links, shipped in the bundle as site-root URLs). Spelling an address
anywhere else is how the paste page's links once resolved against the paste page itself and 404ed.
"""
from __future__ import annotations

from collections.abc import Callable

ASSETS_DIR = "assets/errbook"          # where the plugin writes paste.js, engine.js and the bundle
FIX_ANCHOR = "fix"                     # the id of the full fix section on an entry page

# name -> source path under docs/ ("{id}" / "{klass}" are filled in per page)
PAGES = {
    "entry": "entries/{id}.md",
    "class": "classes/{klass}.md",
    "overview": "overview.md",
    "contributing": "contributing.md",
    "triage": "triage.md",
    "matrix": "verification/index.md",
}


def entry_src(eid: str) -> str:
    return PAGES["entry"].format(id=eid)


def class_src(klass: str) -> str:
    return PAGES["class"].format(klass=klass)


def site_urls(to_url: Callable[[str], str]) -> dict:
    """Every address as a URL relative to the site root, for the paste page. `to_url` turns a source path into
    its page URL (MkDocs' own rule, so use_directory_urls is honoured); templates keep their "{id}"/"{klass}"."""
    out = {name: to_url(src.format(id="ERRBOOK-ID", klass="ERRBOOK-KLASS"))
           .replace("ERRBOOK-ID", "{id}").replace("ERRBOOK-KLASS", "{klass}") for name, src in PAGES.items()}
    out["fix"] = out["entry"] + "#" + FIX_ANCHOR
    # from the assets folder back to the site root: the page resolves every address against this
    out["root"] = "../" * (ASSETS_DIR.count("/") + 1)
    return out
