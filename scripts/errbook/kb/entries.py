"""The one loader for entries: every reader (CLI, validator, matcher, site, runbooks) goes through here.

An entry is a regular file of at most MAX_ENTRY_BYTES under errata/. A file that cannot be read (permissions,
not a regular file), a dangling symlink, a symlink that leaves the repository and a symlinked folder are
LoadErrors of kind "unreadable": validate reports them, every other reader skips them with a warning. Nothing
is read beyond the size cap and no symlink is followed outside the checkout.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from errbook.common import paths
from errbook.kb import fixsteps, yamlpos


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
        """The first step that changes something (a `kind: confirm` check is not a fix; kb/fixsteps.py)."""
        fixes = fixsteps.split(self.data["fix"])[1] or self.data["fix"]
        return " ".join(str(fixes[0]["step"]).split())


NOT_ENTRY_DIRS = ("messages",)      # errata/messages/: message pages, read by kb/messages.py
MAX_ENTRY_BYTES = 256 * 1024   # the largest real entry is 16 KiB; a bigger file is refused unread


@dataclass
class LoadError:
    rel: str
    line: int
    message: str
    kind: str = "invalid"   # "invalid": the file's content is wrong; "unreadable": the file could not be read

    def __str__(self) -> str:
        return f"{self.rel}:{self.line}: {self.message}"


NOT_ENTRIES = frozenset({"releases.yaml", "facets.yaml"})     # YAML files at the top of errata/ that are data


def entry_files(root: Path) -> list[Path]:
    """Every *.yaml under errata/, plus what must not pass silently: symlinked folders, non-regular files.
    errata/releases.yaml is data about releases (errbook stale), errata/facets.yaml the guided finder's
    vocabulary (kb/facets.py), errata/corpus/ the logs triage reads (triage/corpus.py, their labels are YAML
    too) and errata/messages/ the message pages (kb/messages.py): none of them is an entry."""
    top = paths.errata_dir(root)
    out = []
    for d, dirs, files in os.walk(top):
        if Path(d) == top:
            dirs[:] = [x for x in dirs if x != paths.corpus_dir(root).name and x not in NOT_ENTRY_DIRS]
        out += [Path(d) / x for x in dirs if os.path.islink(os.path.join(d, x))]
        out += [Path(d) / f for f in files if f.endswith(".yaml") and not (Path(d) == top and f in NOT_ENTRIES)]
    return sorted(out)


def _unreadable(path: Path, root: Path) -> str | None:
    """Why this path must not be read, or None."""
    if path.is_symlink():
        target = os.readlink(path)
        real = path.resolve()
        if not real.exists():
            return f"dangling symlink (to {target})"
        if not real.is_relative_to(root.resolve()):
            return f"symlink to {target}, outside the repository: not followed"
        if real.is_dir():
            return f"symlinked folder (to {target}): not followed; entries must be files under errata/"
    elif not path.resolve().is_relative_to(root.resolve()):
        return "resolves outside the repository: not followed"
    return None


def _read_capped(path: Path, rel: str) -> bytes | LoadError:
    """The file's bytes, reading at most MAX_ENTRY_BYTES + 1 of them."""
    too_big = f"larger than the {MAX_ENTRY_BYTES // 1024} KiB limit for an entry"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)   # O_NONBLOCK: a FIFO must not block the open
    except OSError as e:
        return LoadError(rel, 1, f"cannot read the file: {e.strerror or e}", "unreadable")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return LoadError(rel, 1, "not a regular file", "unreadable")
        if st.st_size > MAX_ENTRY_BYTES:
            return LoadError(rel, 1, f"file of {st.st_size} bytes is {too_big}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_ENTRY_BYTES + 1)
        return LoadError(rel, 1, f"file is {too_big}") if len(data) > MAX_ENTRY_BYTES else data
    except OSError as e:
        return LoadError(rel, 1, f"cannot read the file: {e.strerror or e}", "unreadable")
    finally:
        os.close(fd)


def load_file(path: Path, root: Path) -> Entry | LoadError:
    rel = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    why = _unreadable(path, root)
    if why:
        return LoadError(rel, 1, why, "unreadable")
    raw = _read_capped(path, rel)
    if isinstance(raw, LoadError):
        return raw
    try:
        text = raw.decode("utf-8")
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
        if isinstance(r, Entry):
            entries.append(r)
        else:
            errors.append(r)
    return entries, errors


def active(entries: list[Entry]) -> Iterator[Entry]:
    return (e for e in entries if not e.withdrawn)
