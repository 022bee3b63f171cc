"""An entry's fix, split in two: Confirm (its `kind: confirm` steps: a check and the output that confirms the
diagnosis) and Fix (the change). The fix box on the first screen shows the first check and the first fix step; the
Fix section further down lists every step.

Anchors: the box is #fix (the paste page's "Open the fix" lands on it), the full list #fix-steps. Each step has one
anchor, where the page first shows it: #confirm-1 and #fix-1 in the box, #confirm-2…, #fix-2… in the list; every
step carries a visible permalink to its anchor.

Languages: a piece with a Chinese version is written twice, the English with class eb-en, the Chinese with class
eb-zh and lang="zh-Hans"; assets/lang.js shows the reader's choice (English without script). Chinese copies that
repeat text indexed elsewhere on the page (the box repeats the list) are kept out of the search index."""
from __future__ import annotations

import html

from errbook.kb import fixsteps
from errbook.web import addresses, uitext
from errbook.web.escape import RawBlocks, fence, indent, inline, inline_html, pre
from errbook.web.phrases import applies_line, first_sentences, fix_code
from errbook.web.status import status_badges

ZH = uitext.HTML_LANG["zh"]               # the lang of every Chinese block on the site's pages
BOX_ANCHOR = addresses.FIX_ANCHOR         # "fix": the box
STEPS_ANCHOR = "fix-steps"                # the full list of steps
EXPECT = ("Expected if this is the problem:", "若是此问题，会看到：")


def pair(en: str, zh: str | None, tag: str = "span", cls: str = "", search: bool = True) -> str:
    """English and Chinese versions of one piece of HTML (only the English where there is no Chinese).
    search=False keeps the Chinese copy out of the site's search index."""
    c = f" {cls}" if cls else ""
    if not zh:
        return f'<{tag} class="{cls}">{en}</{tag}>' if cls else f"<{tag}>{en}</{tag}>"
    skip = "" if search else " data-search-exclude"
    return (f'<{tag} class="eb-en{c}">{en}</{tag}>'
            f'<{tag} class="eb-zh{c}" lang="{ZH}"{skip}>{zh}</{tag}>')


def label(kind: str, n: int, total: int) -> tuple[str, str]:
    """A step's label in English and Chinese: 'Confirm', 'Fix — step 2 of 3'."""
    if kind == fixsteps.CONFIRM:
        return (("Confirm", "确认") if total == 1 else
                (f"Confirm — check {n} of {total}", f"确认 — 第 {n} 项，共 {total} 项"))
    return ("Fix", "修复") if total == 1 else (f"Fix — step {n} of {total}", f"修复 — 第 {n} 步，共 {total} 步")


def anchor(kind: str, n: int) -> str:
    return f"{'confirm' if kind == fixsteps.CONFIRM else 'fix'}-{n}"


def permalink(name: str, words: str) -> str:
    return (f'<a class="headerlink eb-step-link" href="#{name}" title="Link to {html.escape(words)}" '
            'data-search-exclude>¶</a>')


def fix_box(d: dict, e, records_by_platform: dict, raw: RawBlocks) -> str:
    """The first check (with its expected output) and the first fix step, with its code, where it applies and
    the verification badges: the page's first screen. The box's own words (labels, the Applies-to line, the
    badges) are written in English and Chinese (uitext.py); the entry's text is, where it has a Chinese version."""
    confirm, fixes = fixsteps.split(d["fix"])
    parts = []
    if confirm:
        parts.append(_box_part(fixsteps.CONFIRM, confirm[0], len(confirm), raw, ""))
    n = len(d["fix"])
    more = pair(f"All {n} steps", f"全部 {n} 步", search=False) if n > 1 else pair("Details", "详情", search=False)
    meta = (f'<div class="eb-fix-meta" data-search-exclude markdown>\n\n[{more} :material-arrow-down:]'
            f"(#{STEPS_ANCHOR}){{ .md-button .eb-fix-more }} "
            f"{pair(applies_line(d), applies_line(d, 'zh'), search=False)}\n\n</div>\n\n"
            + " ".join(status_badges(e, records_by_platform, short=True, lang=x) for x in uitext.LANGS))
    parts.append(_box_part("fix", fixes[0], len(fixes), raw, meta))
    return f'<div class="eb-fixbox" id="{BOX_ANCHOR}" markdown>\n\n' + "\n\n".join(parts) + "\n\n</div>\n"


def _box_part(kind: str, step: dict, total: int, raw: RawBlocks, tail: str) -> str:
    en, zh = label(kind, 1, total)
    name = anchor(kind, 1)
    look = "info eb-confirm" if kind == fixsteps.CONFIRM else "success eb-fix"
    title = pair(html.escape(en), html.escape(zh), search=False) + permalink(name, en.lower())
    zh_text = step.get("step_zh")
    body = pair(inline_html(first_sentences(step["step"], 260)),
                inline_html(first_sentences(zh_text, 160)) if zh_text else None, tag="p", cls="eb-clamp", search=False)
    code = fix_code(step)
    if code:       # plain (not highlighted) here: the Fix section below highlights it; Material adds the copy button
        body += pre(code[1].rstrip("\n"), "eb-fix-code", code[0])
    if step.get("expect"):
        body += ('<p class="eb-expect eb-clamp">' + pair(html.escape(EXPECT[0]), html.escape(EXPECT[1]), tag="strong",
                                                search=False) + " "
                 + pair(inline_html(step["expect"]), inline_html(step["expect_zh"]) if step.get("expect_zh") else None,
                        search=False) + "</p>")
    return (f'<div class="admonition {look}" id="{name}" markdown>\n'
            f'<p class="admonition-title">{title}</p>\n\n{raw.put(body)}\n\n{tail}\n</div>')


def fix_steps(d: dict) -> list[str]:
    """Every step, checks first, with its code (before/after tabs where the entry gives both), in English and
    Chinese."""
    confirm, fixes = fixsteps.split(d["fix"])
    md = [f"## Fix {{ #{STEPS_ANCHOR} }}\n"]
    for kind, steps in ((fixsteps.CONFIRM, confirm), ("fix", fixes)):
        if not steps:
            continue
        if confirm:      # two lists: say which is which
            head = ("Confirm", "确认") if kind == fixsteps.CONFIRM else ("Fix", "修复")
            md.append(f'<p class="eb-steps-label" markdown>{pair(head[0], head[1], tag="strong")}</p>\n')
        md.append("\n".join(_step_md(kind, i, st, len(steps)) for i, st in enumerate(steps, 1)))
    return md


def _step_md(kind: str, i: int, step: dict, total: int) -> str:
    name = anchor(kind, i)
    here = f'<span class="eb-anchor" id="{name}"></span>' if i > 1 else ""      # step 1's anchor is in the box
    text = pair(inline(step["step"]), inline(step["step_zh"]) if step.get("step_zh") else None)
    out = [f"{i}. {here}{text} {permalink(name, label(kind, i, total)[0].lower())}\n"]
    c = step.get("code")
    if c:
        if c.get("before") and c.get("after"):
            out.append('    === "Before"\n\n' + fence(c["before"], c["lang"], "        ") + "\n")
            out.append('    ===+ "After"\n\n' + fence(c["after"], c["lang"], "        ") + "\n")
        else:
            out.append(fence(c.get("snippet") or c["after"], c["lang"], "    ") + "\n")
    if step.get("expect"):
        out.append(indent(pair(f"*{EXPECT[0]}*", f"*{EXPECT[1]}*") + " "
                          + pair(inline(step["expect"]), inline(step["expect_zh"]) if step.get("expect_zh") else None))
                   + "\n")
    return "\n".join(out)
