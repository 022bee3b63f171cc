"""Where a trial `errbook run` (one without --record) keeps its records and executed notebooks: a folder per
checkout under $XDG_STATE_HOME/errbook/runs (default ~/.local/state/errbook/runs), outside the checkout, so
trying a runbook never rewrites the team's committed ledger or run pages."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path


def state_home() -> Path:
    """$XDG_STATE_HOME when it is an absolute path (the XDG rule: a relative one is ignored), else ~/.local/state."""
    env = os.environ.get("XDG_STATE_HOME", "")
    return Path(env) if env and os.path.isabs(env) else Path.home() / ".local" / "state"


class Scratch:
    """The scratch folder of one checkout: `ledger` (a ledger of its own) and `runs` (executed notebooks)."""

    def __init__(self, root: Path):
        real = root.resolve()
        key = hashlib.sha256(str(real).encode("utf-8", "surrogateescape")).hexdigest()[:12]
        self.dir = state_home() / "errbook" / "runs" / f"{real.name or 'root'}-{key}"
        self.ledger = self.dir / "ledger.jsonl"
        self.runs = self.dir / "notebooks"
