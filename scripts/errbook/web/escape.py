"""Entry text -> inert Markdown or HTML: the one place that escapes what comes from entries, the ledger and
executed notebooks (they are data, not markup), and the raw-block mechanism that lets long text skip Markdown."""
from __future__ import annotations

import html
import json
import re
import secrets

# Only what Markdown and the enabled extensions read as markup is escaped (every entity costs the Markdown
# inline processor a pattern match, and pages hold thousands): HTML, links, attribute lists, tables, backslash
# escapes, emphasis (an underscore unless it joins two letters or digits: HIP_VISIBLE_DEVICES is no emphasis), emoji
# shortcodes (:name:), quotes (admonition titles) and block markers at the very start (#, -, +, 1.).
_INLINE_ESC = {"<": "&lt;", ">": "&gt;", "&": "&amp;", "[": "&#91;", "]": "&#93;", "{": "&#123;", "}": "&#125;",
               "|": "&#124;", "\\": "&#92;", "*": "&#42;", '"': "&quot;", "_": "&#95;", ":": "&#58;"}
_ESC_RE = re.compile(r"[<>&\[\]{}|\\*\"]|(?<![^\W_])_|_(?![^\W_])|:(?=[\w+-]+:)")
_LEAD_RE = re.compile(r"^(?:[#+=~`-]|\d+(?=[.)](?:\s|$)))")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _esc_plain(s: str, lead: bool = True) -> str:
    out = _ESC_RE.sub(lambda m: _INLINE_ESC[m.group(0)], s)
    if lead:
        out = _LEAD_RE.sub(lambda m: "".join(f"&#{ord(c)};" for c in m.group(0)), out)
    return out


def code_span(s: str) -> str:
    if not s.strip():
        return _esc_plain(s)
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def inline(s) -> str:
    """Entry prose -> inert Markdown: `code spans` stay code, everything else is entity-escaped."""
    s = " ".join(_CTRL.sub("", str(s)).split())
    out, pos = [], 0
    for m in re.finditer(r"`([^`]+)`", s):
        out.append(_esc_plain(s[pos:m.start()], lead=pos == 0))
        out.append(code_span(m.group(1)))
        pos = m.end()
    out.append(_esc_plain(s[pos:], lead=pos == 0).replace("`", "&#96;"))
    return "".join(out)


def prose(s) -> str:
    """Multi-paragraph prose: paragraphs split on blank lines, each rendered with inline()."""
    paras = [p for p in re.split(r"\n\s*\n", str(s).strip()) if p.strip()]
    return "\n\n".join(inline(p) for p in paras)


def fence(code: str, lang: str = "text", indent: str = "") -> str:
    code = _CTRL.sub("", str(code))
    n = max(3, max((len(r) for r in re.findall(r"`{3,}", code)), default=0) + 1)
    lang = lang if re.fullmatch(r"[a-z0-9+#-]{1,20}", lang or "") else "text"
    body = "\n".join((indent + line) if line else "" for line in code.rstrip("\n").split("\n"))
    return f"{indent}{'`' * n}{lang}\n{body}\n{indent}{'`' * n}"


def indent(md: str, n: int = 4) -> str:
    pad = " " * n
    return "\n".join(pad + line if line.strip() else "" for line in md.split("\n"))


def url(u: str) -> str:
    for ch, code in (("(", "%28"), (")", "%29"), (" ", "%20"), ('"', "%22"), ("'", "%27"), ("<", "%3C"),
                     (">", "%3E"), ("`", "%60")):
        u = str(u).replace(ch, code)
    return u


def link(title: str, u: str) -> str:
    return f"[{inline(title)}]({url(u)})"


def attr(s) -> str:
    """A value for an HTML attribute (quoted with double quotes)."""
    return html.escape(_CTRL.sub("", str(s)), quote=True)


def front_matter(meta: dict) -> str:
    return "---\n" + json.dumps(meta, ensure_ascii=False, indent=None) + "\n---\n\n"


def inline_html(s) -> str:
    """inline() for a pre-rendered block: `code spans` as <code>, everything else escaped text."""
    s = " ".join(_CTRL.sub("", str(s)).split())
    out, pos = [], 0
    for m in re.finditer(r"`([^`]+)`", s):
        out.append(html.escape(s[pos:m.start()], quote=False))
        out.append(f"<code>{html.escape(m.group(1), quote=False)}</code>")
        pos = m.end()
    out.append(html.escape(s[pos:], quote=False))
    return "".join(out)


def prose_html(s) -> str:
    return "".join(f"<p>{inline_html(p)}</p>" for p in re.split(r"\n\s*\n", str(s).strip()) if p.strip())


def pre(text: str, cls: str, lang: str = "") -> str:
    """Text as an escaped <pre><code> block (no Markdown, no highlighting), of CSS class cls."""
    code_cls = f' class="language-{lang}"' if lang else ""
    return f'<pre class="{cls}"><code{code_cls}>{html.escape(_CTRL.sub("", str(text)), quote=False)}</code></pre>'


class RawBlocks:
    """Escaped HTML blocks (real log text, patterns, notebook cells) that skip Markdown and syntax highlighting:
    at a thousand entries and their runbooks those two would cost more than the rest of the build together.
    put() returns a marker paragraph for the Markdown; fill() swaps the rendered marker for the block.
    Material still gives every such pre > code block its copy button, and search still indexes it.
    The marker carries a random nonce drawn per page and build: entry text that spells a marker stays text and
    cannot pull in another block."""

    def __init__(self):
        self.blocks: list[str] = []
        self._tag = "ERRBOOKRAW" + secrets.token_hex(12)           # letters and digits only: Markdown keeps them
        self._re = re.compile(rf"(?:<p>)?{self._tag}N(\d+)X(?:</p>)?")

    @property
    def tag(self) -> str:
        """This page's marker prefix (the nonce included)."""
        return self._tag

    def put(self, block_html: str) -> str:
        self.blocks.append(block_html)
        return f"{self._tag}N{len(self.blocks) - 1}X"

    def fill(self, page_html: str) -> str:
        return self._re.sub(lambda m: self.blocks[int(m.group(1))] if int(m.group(1)) < len(self.blocks) else "",
                            page_html)
