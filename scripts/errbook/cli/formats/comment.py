"""--format markdown: a pull-request comment (and GitHub's job summary). A verdict line; each answer with its
level, a link to its page, the log lines that show it and its first fix step; then the log's failure lines that
no entry explains. Log text appears only as those lines, each capped, in code spans (a line cannot open a
Markdown block, ping someone with @ or inject HTML)."""
from __future__ import annotations

from errbook.cli.formats import base

MARK = {"diagnosis": "🔴 diagnosis", "likely": "🟡 likely", "observation": "🔵 worth knowing"}


def code(text: str) -> str:
    """A Markdown code span holding text as it is (a fence longer than any backtick run in it)."""
    text = base.cap(text, base.LINE_CAP)
    longest, cur = 0, 0
    for ch in text:
        cur = cur + 1 if ch == "`" else 0
        longest = max(longest, cur)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def link_text(title: str) -> str:
    return base.cap(title, 160).replace("[", "\\[").replace("]", "\\]")


def verdict(results: list[dict]) -> str:
    if not results:
        return "**errbook:** no entry of the notebook explains this log."
    top = results[0]
    lvl = base.level_of(top)
    if lvl == "diagnosis":
        return f"**errbook:** a known problem — **{top['id']}** {top['title']}."
    if top.get("message_page"):
        return (f"**errbook:** the log's message has several known causes and no line says which; likely "
                f"**{top['id']}** {top['title']}.")
    if top.get("generic"):
        return (f"**errbook:** the log's only telling line is a generic one; likely **{top['id']}** "
                f"{top['title']}.")
    if lvl == "likely":
        return f"**errbook:** no signature matched; by similarity this is likely **{top['id']}** {top['title']}."
    return f"**errbook:** no diagnosis; worth knowing: **{top['id']}** {top['title']}."


def _answer(r: dict, ctx: base.Context) -> list[str]:
    lvl = base.level_of(r)
    out = [f"- {MARK[lvl]}: [**{r['id']}** {link_text(r['title'])}]({base.entry_url(ctx, r['id'])}) "
           f"({r.get('class', '')})"]
    for _sig, ln in base.evidence(r, 3):
        where = f"{base.log_name(ctx, ln)}:{ln['line']}"
        out.append(f"  - {where}: {code(ln['text'])}")
    out.append(f"  - first fix: {base.cap(r.get('first_fix', ''), base.TEXT_CAP)}")
    return out


def render(results: list[dict], stats: dict, ctx: base.Context) -> str:
    lines = [verdict(results), ""]
    for r in results:
        lines += _answer(r, ctx)
    if results:
        lines.append("")
    if ctx.unexplained:
        head = "Failure lines no entry explains" if results else "Failure lines in the log"
        lines.append(f"**{head}** (the first {len(ctx.unexplained)}):")
        lines += [f"- {base.log_name(ctx, u)}:{u['line']}: {code(u['text'])}" for u in ctx.unexplained]
        lines.append("")
    elif stats.get("first_failure_line"):           # a log read from standard input among several
        lines += [f"First failure line: {code(stats['first_failure_line'])}", ""]
    elif not results:
        lines += ["No line of the log reports a failure.", ""]
    if not results or base.level_of(results[0]) != "diagnosis":
        lines.append("Once the cause is known, add an entry: `errbook new CLASS \"title\"`.")
    note = base.links_note(ctx)
    foot = f"{stats.get('lines', 0)} lines read by errbook {ctx.version}" + (f"; {note}" if note else "")
    lines.append(f"<sub>{foot}</sub>")
    return "\n".join(lines) + "\n"
