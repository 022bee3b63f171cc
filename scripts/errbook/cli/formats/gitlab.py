"""--format gitlab: a GitLab Code Quality report (the artifacts:reports:codequality file): a JSON array with one
issue per answer. Fields are those GitLab's documentation lists for a custom tool: description (title, cause,
first fix, page URL), check_name (the entry id), fingerprint, severity (base.SEVERITY: major, minor, info),
location.path and location.lines.begin (the source position the matched line names, relative to
$CI_PROJECT_DIR; else the log file and the matched line; line 1 when nothing points into the log).

The fingerprint (base.fingerprint) is a hash of the entry id, the location's path and the matched line with
numbers, hex and directories masked: the same failure in the next pipeline keeps its fingerprint (GitLab compares
reports by it), though timestamps, addresses and the log's line numbers change."""
from __future__ import annotations

import json

from errbook.cli.formats import base

DESCRIPTION_CAP = 1200     # characters: GitLab shows the description as the finding's one-line summary


def issue(r: dict, ctx: base.Context) -> dict:
    at = base.primary(r, ctx)
    pos = at.get("source")
    path, line = (pos["path"], pos["line"]) if pos else (at["log"], at["line"] or 1)
    body = base.plain_message(r, ctx)
    link = base.entry_line(ctx, r["id"])
    # the cut falls on the cause and fix, never on the page link that ends the description
    text = base.cap(f"{base.headline(r)}: {body.removesuffix(link)}", DESCRIPTION_CAP - len(link) - 1)
    return {
        "type": "issue",
        "check_name": r["id"],
        "description": f"{text} {link}",
        "content": {"body": body},
        "categories": ["Bug Risk"],
        "fingerprint": base.fingerprint(r["id"], path, at["text"]),
        "severity": base.severity(r, "gitlab"),
        "location": {"path": path, "lines": {"begin": int(line)}},
    }


def render(results: list[dict], stats: dict, ctx: base.Context) -> str:
    return json.dumps([issue(r, ctx) for r in results], ensure_ascii=False, indent=1) + "\n"
