"""`errbook triage --format`: the output formats for CI (one module each) beside the terminal text and JSON.

Each format's render(results, stats, ctx) -> str is pure (base.py: levels and their severities in one table,
entry page URLs, source positions). context.make gathers what they need from the checkout and the environment;
emit prints the chosen format, and for github also appends the Markdown summary to $GITHUB_STEP_SUMMARY.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from errbook.cli.formats import base, comment, github, gitlab, junit, loglines, sarif

FORMATS = ("text", "json", "github", "gitlab", "junit", "sarif", "markdown")
__all__ = ["FORMATS", "RENDER", "base", "emit", "loglines", "needs_log_lines"]
RENDER: dict[str, Callable[[list[dict], dict, base.Context], str]] = {
    "github": github.render, "gitlab": gitlab.render, "junit": junit.render, "sarif": sarif.render,
    "markdown": comment.render,
}


def needs_log_lines(fmt: str) -> bool:
    """Whether the format lists the log's unexplained failure lines (the log is read again for them)."""
    return fmt in RENDER


def emit(fmt: str, root: Path, logs: list[str], read_from: list[str], results: list[dict], stats: dict,
         site_url: str | None) -> None:
    """Print results in fmt (one of RENDER). github: also append the summary to $GITHUB_STEP_SUMMARY when set."""
    from errbook.cli.formats import context
    ctx = context.make(root, logs, read_from, results, site_url, unexplained=needs_log_lines(fmt))
    sys.stdout.write(RENDER[fmt](results, stats, ctx))
    if results and not ctx.site_url:
        print(f"errbook triage: {base.links_note(ctx)}", file=sys.stderr)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if fmt == "github" and summary:
        try:
            with open(summary, "a", encoding="utf-8") as f:
                f.write(comment.render(results, stats, ctx))
        except OSError as e:
            print(f"errbook triage: cannot write the step summary {summary}: {e.strerror or e}", file=sys.stderr)
