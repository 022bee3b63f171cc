"""Message pages: one message that several entries explain (errata/messages/<id>.yaml), loaded as data.

A message page names a message by its signatures (the entries' signature format and portable subset), lists the
entries that cause it, and, for each cause, the evidence that tells it apart from the others: log-line patterns and
doctor fact conditions (the vocabulary of triggers.checks). Triage (triage/messages.py) ranks the causes by the
evidence a log shows; the site writes a page per message (web/messagepage.py); validate checks them
(kb/msgvalidate.py). This module only reads: the schema check and the file loader every reader shares.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from errbook.common import paths
from errbook.kb import entries as entries_mod
from errbook.kb import regexsubset, yamlpos
from errbook.kb.usable import Finding, field_name

SCHEMA_PATH = paths.SCHEMA_PATH.parent / "message.schema.json"
# Definitions a message page shares with entries: taken from entry.schema.json when the schema is read, so an
# evidence condition or an example is held to exactly the rules of a machine check or a signature example.
SHARED_DEFS = ("line", "prose", "log_text", "condition", "version_range")


def messages_dir(root: Path) -> Path:
    return paths.errata_dir(root) / "messages"


@dataclass
class MessagePage:
    path: Path
    rel: str
    data: dict
    located: yamlpos.Located

    @property
    def id(self) -> str:
        return str(self.data.get("id", ""))

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def line_of(self, path: tuple) -> int:
        return self.located.line_of(path)

    def cause_ids(self) -> list[str]:
        return self.cause_ids_of(self.data)

    @staticmethod
    def cause_ids_of(data: dict) -> list[str]:
        return [c["entry"] for c in data.get("causes") or [] if isinstance(c, dict) and "entry" in c]


@lru_cache(maxsize=1)
def schema() -> dict:
    s = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    entry_defs = json.loads(paths.SCHEMA_PATH.read_text(encoding="utf-8"))["$defs"]
    s.setdefault("$defs", {}).update({k: entry_defs[k] for k in SHARED_DEFS})
    return s


@lru_cache(maxsize=1)
def _validator():
    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    return cls(schema(), format_checker=None)


def schema_findings(p: MessagePage) -> list[Finding]:
    out = []
    for err in _validator().iter_errors(p.data):
        path = tuple(err.absolute_path)
        if err.validator == "additionalProperties":
            extra = [k for k in (err.instance or {}) if k not in err.schema.get("properties", {})]
            out += [Finding(p.rel, p.line_of(path + (k,)), field_name(path + (k,)), "unknown field") for k in extra]
            continue
        if err.validator == "required":
            missing = err.message.split("'")[1] if "'" in err.message else ""
            out.append(Finding(p.rel, p.line_of(path), field_name(path + ((missing,) if missing else ())),
                               err.message))
            continue
        out.append(Finding(p.rel, p.line_of(path), field_name(path), err.message[:300]))
    return out


def page_files(root: Path) -> list[Path]:
    d = messages_dir(root)
    return sorted(d.glob("*.yaml")) if d.is_dir() else []


def load_all(root: Path) -> tuple[list[MessagePage], list[Finding]]:
    """Every message page that reads as a YAML mapping, and a finding for each file that does not."""
    pages: list[MessagePage] = []
    errors: list[Finding] = []
    for f in page_files(root):
        r = entries_mod.load_file(f, root)         # the same caps and symlink rules as an entry file
        if isinstance(r, entries_mod.LoadError):
            errors.append(Finding(r.rel, r.line, "", r.message))
        else:
            pages.append(MessagePage(r.path, r.rel, r.data, r.located))
    return pages, errors


def _patterns(d: dict):
    for s in d.get("signatures") or []:
        yield s["pattern"], bool(s.get("ignore_case"))
    for c in d.get("causes") or []:
        for ev in c["evidence"]:
            if "pattern" in ev:
                yield ev["pattern"], bool(ev.get("ignore_case"))


def readable(p: MessagePage) -> bool:
    """The page passes the schema and every pattern is in the portable subset: what triage may rely on."""
    if schema_findings(p):
        return False
    try:
        for pat, ic in _patterns(p.data):
            regexsubset.check(pat, ic)
    except Exception:                       # SubsetError or a parse error: validate names it
        return False
    return True


def readable_pages(root: Path) -> list[MessagePage]:
    return [p for p in load_all(root)[0] if readable(p)]


def usable_pages(root: Path, active_ids: set[str]) -> list[MessagePage]:
    """The pages triage and the site may use: readable, naming only active entries (a page being edited costs
    only itself; `errbook validate` says what is wrong with it)."""
    return [p for p in readable_pages(root) if set(p.cause_ids()) <= active_ids]
