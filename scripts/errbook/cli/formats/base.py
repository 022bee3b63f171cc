"""What every CI output format shares: an answer's level and its severity in each format, the entry's page URL,
the source position a log line names, and where in which log a line is.

Pure: nothing here reads a file or the environment (formats.context does). Each format module turns the triage
results (the dicts of triage/pipeline.py, in rank order), the stats and a Context into text.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urljoin

from errbook.triage import normalize
from errbook.web import addresses

# The answer levels, strongest first. "observation": a condition an entry describes is present in the log (worth
# knowing), not a diagnosis of this failure.
LEVELS = ("diagnosis", "likely", "observation")

# One table: a level's severity in each format. junit "pass" is a passing testcase with the text in system-out
# (an observation is not a failure of anything); a likely answer is a failure whose message says "likely".
SEVERITY = {
    "diagnosis": {"github": "error", "sarif": "error", "gitlab": "major", "junit": "failure"},
    "likely": {"github": "warning", "sarif": "warning", "gitlab": "minor", "junit": "failure"},
    "observation": {"github": "notice", "sarif": "note", "gitlab": "info", "junit": "pass"},
}

LINE_CAP = 200        # characters of one log line any format carries (they are quoted, never the whole log)
TEXT_CAP = 400        # characters of an entry's cause or first fix step
LINES_PER_ANSWER = 5  # evidence lines of one answer that a format lists


def level_of(result: dict) -> str:
    """The answer's level: triage's own "level" when it gives one, else from its confidence (a signature match is
    a diagnosis; the second stage's answer is likely)."""
    level = result.get("level")
    if level in SEVERITY:
        return level
    return "diagnosis" if result.get("confidence") == "match" else "likely"


def severity(result: dict, fmt: str) -> str:
    return SEVERITY[level_of(result)][fmt]


@dataclass(frozen=True)
class Context:
    """What the formats need beside the results. site_url: the site's root URL ("https://host/errbook/"), or None
    when it is unknown (addresses are then relative to the site root, and the formats say so). logs: the files
    as given on the command line ("-" for standard input). workspace: the CI checkout (a source path under it is
    written relative to it). unexplained: failure lines of the log that no diagnosis covers (formats.loglines)."""
    site_url: str | None = None
    directory_urls: bool = True
    logs: tuple[str, ...] = ("-",)
    workspace: str = ""
    unexplained: tuple[dict, ...] = ()
    version: str = ""


def page_url(src: str, directory_urls: bool = True) -> str:
    """MkDocs' URL of a page from its source path under docs/ (File.url: entries/X.md -> entries/X/)."""
    stem = src[: -len(".md")] if src.endswith(".md") else src
    if not directory_urls:
        return stem + ".html"
    head, _, name = stem.rpartition("/")
    return ((head or ".") if name == "index" else stem) + "/"


def entry_url(ctx: Context, eid: str) -> str:
    """The entry's page: absolute under site_url, or relative to the site root when site_url is unknown."""
    return site_url_of(ctx, addresses.entry_src(eid))


def site_url_of(ctx: Context, src: str) -> str:
    """The page of a source path under docs/ (web/addresses.py), as entry_url makes an entry's."""
    rel = page_url(src, ctx.directory_urls)
    if not ctx.site_url:
        return rel
    base = ctx.site_url if ctx.site_url.endswith("/") else ctx.site_url + "/"
    return urljoin(base, rel)


def links_note(ctx: Context) -> str:
    """One sentence when links are relative (no site_url), else ''."""
    if ctx.site_url:
        return ""
    return ("entry links are relative to the errbook site's root: set site_url in mkdocs.yml, $ERRBOOK_SITE_URL "
            "or --site-url to make them absolute")


# A source position a log line names: a compiler's "path:line[:col]: error:", nvcc's "path(line): error",
# CMake's "CMake Error at path:line", a Python traceback's 'File "path", line N'.
_PATH = r"""(?P<path>(?:[A-Za-z]:)?[^\s:"'()<>`,;|]*[A-Za-z0-9_]\.[A-Za-z0-9_+]+)"""
_POSITIONS = [
    re.compile(_PATH + r":(?P<line>\d+)(?::(?P<col>\d+))?:\s*(?:fatal error|error|warning|note|remark)\b"),
    re.compile(_PATH + r"\((?P<line>\d+)\)\s*:\s*(?:fatal error|error|warning)\b"),
    re.compile(r"CMake (?:Error|Warning)(?: \(dev\))? at " + _PATH + r":(?P<line>\d+)"),
    re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)'),
]


def source_position(text: str, workspace: str = "") -> dict | None:
    """{"path", "line", "col"?} of the source position the line names, or None. A path under workspace is made
    relative to it (what GitHub's and GitLab's annotations want)."""
    for rx in _POSITIONS:
        m = rx.search(text)
        if m:
            pos = {"path": relative(m.group("path"), workspace), "line": int(m.group("line"))}
            col = m.groupdict().get("col")
            if col:
                pos["col"] = int(col)
            return pos
    return None


def relative(path: str, workspace: str) -> str:
    ws = workspace.rstrip("/")
    if ws and path.startswith(ws + "/"):
        return path[len(ws) + 1:]
    return path[2:] if path.startswith("./") else path


def log_name(ctx: Context, ln: dict) -> str:
    """The log a line was read from: its source (several logs), else the one log given; standard input is
    "stdin"."""
    src = ln.get("source") or (ctx.logs[0] if len(ctx.logs) == 1 else "")
    return relative(src, ctx.workspace) if src and src != "-" else "stdin"


def evidence(result: dict, cap: int = LINES_PER_ANSWER) -> Iterator[tuple[str, dict]]:
    """(signature id, line) of the answer's evidence, in order, each line once, at most cap."""
    seen = set()
    for ev in result.get("evidence", []):
        for ln in ev.get("lines", []):
            key = (ln.get("source", ""), ln.get("line"))
            if key in seen:
                continue
            seen.add(key)
            yield ev.get("signature", ""), ln
            if len(seen) >= cap:
                return


def primary(result: dict, ctx: Context) -> dict:
    """Where an answer points: {"log", "line", "text", "source"?: position}. The first evidence line with a
    source position, else the first evidence line; an answer without evidence (likely, by similarity) points at
    the log's first unexplained failure line, else at the log."""
    lines = [ln for _, ln in evidence(result)]
    for ln in lines:
        pos = source_position(ln["text"], ctx.workspace)
        if pos:
            return {"log": log_name(ctx, ln), "line": ln["line"], "text": ln["text"], "source": pos}
    if lines:
        return {"log": log_name(ctx, lines[0]), "line": lines[0]["line"], "text": lines[0]["text"]}
    if ctx.unexplained:
        u = ctx.unexplained[0]
        return {"log": log_name(ctx, u), "line": u["line"], "text": u["text"]}
    return {"log": log_name(ctx, {}), "line": None, "text": ""}


def cap(text: str, n: int) -> str:
    """At most n characters (… marks a cut); a cut inside a `code span` closes it."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    out = text[: n - 1].rstrip() + "…"
    return out + "`" if out.count("`") % 2 else out


def headline(result: dict) -> str:
    return f"{result['id']} {result['title']}"


def plain_message(result: dict, ctx: Context) -> str:
    """Cause, first fix step and page: the text a one-message format (annotation, failure, issue) carries."""
    lvl = level_of(result)
    lead = {"diagnosis": "", "likely": "Likely (no signature matched; by similarity to the entry's text): ",
            "observation": "Worth knowing (a condition this entry describes is present; not a diagnosis): "}[lvl]
    if result.get("message_page") or result.get("generic"):    # likely: a line several causes print, none says which
        lead = f"Likely ({result.get('note', 'this message has several known causes')}): "
    return (f"{lead}{cap(result.get('summary', ''), TEXT_CAP)}\nFirst fix: {cap(result.get('first_fix', ''), TEXT_CAP)}"
            f"\n{entry_line(ctx, result['id'])}")


def entry_line(ctx: Context, eid: str) -> str:
    """The line that ends plain_message: the entry's page."""
    return f"Entry: {entry_url(ctx, eid)}"


def explained_lines(results: list[dict]) -> set[tuple[str, int]]:
    """(source, line) of every evidence line of a diagnosis, or of a multi-cause message's or a generic line's likely
    cause (its line is listed with it): the failure lines an entry explains."""
    return {(ln.get("source", ""), ln["line"]) for r in results
            if level_of(r) == "diagnosis" or r.get("message_page") or r.get("generic")
            for ev in r.get("evidence", []) for ln in ev.get("lines", [])}


def fingerprint(eid: str, path: str, text: str) -> str:
    """A stable id of one finding: the entry, the path and the line with numbers, hex and directories masked, so
    the same failure in the next run keeps it (timestamps, addresses and line numbers change)."""
    return hashlib.sha256("\x1f".join((eid, path, normalize.mask(text))).encode("utf-8")).hexdigest()[:32]
