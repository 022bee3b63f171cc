"""MkDocs adapter: turns entries and the ledger into pages during `mkdocs build`/`serve` (no separate pre-step)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, get_plugin_logger
from mkdocs.structure.files import File

from . import entries as entries_mod
from . import ledger, matcher, paths, sitegen, validate

log = get_plugin_logger(__name__)


class ErrbookConfig(Config):
    root = c.Optional(c.Type(str))   # checkout root; default: the folder of mkdocs.yml


class ErrbookPlugin(BasePlugin[ErrbookConfig]):
    def on_config(self, config):
        self.root = Path(self.config.root or Path(config.config_file_path).parent).resolve()
        loaded, errors = entries_mod.load_all(self.root)
        for e in errors:
            if e.kind == "unreadable":
                # Skipped with a warning, not an abort: printed outside MkDocs' logger so that strict mode (on in
                # mkdocs.yml) does not turn it into a failed build; `errbook validate` reports it as a finding.
                print(f"WARNING -  errbook: skipping entry file {e} (errbook validate reports it)", file=sys.stderr)
        problems = [str(e) for e in errors if e.kind != "unreadable"]
        for e in loaded:
            problems += [str(f) for f in validate.schema_findings(e)]
        problems += [str(f) for f in validate.duplicate_id_findings(loaded)]
        if problems:
            raise PluginError("invalid entries (run `errbook validate`):\n  " + "\n  ".join(problems[:50]))
        self.entries = [e for e in loaded if not e.withdrawn]
        self.withdrawn = [e for e in loaded if e.withdrawn]
        self.by_id = {e.id: e for e in loaded}
        records, self.ledger_problems = ledger.read(ledger.default_path(self.root))
        for p in self.ledger_problems:
            log.info(f"ledger: {p}")
        self.latest = ledger.latest_by_entry_platform(records)
        try:
            self.bundle = matcher.Matcher.from_entries(self.entries).bundle()
        except Exception as ex:  # a bad pattern: validate names it precisely
            raise PluginError(f"signature does not compile (run `errbook validate`): {ex}") from None
        return config

    def _add(self, files, config, uri: str, content: str | bytes) -> None:
        existing = files.get_file_from_path(uri)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, uri, content=content))

    def on_files(self, files, config):
        docs = Path(config.docs_dir)
        notebooks = frozenset(str(Path("docs") / p.relative_to(docs)) for p in docs.rglob("*.ipynb"))
        for e in self.entries + self.withdrawn:
            self._add(files, config, sitegen.entry_uri(e.id),
                      sitegen.entry_page(e, self.by_id, self.latest.get(e.id, {}), notebooks))
        for k in sitegen.CLASSES:
            self._add(files, config, f"classes/{k}.md", sitegen.class_page(k, [e for e in self.entries if e.klass == k]))
        self._add(files, config, "overview.md", sitegen.overview_page(self.entries, self.latest))
        self._add(files, config, "corrections.md", sitegen.corrections_page(self.entries))
        from . import facts
        self._add(files, config, "machine-checks.md", sitegen.machine_checks_page(self.entries, facts.VOCAB))
        self._add(files, config, "verification/index.md",
                  sitegen.matrix_page(self.entries, self.latest, self.ledger_problems))
        schema = json.loads(paths.SCHEMA_PATH.read_text(encoding="utf-8"))
        self._add(files, config, "schema/index.md", sitegen.schema_page(schema))
        self._add(files, config, "schema/entry-1.schema.json", json.dumps(schema, indent=2, ensure_ascii=False))
        bundle = dict(self.bundle, entries={
            e.id: {"title": e["title"], "summary": e.summary_line, "fix": e.first_fix, "url": f"entries/{e.id}/"}
            for e in self.entries})
        # A script, not JSON fetched at run time: the paste page then makes no request at all.
        self._add(files, config, "assets/errbook/signatures.js",
                  "window.ERRBOOK_BUNDLE = " + json.dumps(bundle, ensure_ascii=False).replace("</", "<\\/") + ";\n")
        for name in ("engine.js", "paste.js"):
            self._add(files, config, f"assets/errbook/{name}", (paths.ASSETS_DIR / name).read_text(encoding="utf-8"))
        return files

    def on_page_markdown(self, markdown, page, config, files):
        page_dir = str(Path(page.file.src_uri).parent).replace(".", "") if page.file.src_uri else ""
        out, unknown = sitegen.expand_refs(markdown, self.by_id, page_dir)
        if unknown:
            raise PluginError(f"{page.file.src_uri}: unknown entry id(s) {sorted(set(unknown))}")
        return out

    def on_serve(self, server, config, builder):
        for d in ("errata", "runbooks"):
            server.watch(str(self.root / d))
        return server
