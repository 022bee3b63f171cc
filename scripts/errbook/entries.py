"""The one loader for entries: every reader (CLI, validator, matcher, site, runbooks) goes through here."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from . import paths, yamlpos


@dataclass
class Entry:
    path: Path            # absolute path of the YAML file
    rel: str              # path relative to the repo root, for messages
    data: dict            # the parsed entry
    located: yamlpos.Located

    @property
    def id(self) -> str:
        return self.data.get("id", "")

    @property
    def klass(self) -> str:
        return self.data.get("class", "")

    @property
    def withdrawn(self) -> bool:
        return bool(self.data.get("withdrawn"))

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def line_of(self, path: tuple) -> int:
        return self.located.line_of(path)

    @property
    def summary_line(self) -> str:
        """The summary on one line: what the CLI and the paste page show for a match."""
        return " ".join(str(self.data["summary"]).split())

    @property
    def first_fix(self) -> str:
        return " ".join(str(self.data["fix"][0]["step"]).split())


@dataclass
class LoadError:
    rel: str
    line: int
    message: str


def entry_files(root: Path) -> list[Path]:
    # errata/releases.yaml is data about releases (errbook stale), not an entry
    return sorted(p for p in paths.errata_dir(root).rglob("*.yaml") if p.is_file() and p.name != "releases.yaml")


def load_file(path: Path, root: Path) -> Entry | LoadError:
    rel = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        return LoadError(rel, 1, f"not UTF-8 ({e.reason} at byte {e.start})")
    try:
        located = yamlpos.load(text)
    except yamlpos.YamlError as e:
        return LoadError(rel, e.line, e.message)
    if not isinstance(located.data, dict):
        return LoadError(rel, 1, "an entry must be a YAML mapping")
    return Entry(path, rel, located.data, located)


def load_all(root: Path) -> tuple[list[Entry], list[LoadError]]:
    entries: list[Entry] = []
    errors: list[LoadError] = []
    for p in entry_files(root):
        r = load_file(p, root)
        (entries if isinstance(r, Entry) else errors).append(r)
    return entries, errors


def active(entries: list[Entry]) -> Iterator[Entry]:
    return (e for e in entries if not e.withdrawn)
