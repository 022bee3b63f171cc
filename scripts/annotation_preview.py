"""Render what the errbook-triage action printed as a local HTML preview: its annotations and its job summary.

GitHub draws workflow commands (`::error file=…,line=…,title=…::message`) as annotations and renders
$GITHUB_STEP_SUMMARY as Markdown. Nobody here runs GitHub's runner, so docs/ci.md's picture comes from this: the
action's real output, decoded with the runner's escaping rules, laid out plainly. It is a preview, not GitHub's UI.

    python scripts/annotation_preview.py OUT.html COMMANDS.txt [SUMMARY.md]
"""
from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import markdown

COMMAND = re.compile(r"^::(error|warning|notice)(?: ([^:]*))?::(.*)$")
ICON = {"error": "✖", "warning": "⚠", "notice": "ℹ"}  # noqa: RUF001 - the runner's symbols


def _unescape(value: str, prop: bool) -> str:
    """The runner's escaping: %25 %0D %0A in data, and %3A %2C as well in properties."""
    if prop:
        value = value.replace("%3A", ":").replace("%2C", ",")
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def parse(text: str) -> list[dict[str, str]]:
    out = []
    for line in text.splitlines():
        m = COMMAND.match(line)
        if not m:
            continue
        props = dict(p.split("=", 1) for p in (m.group(2) or "").split(",") if "=" in p)
        out.append({"kind": m.group(1), "message": _unescape(m.group(3), False),
                    **{k: _unescape(v, True) for k, v in props.items()}})
    return out


def page(annotations: list[dict[str, str]], summary: str) -> str:
    rows = []
    for a in annotations:
        where = a.get("file", "")
        if a.get("line"):
            where += f"#L{a['line']}" + (f":{a['col']}" if a.get("col") else "")
        rows.append(f'<div class="ann {a["kind"]}"><div class="head"><span class="icon">{ICON[a["kind"]]}</span>'
                    f'<b>{html.escape(a.get("title", a["kind"]))}</b></div>'
                    f'<div class="where">{html.escape(where)}</div>'
                    f'<pre>{html.escape(a["message"])}</pre></div>')
    body = markdown.markdown(summary) if summary else ""
    return f"""<!doctype html><meta charset="utf-8">
<title>errbook-triage: annotations and summary (local preview)</title>
<style>
body {{ font: 14px/1.5 system-ui, sans-serif; margin: 24px; color: #1f2328; max-width: 960px; }}
h2 {{ font-size: 16px; margin: 20px 0 8px; }}
.note {{ color: #59636e; font-size: 12px; }}
.ann {{ border: 1px solid #d1d9e0; border-left: 4px solid #d1242f; border-radius: 6px; padding: 8px 12px;
        margin: 8px 0; }}
.ann.warning {{ border-left-color: #9a6700; }} .ann.notice {{ border-left-color: #0969da; }}
.icon {{ margin-right: 6px; color: #d1242f; }} .warning .icon {{ color: #9a6700; }} .notice .icon {{ color: #0969da; }}
.where {{ font-family: ui-monospace, monospace; font-size: 12px; color: #59636e; }}
pre {{ white-space: pre-wrap; margin: 6px 0 0; font: 12px/1.45 ui-monospace, monospace; }}
.summary {{ border: 1px solid #d1d9e0; border-radius: 6px; padding: 4px 16px; }}
code {{ font: 12px ui-monospace, monospace; background: #f6f8fa; padding: 1px 3px; }}
</style>
<p class="note">Rendered locally from the output of <code>.github/actions/errbook-triage/run.py</code>
(workflow commands and $GITHUB_STEP_SUMMARY); a preview, not GitHub's own page.</p>
<h2>Annotations</h2>
{"".join(rows) or "<p>none</p>"}
<h2>Job summary</h2>
<div class="summary">{body}</div>
"""


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    commands = Path(argv[1]).read_text(encoding="utf-8")
    summary = Path(argv[2]).read_text(encoding="utf-8") if len(argv) == 3 else ""
    Path(argv[0]).write_text(page(parse(commands), summary), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
