"""MkDocs adapter: turns entries, the ledger and executed runbooks into pages during `mkdocs build`/`serve`
(no separate pre-step). Page layout lives in the page modules (entrypage, runpage, indexpages) and addresses in
addresses.py; this file only moves data in and files out."""
from __future__ import annotations

import glob
import json
import logging
import os
import re
import stat
import sys
from pathlib import Path, PurePath
from typing import cast
from urllib.parse import urlsplit

from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, get_plugin_logger
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

from errbook.common import paths, ports
from errbook.kb import drafts, stale, usable, verified
from errbook.kb import entries as entries_mod
from errbook.kb import messages as kb_messages
from errbook.machine import facts
from errbook.runbooks import ledger
from errbook.web import addresses, entrypage, indexpages, livepreview, pagecache, phrases, refs, runpage, whatsnew
from errbook.web import bundle as bundle_mod
from errbook.web import messagepage as message_mod
from errbook.web.escape import RawBlocks

log = get_plugin_logger(__name__)

ASSETS = ("engine.js", "finder.js", "paste.js", "triage-worker.js", "tables.js", "a11y.js", "errbook.css",
          "search-query.js", "lang.js")
HEAD_SCRIPT = f"{addresses.ASSETS_DIR}/search-query.js"   # must run before Material's bundle starts its search worker
MAX_PUBLISHED_NOTEBOOK = 5 << 20      # bytes; larger executed notebooks get a page but no download
ENTRY_PAGES = addresses.entry_src("RMN-0000").rsplit("/", 1)[0] + "/"     # the folder of the generated entry pages


def finding(msg: str) -> None:
    """A build finding that does not abort the build: printed outside MkDocs' logger, so strict mode (on in
    mkdocs.yml) keeps building. Used where the offending file is left out of the site, so nothing unsafe is
    published and one stray file cannot take the whole site down."""
    print(f"WARNING -  errbook: {msg}", file=sys.stderr)



# Words readers type that jieba (which Material's search runs over Chinese text at build time) cuts apart:
# 找不到设备 became 找/不到/设备 and 编译很慢 编译/很/慢, so a query "编译 很慢" matched every page with 很
# (很多, 很快).
# Kept whole, each is one rare index word that the query finds as typed. Added before the search plugin indexes.
ZH_WORDS = ("很慢", "找不到", "用不了", "不支持", "识别不到", "检测不到", "跑不起来")


def _add_zh_words() -> None:
    try:
        import jieba
    except ImportError:          # Material indexes Chinese without segmentation then; nothing to add
        return
    jieba.setLogLevel(logging.WARNING)   # its start-up lines ("Building prefix dict ...") on every build said nothing
    for w in ZH_WORDS:
        jieba.add_word(w)

class ErrbookConfig(Config):
    root = c.Optional(c.Type(str))   # checkout root; default: the folder of mkdocs.yml
    branch = c.Type(str, default="main")


class ErrbookPlugin(BasePlugin[ErrbookConfig]):
    # on_startup makes MkDocs keep this object across the rebuilds of one `mkdocs serve`: it knows the mode, and
    # its page cache (serve mode only) keeps entry pages' HTML from one save to the next.
    serving = False
    page_cache: pagecache.PageCache | None = None

    def on_startup(self, *, command, dirty):
        self.serving = command == "serve"
        self.page_cache = pagecache.PageCache() if self.serving else None

    def on_config(self, config):
        _add_zh_words()
        self.root = Path(self.config.root or Path(config.config_file_path).parent).resolve()
        self._anchor_jupyter(config)
        self.links = refs.Links(repo_url=config.repo_url or "", branch=self.config.branch)
        if not config.repo_url:
            # no repository named (ERRBOOK_REPO_URL unset): no edit buttons, rather than edit_uri as a relative link
            config.edit_uri = None
            config.edit_uri_template = None
        if self.serving:
            # A preview: one unfinished or broken entry is shown as such on its page, never a failed build (a failed
            # rebuild leaves every request of `mkdocs serve` waiting until the file is fixed). `errbook build` and
            # CI stay strict.
            config.strict = False
        loaded, self.broken = self._load(entries_mod.load_all(self.root))
        self.drafts = {e.id: r for e in loaded if (r := drafts.draft_reason(e.data))}
        if self.drafts and not self.serving:
            print(f"INFO    -  errbook: {len(self.drafts)} draft(s) left out of the site: "
                  f"{', '.join(sorted(self.drafts))}", file=sys.stderr)
        shown = [e for e in loaded if self.serving or e.id not in self.drafts]
        self.entries = [e for e in shown if not e.withdrawn]
        self.withdrawn = [e for e in shown if e.withdrawn]
        self.by_id = {e.id: e for e in shown}
        records, self.ledger_problems = ledger.read(ledger.default_path(self.root))
        # A record counts as verifying an entry only at the entry's current content digest (verified.py); the
        # mark is set here for every record, so a ledger line cannot claim it.
        self.records = verified.mark_current(records, {e.id: verified.digest(e, self.root) for e in shown})
        for p in self.ledger_problems:
            log.info(f"ledger: {p}")
        self.latest = ledger.latest_by_entry_platform(self.records)
        published = [e for e in self.entries if e.id not in self.drafts]
        # message pages whose causes are all published (errbook validate names what is wrong with the others)
        self.messages = [m.data for m in kb_messages.usable_pages(self.root, {e.id for e in published})]
        try:
            # Both stages, environment evidence and machine checks: the page answers as errbook triage does.
            self.bundle = bundle_mod.build(self.root, published)
        except Exception as ex:  # a bad pattern: validate names it precisely
            raise PluginError(f"signature does not compile (run `errbook validate`): {ex}") from None
        return config

    def _load(self, result) -> tuple[list, dict[str, list[str]]]:
        """The entries to build from, and the broken ones (serve mode: file -> its problems, each file:line: field).
        Outside serve mode an entry that is neither a draft nor loadable aborts the build, as before."""
        loaded, errors = result
        broken: dict[str, list[str]] = {}
        for e in errors:
            if e.kind == "unreadable":
                # Skipped with a warning, not an abort: printed outside MkDocs' logger so that strict mode (on in
                # mkdocs.yml) does not turn it into a failed build; `errbook validate` reports it as a finding.
                finding(f"skipping entry file {e} (errbook validate reports it)")
            else:
                broken.setdefault(e.rel, []).append(str(e))
        for entry in loaded:
            if not drafts.is_draft(entry.data):       # a draft's placeholders are not errors: it says it is one
                for f in usable.schema_findings(entry):
                    broken.setdefault(entry.rel, []).append(str(f))
        for f in usable.duplicate_id_findings(loaded):
            broken.setdefault(f.file, []).append(str(f))
        if broken and not self.serving:
            problems = [p for ps in broken.values() for p in ps]
            raise PluginError("invalid entries (run `errbook validate`):\n  " + "\n  ".join(problems[:50]))
        for ps in broken.values():
            for p in ps:
                finding(f"{p} (the entry's page shows the error until it is fixed)")
        return [e for e in loaded if e.rel not in broken], broken

    @staticmethod
    def _anchor_jupyter(config) -> None:
        """mkdocs-jupyter tests `include` with PurePath(abs_src_path).match(pattern): a relative pattern matches
        from the right, so "notebooks/*.ipynb" also took docs/verification/runs/notebooks/X.ipynb and rendered it
        with live scripts. A pattern that is absolute must match the whole path: anchor each at docs_dir."""
        jupyter = config.plugins.get("mkdocs-jupyter")
        if jupyter is None:
            return
        docs = glob.escape(os.path.normpath(config.docs_dir))      # a [ or * in the checkout path is literal
        jupyter.config["include"] = [p if PurePath(p).is_absolute() else os.path.join(docs, p)
                                     for p in jupyter.config["include"]]

    def _rel(self, f: File) -> str:
        return os.path.relpath(cast(str, f.abs_src_path), self.root)

    def _vet_docs(self, files, config) -> None:
        """Leave out of the site, with a finding, every file of docs/ that is not a regular file inside docs/
        (a symlink can point anywhere: outside the checkout, or at .git/config, which may hold a CI token), and
        everything in docs/verification/runs/ but the executed notebooks directly in it. Those are errbook's
        output and published escaped; anything in a subfolder would reach mkdocs-jupyter or MkDocs unescaped, and
        its run page would take the address of a real run (pages are named by the notebook's stem)."""
        docs = os.path.realpath(config.docs_dir)
        for f in list(files):
            if f.src_dir != config.docs_dir or not f.abs_src_path or not f.inclusion.is_in_serve():
                continue                   # theme files, generated files, dotfiles (excluded: never published)
            real = os.path.realpath(f.abs_src_path)
            why = ""
            if os.path.commonpath([real, docs]) != docs:
                why = f"it leads outside docs/ (to {real})"
            else:
                try:
                    if not stat.S_ISREG(os.stat(real).st_mode):
                        why = "it is not a regular file"
                except OSError as ex:
                    why = f"it cannot be read ({ex.strerror})"
            if not why and f.src_uri.startswith(addresses.RUNS_DIR + "/"):
                name = f.src_uri[len(addresses.RUNS_DIR) + 1:]
                if "/" in name:
                    why = f"{addresses.RUNS_DIR}/ publishes only the notebooks directly in it, not subfolders"
                elif not name.endswith(".ipynb"):
                    why = f"{addresses.RUNS_DIR}/ holds executed notebooks (.ipynb) only"
            if why:
                finding(f"not publishing {self._rel(f)}: {why}")
                files.remove(f)

    def _add(self, files, config, uri: str, content: str | bytes, edit_uri: str | None = None) -> None:
        existing = files.get_file_from_path(uri)
        if existing is not None:
            if existing.src_dir == config.docs_dir and existing.abs_src_path:
                # The generated page wins: entries live in errata/, and a hand-written page must not replace one.
                finding(f"{self._rel(existing)} is replaced by the page errbook generates from errata/ and the "
                        "ledger; move its text to the entry's YAML or rename the file")
            files.remove(existing)
        f = File.generated(config, uri, content=content)
        if edit_uri:
            f.edit_uri = edit_uri        # relative to mkdocs.yml's edit_uri (which points into docs/)
        files.append(f)

    def _run_pages(self, files, config) -> frozenset:
        """One page per executed runbook in docs/verification/runs/; the .ipynb itself stays downloadable
        unless it is too large to publish."""
        by_nb = {}
        for r in self.records:
            if isinstance(r, dict) and isinstance(r.get("notebook"), str):
                by_nb[r["notebook"]] = r              # later lines win
        published = set()
        for f in [f for f in files if f.src_uri.startswith(addresses.RUNS_DIR + "/") and f.src_uri.endswith(".ipynb")
                  and f.inclusion.is_in_serve()]:            # not a runner's .RMN-*.tmp.ipynb (a dotfile)
            rel = "docs/" + f.src_uri
            name = f.src_uri.rsplit("/", 1)[-1][:-len(".ipynb")]
            nb, problem = None, ""
            size = Path(f.abs_src_path).stat().st_size if f.abs_src_path else 0
            if size > 4 * MAX_PUBLISHED_NOTEBOOK:
                problem = f"The notebook is {size / 2**20:.0f} MiB; it is neither shown nor published."
            else:
                try:
                    nb = json.loads(Path(f.abs_src_path).read_text(encoding="utf-8", errors="replace"))
                    if not isinstance(nb, dict):
                        nb, problem = None, "The file is not a notebook."
                except (OSError, ValueError) as ex:
                    problem = f"The notebook could not be read: {ex}"
            keep = size <= MAX_PUBLISHED_NOTEBOOK and nb is not None
            if not keep:
                files.remove(f)
            rec = by_nb.get(rel)
            entry = self.by_id.get(str((rec or {}).get("entry") or name.split("--")[0]))
            uri = addresses.run_page_src(rel)
            self.raw[uri] = raw = RawBlocks()
            self._add(files, config, uri,
                      runpage.run_page(name, nb, rec, entry, problem, f"{name}.ipynb" if keep else None, raw))
            published.add(rel)
        return frozenset(published)

    def on_files(self, files, config):
        self.raw: dict[str, RawBlocks] = {}        # page -> its pre-rendered blocks (see on_page_content)
        self._vet_docs(files, config)
        notebooks = self._run_pages(files, config)
        for e in self.entries + self.withdrawn:
            self._entry_page(files, config, e, notebooks)
        for m in self.messages:
            uri = addresses.message_src(m["id"])
            self.raw[uri] = raw = RawBlocks()
            self._add(files, config, uri, message_mod.message_page(m, self.by_id, raw),
                      edit_uri=f"../errata/messages/{m['id']}.yaml")
        for rel, problems in self.broken.items():       # serve mode only: the build aborted on them otherwise
            eid = Path(rel).stem
            if re.fullmatch(r"RMN-[0-9]{4}", eid):
                self._add(files, config, addresses.entry_src(eid), entrypage.error_page(eid, rel, problems),
                          edit_uri="../" + rel)
        published = [e for e in self.entries if e.id not in self.drafts]     # index pages list finished entries
        try:                                                   # the ROCm filter's choices are its releases
            releases = stale.load_releases(self.root)
        except (ValueError, OSError) as ex:                    # errbook validate names the problem
            finding(f"the ROCm filter offers no releases: {ex}")
            releases = {}
        for k in phrases.CLASSES:
            self._add(files, config, addresses.class_src(k),
                      indexpages.class_page(k, [e for e in published if e.klass == k], self.latest, releases))
        self._add(files, config, addresses.PAGES["overview"],
                  indexpages.overview_page(published, self.latest, releases))
        self._add(files, config, addresses.GENERATED["corrections"], indexpages.corrections_page(published))
        self._add(files, config, addresses.GENERATED["machine_checks"],
                  indexpages.machine_checks_page(published, facts.VOCAB))
        self._add(files, config, addresses.PAGES["matrix"],
                  indexpages.matrix_page(published, self.records, self.ledger_problems, notebooks))
        news = whatsnew.items(published, self.records)
        self._add(files, config, addresses.GENERATED["whats_new"], whatsnew.page(news))
        self._add(files, config, addresses.GENERATED["feed"], whatsnew.atom(
            news, lambda src: addresses.absolute(config.site_url, File(src, "", "", config.use_directory_urls).url)))
        schema = json.loads(paths.SCHEMA_PATH.read_text(encoding="utf-8"))
        self._add(files, config, addresses.GENERATED["schema"], indexpages.schema_page(schema))
        self._add(files, config, addresses.GENERATED["schema_json"], json.dumps(schema, indent=2, ensure_ascii=False))
        # Card and next-step links: site-root URLs from the address map, made with MkDocs' own src -> URL rule.
        site = addresses.site_urls(lambda src: File(src, config.docs_dir, config.site_dir,
                                                    config.use_directory_urls).url)
        bundle = dict(self.bundle, entries={e.id: phrases.paste_meta(e) for e in published}, site=site)
        # A script, not JSON fetched at run time: the paste page then makes no request for it. It sets the
        # bundle on the global object, so the page and the matching Web Worker (importScripts) both read it.
        self._add(files, config, f"{addresses.ASSETS_DIR}/signatures.js",
                  "(typeof self !== 'undefined' ? self : globalThis).ERRBOOK_BUNDLE = "
                  + json.dumps(bundle, ensure_ascii=False).replace("</", "<\\/") + ";\n")
        for name in ASSETS:
            self._add(files, config, f"{addresses.ASSETS_DIR}/{name}",
                      (paths.ASSETS_DIR / name).read_text(encoding="utf-8"))
        # Beside Material's search worker (same folder, so the worker's own relative paths still hold), after the
        # class of each entry (at its end), which the results show beside the entry's id.
        classes = {e.id: phrases.CLASSES[e.klass][0] for e in published if e.klass in phrases.CLASSES}
        self._add(files, config, addresses.SEARCH_WORKER,
                  (paths.ASSETS_DIR / "errbook-search.js").read_text(encoding="utf-8")
                  + f"self.ERRBOOK_SEARCH_ENTRIES = {json.dumps(classes, ensure_ascii=False)};\n")
        if self.page_cache is not None:
            self.page_cache.begin(f.src_uri for f in files)
        return files

    def _entry_page(self, files, config, e, notebooks: frozenset) -> None:
        uri = addresses.entry_src(e.id)
        self.raw[uri] = raw = RawBlocks()
        draft = self.drafts.get(e.id)
        try:
            md = entrypage.entry_page(e, self.by_id, self.latest.get(e.id, {}), notebooks, self.links, raw, draft,
                                      note=message_mod.backlinks(e.id, self.messages))
        except Exception as ex:     # a draft's unfinished fields, or any entry in serve mode: its page says why
            if not (draft or self.serving):
                raise
            finding(f"{e.rel}: cannot be shown yet: {type(ex).__name__}: {ex}")
            md = entrypage.error_page(e.id, e.rel, [f"{e.rel}: {type(ex).__name__}: {ex}"])
        self._add(files, config, uri, md, edit_uri="../" + e.rel)
        if draft and self.serving:
            print(f"INFO    -  errbook: {e.rel} is a draft ({draft}): previewed with a Draft banner at "
                  f"/{addresses.entry_src(e.id)[:-3]}/", file=sys.stderr)

    def on_page_markdown(self, markdown, page, config, files):
        page_dir = str(Path(page.file.src_uri).parent).replace(".", "") if page.file.src_uri else ""
        out, unknown = refs.expand_refs(markdown, self.by_id, page_dir, self.links)
        if unknown:
            msg = f"{page.file.src_uri}: unknown entry id(s) {sorted(set(unknown))}"
            if not self.serving:
                raise PluginError(msg)
            finding(msg)
        raw = self.raw.get(page.file.src_uri)
        if self.page_cache is not None and raw is not None and page.file.src_uri.startswith(ENTRY_PAGES):
            out = self.page_cache.before_render(page.file.src_uri, out, raw.tag)
        return out

    def on_page_content(self, html, page, config, files):
        raw = self.raw.get(page.file.src_uri)
        if self.page_cache is not None and raw is not None and page.file.src_uri.startswith(ENTRY_PAGES):
            html = self.page_cache.after_render(page, html, raw.tag)
        return raw.fill(html) if raw else html

    def on_post_build(self, config):
        if self.page_cache is not None and self.page_cache.reused:
            c = self.page_cache
            print(f"INFO    -  errbook: {c.reused} unchanged entry page(s) reused, {c.rendered} rendered",
                  file=sys.stderr)

    def on_post_page(self, output, page, config):
        return self._head_script(output, get_relative_url(HEAD_SCRIPT, page.url),
                                 get_relative_url(addresses.GENERATED["feed"], page.url))

    def on_post_template(self, output, template_name, config):
        if template_name == "404.html":      # served at any depth: the site_url's path, not a relative one
            base = urlsplit(config.site_url or "/").path or "/"
            return self._head_script(output, base.rstrip("/") + "/" + HEAD_SCRIPT,
                                     base.rstrip("/") + "/" + addresses.GENERATED["feed"])
        return output

    @staticmethod
    def _head_script(output: str, src: str, feed: str) -> str:
        # the feed link lets a browser or feed reader find the What's new feed from any page
        tag = (f'<link rel="alternate" type="application/atom+xml" title="errbook: what\'s new" href="{feed}">'
               f'<script src="{src}"></script>')
        return output.replace("</head>", tag + "</head>", 1) if "</head>" in output else output

    def on_serve(self, server, config, builder):
        # The port was free before the build (errbook serve checks); if something took it since, end with one line
        # now rather than with MkDocs' traceback when it binds.
        problem = ports.busy(*server.server_address[:2])
        if problem:
            print(f"ERROR   -  errbook: {problem}", file=sys.stderr)
            raise SystemExit(2)
        for d in ("errata", "runbooks"):
            server.watch(str(self.root / d))
        server.builder = livepreview.answering_while_rebuilding(server, server.builder)
        return server
