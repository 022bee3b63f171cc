"""--format sarif: SARIF 2.1.0, one run of tool errbook.

rules: the answered entries (id, name, shortDescription = title, fullDescription = cause, help = first fix step,
helpUri = the entry's page, the level as defaultConfiguration). results: one per matched log line (at most
base.LINES_PER_ANSWER an answer), level by base.SEVERITY (error, warning, note), the message naming the entry,
its first fix and page. Locations: the source position the line names when there is one (first: code-scanning
UIs place a result at its first location), then the log file with region.startLine and the line as snippet. An
answer without matched lines (likely, by similarity) gets one result at the log's first unexplained failure
line, or at the log file."""
from __future__ import annotations

import json
from pathlib import PurePosixPath
from urllib.parse import quote

from errbook.cli.formats import base

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def uri(path: str) -> str:
    """A file path as a URI reference: file:// for an absolute path, else relative, percent-encoded."""
    if path.startswith("/"):
        return "file://" + quote(path)
    return quote(str(PurePosixPath(path.replace("\\", "/"))))


def _location(path: str, line: int | None, col: int | None = None, snippet: str = "") -> dict:
    phys: dict = {"artifactLocation": {"uri": uri(path)}}
    if line:
        region: dict = {"startLine": int(line)}
        if col:
            region["startColumn"] = int(col)
        if snippet:
            region["snippet"] = {"text": base.cap(snippet, base.LINE_CAP)}
        phys["region"] = region
    return {"physicalLocation": phys}


def rule(r: dict, ctx: base.Context) -> dict:
    return {
        "id": r["id"],
        "name": r["id"].replace("-", ""),
        "shortDescription": {"text": base.cap(r["title"], 1000)},
        "fullDescription": {"text": base.cap(r.get("summary", ""), 2000)},
        "help": {"text": "First fix: " + base.cap(r.get("first_fix", ""), 2000)},
        "helpUri": base.entry_url(ctx, r["id"]),
        "defaultConfiguration": {"level": base.severity(r, "sarif")},
        "properties": {"tags": [r.get("class", "")]},
    }


def _result(r: dict, index: int, ctx: base.Context, sig: str, ln: dict | None) -> dict:
    locations = []
    text = ln["text"] if ln else ""
    if ln:
        pos = base.source_position(ln["text"], ctx.workspace)
        if pos:
            locations.append(_location(pos["path"], pos["line"], pos.get("col")))
        locations.append(_location(base.log_name(ctx, ln), ln["line"], snippet=ln["text"]))
    else:
        at = base.primary(r, ctx)
        text = at["text"]
        locations.append(_location(at["log"], at["line"], snippet=at["text"]))
    msg = f"{base.headline(r)}.\n{base.plain_message(r, ctx)}"
    out = {"ruleId": r["id"], "ruleIndex": index, "level": base.severity(r, "sarif"), "message": {"text": msg},
           "locations": locations,
           "partialFingerprints": {"errbookLine/v1": base.fingerprint(r["id"], "", text)},
           "properties": {"errbookLevel": base.level_of(r), "confidence": r.get("confidence", ""),
                          "score": r.get("score", 0)}}
    if sig:
        out["properties"]["signature"] = sig
    return out


def render(results: list[dict], stats: dict, ctx: base.Context) -> str:
    rules, out = [], []
    for i, r in enumerate(results):
        rules.append(rule(r, ctx))
        lines = list(base.evidence(r))
        out += [_result(r, i, ctx, sig, ln) for sig, ln in lines] or [_result(r, i, ctx, "", None)]
    run: dict = {
        "tool": {"driver": {"name": "errbook", "version": ctx.version, "rules": rules,
                            **({"informationUri": ctx.site_url} if ctx.site_url else {})}},
        "results": out,
        "columnKind": "unicodeCodePoints",
        "properties": {"linesRead": stats.get("lines", 0)},
    }
    note = base.links_note(ctx)
    if note:
        run["properties"]["note"] = note
    if not results and stats.get("first_failure_line"):
        run["properties"]["firstFailureLine"] = base.cap(stats["first_failure_line"], base.LINE_CAP)
    doc = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
