"""The site's address map: where every generated or linked page lives, as a source path under docs/.

One module, read by the site plugin (which pages it writes), the page generators (links between pages) and the
paste page (result-card and next-step links, shipped in the bundle as site-root URLs). Spelling an address
anywhere else is how the paste page's links once resolved against the paste page itself and 404ed.
PAGES is what the paste page needs (it is shipped as it is); GENERATED and DOCS are the other pages the plugin
writes and the hand-written pages generated pages link to.
"""
from __future__ import annotations

from collections.abc import Callable

ASSETS_DIR = "assets/errbook"          # where the plugin writes paste.js, engine.js and the bundle
FIX_ANCHOR = "fix"                     # the id of the full fix section on an entry page

# name -> source path under docs/ ("{id}" / "{klass}" are filled in per page)
PAGES = {
    "entry": "entries/{id}.md",
    "message": "messages/{id}.md",           # a message page (errata/messages/<id>.yaml): its causes, each an entry
    "class": "classes/{klass}.md",
    "overview": "overview.md",
    "contributing": "contributing.md",
    "triage": "triage.md",
    "matrix": "verification/index.md",
}
# the other pages the plugin generates
GENERATED = {
    "corrections": "corrections.md",
    "machine_checks": "machine-checks.md",
    "schema": "schema/index.md",
    "schema_json": "schema/entry-1.schema.json",
    "whats_new": "whats-new.md",
    "feed": "feed.xml",
}
# hand-written pages that generated pages link to
DOCS = {
    "doctor": "doctor.md",
    "amd_hosts": "amd-hosts.md",
}
RUNS_DIR = "verification/runs"         # executed runbooks, below docs/ (paths.executed_dir)
SEARCH_WORKER = "assets/javascripts/workers/errbook-search.js"   # beside Material's search worker


def entry_src(eid: str) -> str:
    return PAGES["entry"].format(id=eid)


def message_src(mid: str) -> str:
    return PAGES["message"].format(id=mid)


def class_src(klass: str) -> str:
    return PAGES["class"].format(klass=klass)


def run_page_src(notebook: str) -> str:
    """docs/verification/runs/X.ipynb -> verification/runs/X.md (the executed-run page)."""
    stem = notebook.rsplit("/", 1)[-1]
    stem = stem[:-len(".ipynb")] if stem.endswith(".ipynb") else stem
    return f"{RUNS_DIR}/{stem}.md"


def absolute(site_url: str | None, url: str) -> str:
    """A site-root-relative page URL (MkDocs' File.url) as an absolute one under site_url, for the feed."""
    base = site_url or "/"
    return base.rstrip("/") + "/" + url.lstrip("/")


def site_urls(to_url: Callable[[str], str]) -> dict:
    """Every address as a URL relative to the site root, for the paste page. `to_url` turns a source path into
    its page URL (MkDocs' own rule, so use_directory_urls is honoured); templates keep their "{id}"/"{klass}"."""
    out = {name: to_url(src.format(id="ERRBOOK-ID", klass="ERRBOOK-KLASS"))
           .replace("ERRBOOK-ID", "{id}").replace("ERRBOOK-KLASS", "{klass}") for name, src in PAGES.items()}
    out["fix"] = out["entry"] + "#" + FIX_ANCHOR
    # from the assets folder back to the site root: the page resolves every address against this
    out["root"] = "../" * (ASSETS_DIR.count("/") + 1)
    return out
