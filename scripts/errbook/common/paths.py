"""Where things live in a checkout. One place, so the CLI, the site plugin and the runbooks agree."""
from __future__ import annotations

import os
from pathlib import Path

from errbook.errors import ErrbookError

PACKAGE_DIR = Path(__file__).resolve().parents[1]        # errbook/ (this module is errbook/common/paths.py)
SCHEMA_PATH = PACKAGE_DIR / "kb" / "schema" / "entry.schema.json"
ASSETS_DIR = PACKAGE_DIR / "web" / "assets"
# An installed wheel's copy of the knowledge base (setup.py writes it; a checkout or an editable install has none):
# the root when no checkout is found, read-only.
SNAPSHOT_DIR = PACKAGE_DIR / "_snapshot"


class NotACheckout(ErrbookError, FileNotFoundError):
    """A root given by --root or $ERRBOOK_ROOT that is not a checkout: every command would answer "nothing
    found" from it (no entries), which reads like a real answer, so it is an error instead."""


def checkout(root: Path, named_by: str) -> Path:
    """root, when it is an errbook checkout (it holds errata/); else NotACheckout naming where it came from."""
    if not (root / "errata").is_dir():
        raise NotACheckout(f"{root} is not an errbook checkout (no errata/ folder in it); check {named_by}")
    return root


def repo_root(start: Path | None = None) -> Path:
    """The checkout root: $ERRBOOK_ROOT, else the nearest parent holding errata/ and mkdocs.yml, else the checkout
    of an editable install, else an installed wheel's snapshot (is_snapshot says which)."""
    env = os.environ.get("ERRBOOK_ROOT")
    if env:
        return checkout(Path(env).resolve(), "$ERRBOOK_ROOT")
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "errata").is_dir() and (d / "mkdocs.yml").is_file():
            return d
    # Installed editable from a checkout: fall back to the package's own checkout.
    guess = PACKAGE_DIR.parent.parent
    if (guess / "errata").is_dir():
        return guess
    if (SNAPSHOT_DIR / "errata").is_dir():
        return SNAPSHOT_DIR
    raise FileNotFoundError("not inside an errbook checkout (no errata/ and mkdocs.yml found); set ERRBOOK_ROOT")


def is_snapshot(root: Path) -> bool:
    """Whether root is the installed wheel's read-only snapshot rather than a checkout."""
    return root.resolve() == SNAPSHOT_DIR.resolve()


def user_cache_dir() -> Path:
    """This user's cache folder: $ERRBOOK_CACHE, else $XDG_CACHE_HOME/errbook or ~/.cache/errbook."""
    return Path(os.environ.get("ERRBOOK_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or
                                                         Path.home() / ".cache") / "errbook")


def cache_dir(root: Path) -> Path:
    """Where indexes built from root's entries are kept: a checkout's .cache/; for the snapshot (inside the
    installed package, which is not ours to write) a folder of the user's cache (the indexes are named by a
    fingerprint of what they were built from, so another install's snapshot rebuilds rather than misreads)."""
    if is_snapshot(root):
        return user_cache_dir() / "snapshot"
    return root / ".cache"


def errata_dir(root: Path) -> Path:
    return root / "errata"


def corpus_dir(root: Path) -> Path:
    """The logs the shipped tool reads: labelled (real/, unseen/) and benign (benign/) (triage/corpus.py)."""
    return errata_dir(root) / "corpus"


def ledger_path(root: Path) -> Path:
    return root / "runbooks" / "ledger.jsonl"


def docs_dir(root: Path) -> Path:
    return root / "docs"


def executed_dir(root: Path) -> Path:
    """Executed runbooks are kept inside docs/: the site gives each a page (escaped) and publishes the notebook.
    Only the notebooks directly in it; the site refuses subfolders."""
    return docs_dir(root) / "verification" / "runs"
