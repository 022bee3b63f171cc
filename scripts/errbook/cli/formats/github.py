"""--format github: GitHub Actions workflow commands, one per answer:

    ::error file=src/k.cu,line=12,col=3,title=RMN-0075 unknown type name '__nv_bfloat16' …::cause … first fix … URL

The command is ::error for a diagnosis, ::warning for a likely answer, ::notice for an observation
(base.SEVERITY). file/line are the source position the matched log line names (a compiler's path:line:col, a
traceback's File "x", line N), relative to $GITHUB_WORKSPACE; else the log file and the matched line. Data and
properties are escaped as GitHub's toolkit does (core/src/command.ts): % \\r \\n in both, and : , in properties.
The Markdown summary (comment.render) is what the CLI appends to $GITHUB_STEP_SUMMARY."""
from __future__ import annotations

from errbook.cli.formats import base


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, props: dict, message: str) -> str:
    """One workflow command line: ::kind k=v,k=v::message (empty properties left out)."""
    plist = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v not in (None, ""))
    return f"::{kind}{' ' + plist if plist else ''}::{escape_data(message)}"


def annotation(r: dict, ctx: base.Context) -> str:
    at = base.primary(r, ctx)
    pos = at.get("source")
    props: dict = {"file": pos["path"], "line": pos["line"], "col": pos.get("col")} if pos else \
        {"file": at["log"] if at["log"] != "stdin" else "", "line": at["line"]}
    props["title"] = base.cap(base.headline(r), 200)
    where = f"{at['log']}:{at['line']}: {base.cap(at['text'], base.LINE_CAP)}\n" if at["line"] else ""
    return command(base.severity(r, "github"), props, where + base.plain_message(r, ctx))


def render(results: list[dict], stats: dict, ctx: base.Context) -> str:
    lines = [annotation(r, ctx) for r in results]
    if not results:
        first = stats.get("first_failure_line")
        msg = "No entry of the errbook notebook explains this log."
        if first:
            msg += f"\nFirst failure line: {base.cap(first, base.LINE_CAP)}"
        props: dict = {"title": "errbook: no known entry"}
        if ctx.unexplained and base.log_name(ctx, ctx.unexplained[0]) != "stdin":
            props = {"file": base.log_name(ctx, ctx.unexplained[0]), "line": ctx.unexplained[0]["line"], **props}
        lines.append(command("notice", props, msg))
    return "\n".join(lines) + "\n"
