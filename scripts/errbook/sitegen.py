"""Entry -> Markdown page generation. The only module that knows how pages look.

Kept free of MkDocs imports (mkdocs_plugin.py adapts it), so a move to another generator (Zensical) only
replaces the adapter. Every string that comes from an entry, the ledger or an executed notebook is escaped
here: they are data, not markup.

Pages use Material for MkDocs building blocks (admonitions, content tabs, buttons, tables, tags); the little
raw HTML left is status badges (coloured, always labelled in words) and the filter mount of index tables.
"""
from __future__ import annotations

import html
import json
import re
import secrets
from collections import Counter
from dataclasses import dataclass

from . import addresses, platform, regexsubset

CLASSES = {
    "compile": ("Compile time", "编译期", "Builds, headers, linkers, toolchains, extension wheels."),
    "runtime": ("Runtime", "运行时", "Devices, drivers, containers, memory, streams, collectives."),
    "performance": ("Performance and numerics", "性能与数值", "Kernels, matrix cores, precision, tuning, profiling."),
}
TIER_ORDER = ("static", "toolchain", "gpu", "rocm")
# Outcomes a badge knows; its glyph (✓ ✗ …) comes from errbook.css, so thousands of badges add no inline SVG
# to the pages and no work to Markdown.
OUTCOMES = ("passed", "failed", "error", "crashed", "timeout", "skipped")
BAD = ("failed", "error", "crashed", "timeout")
RUNS_DIR = "verification/runs"              # executed runbooks, below docs/
FIX_ANCHOR = addresses.FIX_ANCHOR

# Search: entry pages rank above the hand-written pages that mention the same words. Index pages (all
# entries, classes, matrix, corrections) only repeat what entry pages say: they stay out of the index.
ENTRY_SEARCH_BOOST = 4


@dataclass(frozen=True)
class Links:
    """Where the source lives, for 'edit this page' and runbook links (from mkdocs.yml's repo_url)."""
    repo_url: str = ""
    branch: str = "main"

    def blob(self, path: str) -> str:
        return f"{self.repo_url.rstrip('/')}/blob/{self.branch}/{path}" if self.repo_url else ""


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


def _code_span(s: str) -> str:
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
        out.append(_code_span(m.group(1)))
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


def entry_uri(eid: str) -> str:
    return addresses.entry_src(eid)


def rel_entry_link(eid: str, title: str, from_dir: str) -> str:
    depth = from_dir.count("/") + 1 if from_dir else 0
    return link(f"{eid} · {title}", "../" * depth + entry_uri(eid))


# --- what an entry says in one line ------------------------------------------------------------------------

_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])|(?<=[。！？；])")


def _outside_code(s: str):
    """(start, end) spans of s that are not inside `code`."""
    pos = 0
    for m in re.finditer(r"`[^`]*`", s):
        yield pos, m.start()
        pos = m.end()
    yield pos, len(s)


def first_sentences(text, limit: int = 220, most: int = 99) -> str:
    """The leading sentence(s) (at most `most`) of prose that fit in `limit` characters (never cut inside a
    code span); a single sentence longer than the limit is cut at a word and ends with an ellipsis."""
    s = " ".join(str(text).split())
    cuts = []
    for a, b in _outside_code(s):
        for m in _SENT_END.finditer(s, a, b):
            if not re.search(r"\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|no)\.$", s[:m.start()]):
                cuts.append(m.start())
    cuts.append(len(s))
    best = cuts[0]
    for c in cuts[:most]:
        if c <= limit:
            best = c
    out = s[:best].strip()
    if len(out) <= limit:
        return out
    cut = out[:limit]
    if cut.count("`") % 2:                       # do not leave an open code span
        cut = cut[:cut.rfind("`")]
    cut = cut[:cut.rfind(" ")] if " " in cut[limit // 2:] else cut
    return cut.rstrip(" ,;:") + " …"


def cause_line(d: dict) -> str:
    """The cause in one line: `cause`, else the summary's first sentence."""
    return first_sentences(d.get("cause") or d["summary"], 240, most=1)


def cause_line_zh(d: dict) -> str:
    return first_sentences(d.get("cause_zh") or d["summary_zh"], 160, most=1)


def fix_code(step: dict) -> tuple[str, str] | None:
    """(lang, code) a reader runs for a fix step: the corrected ('after') version, or the snippet."""
    c = step.get("code") or {}
    code = c.get("after") or c.get("snippet")
    return (c.get("lang", "text"), code) if code else None


# --- error identifiers (what a reader types into search) ----------------------------------------------------

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _identifier_like(a: str) -> bool:
    """hipErrorNoDevice, HIP_VISIBLE_DEVICES: an identifier a program prints, not a slug (seed-001-x)."""
    return bool(_IDENT.match(a)) and bool(re.search(r"[a-z][A-Z]|[A-Za-z]_[A-Za-z]", a))


def public_aliases(d: dict) -> list[str]:
    """Aliases worth showing: internal note ids (seed-NNN-...) mean nothing to a reader."""
    return [a for a in d.get("aliases") or [] if not re.match(r"(?i)seed[-_]", a)]


def _signatures_by_priority(d: dict) -> list[dict]:
    sigs = list(d.get("signatures") or [])
    return sorted(sigs, key=lambda s: -int(s.get("priority", 1)))     # stable: file order on ties


def _literal_chars(pattern: str) -> int:
    try:
        return regexsubset.check(pattern)["literal_chars"]
    except Exception:           # validate reports bad patterns; here it only orders the steps
        return 0


def _matched_text(sig: dict) -> str:
    """The text the signature matched in its first real example: the error message as a program prints it."""
    steps = sig.get("sequence") or [sig.get("pattern", "")]
    examples = sig.get("examples") or []
    if not examples:
        return ""
    lines = str(examples[0].get("text", "")).splitlines()
    for p in sorted(steps, key=_literal_chars, reverse=True):   # the step with most literal text is the most specific
        try:
            rx = re.compile(p, re.I if sig.get("ignore_case") else 0)
        except re.error:
            continue
        for line in lines:
            m = rx.search(line)
            if m and m.group(0).strip():
                return " ".join(m.group(0).split())
    return ""


def error_texts(d: dict, n: int = 3) -> list[str]:
    """Distinct real error texts of the entry's most specific signatures (at most n, each ≤ 120 chars)."""
    out: list[str] = []
    for s in _signatures_by_priority(d):
        t = _matched_text(s)
        if len(t) > 120:
            t = t[:120].rsplit(" ", 1)[0]
        if t and t not in out and len(t) >= 4:
            out.append(t)
        if len(out) >= n:
            break
    return out


def primary_identifier(d: dict) -> str:
    """The one string an on-call engineer would search for: the first identifier-like alias (a name the
    program prints, e.g. hipErrorNoBinaryForGpu), else the text the highest-priority signature matched in its
    first real example, trimmed to at most 8 words."""
    for a in public_aliases(d):
        if _identifier_like(a):
            return a
    texts = error_texts(d, 1)
    if texts:
        words = texts[0].split()
        return " ".join(words[:8])
    return d["title"]


# --- applies to / reviewed ------------------------------------------------------------------------------------

COMPONENTS = {"rocm": "ROCm", "hip": "HIP", "pytorch": "PyTorch", "rocblas": "rocBLAS", "hipblaslt": "hipBLASLt",
              "rccl": "RCCL", "miopen": "MIOpen", "flash-attention": "FlashAttention", "vllm": "vLLM",
              "triton": "Triton", "llvm": "LLVM", "tensorflow-rocm": "TensorFlow (ROCm)", "llama.cpp": "llama.cpp",
              "hipcc": "hipcc", "amdgpu": "amdgpu driver", "jax": "JAX", "onnxruntime": "ONNX Runtime"}
_OPS = {">=": "from {}", ">": "after {}", "<": "before {}", "<=": "up to {}", "==": "{}", "=": "{}",
        "!=": "not {}", "~=": "compatible with {}"}


def version_words(rng: str) -> str:
    """'>=6.0, <6.2' -> 'from 6.0, before 6.2'; 'any' -> 'any version'."""
    rng = str(rng).strip()
    if rng in ("", "any"):
        return "any version"
    parts = [p.strip() for p in rng.split(",") if p.strip()]
    ops = [re.match(r"(>=|<=|==|!=|~=|>|<|=)\s*(.+)", p) for p in parts]
    if all(ops):
        pairs = [(m.group(1), m.group(2)) for m in ops]
        d = dict(pairs)
        if len(pairs) == 2 and ">=" in d and "<=" in d:
            return f"{d['>=']}–{d['<=']}"
        return ", ".join(_OPS[o].format(v) for o, v in pairs)
    return rng


def component_name(c: str) -> str:
    return COMPONENTS.get(c, c)


def applies_phrases(d: dict) -> list[str]:
    """Plain-words version ranges ('ROCm from 6.0, before 6.2 (changed in 6.2)'); from `applies_to` when the
    entry has it, else from its triggers. fixed_in is the release whose change ends the range: a fix, or a
    change of route (RMN-0161), so the page says 'changed', and the evidence says which."""
    out = []
    for a in d.get("applies_to") or []:
        s = f"{component_name(a['component'])} {version_words(a['versions'])}"
        if a.get("fixed_in"):
            s += f" (changed in {a['fixed_in']})"
        out.append(s)
    if out:
        return out
    t = d.get("triggers") or {}
    rv = [v for v in t.get("rocm_versions", []) if v]
    if rv:
        out.append("ROCm " + "; ".join(version_words(v) for v in rv))
    archs = [a for a in t.get("gpu_archs", []) if a != "any"]
    if archs:
        out.append("GPU " + ", ".join(archs))
    return out


def applies_line(d: dict) -> str:
    parts = []
    ph = applies_phrases(d)
    if ph:
        parts.append("Applies to " + inline("; ".join(ph)))
    if d.get("reviewed"):
        parts.append(f"reviewed {inline(d['reviewed'])}")
    else:
        parts.append(f"updated {inline(str(d['modified'])[:10])}")
    return " · ".join(parts)


def entry_rocm_tokens(d: dict) -> list[str]:
    for a in d.get("applies_to") or []:
        if a["component"] == "rocm":
            return [version_words(a["versions"])]
    rv = (d.get("triggers") or {}).get("rocm_versions") or []
    return [version_words(v) for v in rv] or ["any version"]


def entry_arch_tokens(d: dict) -> list[str]:
    return list((d.get("triggers") or {}).get("gpu_archs") or []) or ["any"]


# --- verification status --------------------------------------------------------------------------------------

def _outcome_class(outcome) -> str:
    return outcome if outcome in OUTCOMES else "none"


def badge(outcome, label: str, target: str = "") -> str:
    """A status badge: colour from a fixed set of classes, the words always in the label (never colour alone);
    with a target (a docs-relative .md path) it is a Markdown link, which MkDocs checks and resolves."""
    cls = _outcome_class(outcome)
    # data-search-exclude: status words (passed, CPU, GPU) on every page would only add noise to search.
    # <small>, not <span>: Material's indexer ends an exclusion at the first closing tag of the same name.
    out = f'<small class="eb-badge eb-{cls}" data-search-exclude>{inline(label)}</small>'
    return f"[{out}]({url(target)})" if target else out


def tier_platform(tier: str, fp: dict, label: str, short: bool = False) -> str:
    """Where a tier ran, in the words a badge uses: "CUDA · NVIDIA H200", "hipcc 5.2, Triton 3.9, no GPU"."""
    plat = fp.get("platform", "cpu")
    if plat == "cpu" and tier == "toolchain":
        m = re.search(r"HIP (\d+\.\d+)", str(fp.get("hipcc") or ""))
        tools = ([f"hipcc {m.group(1)}"] if m else []) + ([f"Triton {fp['triton']}"] if fp.get("triton") else [])
        return "no GPU" if short else ", ".join(tools + ["no GPU"])
    if short:
        return {"cuda": "CUDA", "rocm": "ROCm"}.get(plat, "CPU")
    return label


def tier_status(e, records_by_platform: dict, notebooks: frozenset = frozenset()) -> list[dict]:
    """For each tier the runbook declares: the evidence per platform (latest record per platform). `current`
    is true only for a record made at the entry's current content digest (the plugin marks it: verified.py)."""
    out = []
    for t in [x for x in TIER_ORDER if x in e["verification"]["tiers"]]:
        rows = []
        for key, rec in sorted(records_by_platform.items()):
            tr = (rec.get("tiers") or {}).get(t)
            if not isinstance(tr, dict):
                continue
            fp = rec.get("fingerprint") if isinstance(rec.get("fingerprint"), dict) else {}
            nb = str(rec.get("notebook", ""))
            label = str(rec.get("platform_label") or platform.label(fp))
            rows.append({"platform": label, "where": tier_platform(t, fp, label),
                         "where_short": tier_platform(t, fp, label, short=True),
                         "outcome": str(tr.get("outcome", "")), "reason": str(tr.get("reason", rec.get("reason", ""))),
                         "date": str(rec.get("date", ""))[:10], "commit": str(rec.get("commit", ""))[:10],
                         "notebook": nb, "fingerprint": fp, "has_nb": nb in notebooks,
                         "current": rec.get("current") is True})
        out.append({"tier": t, "rows": rows})
    return out


def tier_summary(e, records_by_platform: dict, short: bool = False) -> list[tuple[str, str, str]]:
    """(tier, outcome class, words) per declared tier, from records at the current digest only: passed
    somewhere beats failed beats not verified; a pass of an earlier version says so, with its date."""
    out = []
    for ts in tier_status(e, records_by_platform):
        t, rows = ts["tier"], ts["rows"]
        cur = [r for r in rows if r["current"]]
        passed = sorted({r["where_short" if short else "where"] for r in cur if r["outcome"] == "passed"})
        bad = [r for r in cur if r["outcome"] in BAD]
        earlier = sorted(r["date"] for r in rows if not r["current"] and r["outcome"] == "passed")
        if passed:
            out.append((t, "passed", f"{t}: passed ({', '.join(passed)})"))
        elif bad:
            out.append((t, bad[0]["outcome"], f"{t}: {bad[0]['outcome']}" + ("" if short else f" on {bad[0]['where']}")))
        elif earlier:
            out.append((t, "none", f"{t}: earlier version" if short else f"{t}: verified an earlier version ({earlier[-1]})"))
        elif cur:
            out.append((t, "skipped", f"{t}: not verified" + ("" if short else " (skipped)")))
        elif rows:
            out.append((t, "none", f"{t}: not run on this version" if not short else f"{t}: not run"))
        else:
            out.append((t, "none", f"{t}: not run yet"))
    return out


def status_badges(e, records_by_platform: dict, short: bool = False) -> str:
    return " ".join(badge(cls, words) for _, cls, words in tier_summary(e, records_by_platform, short))


def verification_state(e, records_by_platform: dict) -> str:
    """One word-group for filters: how far this entry's current version has been verified."""
    summ = tier_summary(e, records_by_platform)
    if any(cls in BAD for _, cls, _ in summ):
        return "failing"
    amd = any(r["outcome"] == "passed" and r["current"] and r["fingerprint"].get("platform") == "rocm"
              for ts in tier_status(e, records_by_platform) for r in ts["rows"])
    if amd:
        return "verified on AMD GPU"
    if any(cls == "passed" for _, cls, _ in summ):
        return "verified without AMD GPU"
    if any("earlier version" in words for _, _, words in summ):
        return "verified an earlier version"
    return "not run yet"


def run_page_uri(notebook: str) -> str:
    """docs/verification/runs/X.ipynb -> verification/runs/X.md (the executed-run page)."""
    stem = notebook.rsplit("/", 1)[-1]
    stem = stem[:-len(".ipynb")] if stem.endswith(".ipynb") else stem
    return f"{RUNS_DIR}/{stem}.md"


# --- pre-rendered blocks ---------------------------------------------------------------------------------------

def _pre(text: str, cls: str, lang: str = "") -> str:
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

    def put(self, block_html: str) -> str:
        self.blocks.append(block_html)
        return f"{self._tag}N{len(self.blocks) - 1}X"

    def fill(self, page_html: str) -> str:
        return self._re.sub(lambda m: self.blocks[int(m.group(1))] if int(m.group(1)) < len(self.blocks) else "",
                            page_html)


def _text_block(text: str, cls: str, raw: "RawBlocks | None", ind: str = "") -> str:
    """Plain text (a log, a pattern) as a block: pre-rendered when the adapter collects raw blocks, else fenced."""
    if raw is None:
        return fence(text, "text", ind)
    return ind + raw.put(_pre(text, cls))


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


def _prose(s, raw: "RawBlocks | None") -> str:
    """Prose paragraphs: pre-rendered (no Markdown inline pass over long text) when the adapter collects raw
    blocks, else Markdown. Plain paragraphs, lists and tables only; Material components stay Markdown."""
    return raw.put(prose_html(s)) if raw is not None else prose(s)


def _list(items, raw: "RawBlocks | None") -> str:
    if raw is not None:
        return raw.put("<ul>" + "".join(f"<li>{inline_html(x)}</li>" for x in items) + "</ul>")
    return "\n".join(f"- {inline(x)}" for x in items)


def _table(head: tuple, rows: list[tuple], raw: "RawBlocks | None") -> str:
    if raw is not None:
        return raw.put("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"
                       + "".join("<tr>" + "".join(f"<td>{inline_html(c)}</td>" for c in r) + "</tr>" for r in rows)
                       + "</tbody></table>")
    return "\n".join([f"| {' | '.join(head)} |", "|" + "---|" * len(head)]
                     + [f"| {' | '.join(inline(c) for c in r)} |" for r in rows])


# --- entry page -----------------------------------------------------------------------------------------------

def _fix_box(d: dict, e, records_by_platform: dict, raw: "RawBlocks | None" = None) -> str:
    steps = d["fix"]
    first = steps[0]
    n = len(steps)
    title = "Fix" + (f" — step 1 of {n}" if n > 1 else "")
    body = [inline(first_sentences(first["step"], 260))]
    code = fix_code(first)
    if code:       # plain (not highlighted) here: the Fix section below highlights it; Material adds the copy button
        body.append(raw.put(_pre(code[1].rstrip("\n"), "eb-fix-code", code[0])) if raw is not None else fence(code[1], code[0]))
    more = f"All {n} steps" if n > 1 else "Details"
    body.append(f'<div class="eb-fix-meta" data-search-exclude markdown>\n\n[{more} :material-arrow-down:](#{FIX_ANCHOR})'
                f"{{ .md-button .eb-fix-more }} {applies_line(d)}\n\n</div>")
    body.append(status_badges(e, records_by_platform, short=True))
    return f'!!! success eb-fix "{title}"\n\n' + indent("\n\n".join(body)) + "\n"


def _tabs(en: str, zh: str | None) -> str:
    """English / 中文 content tabs (linked across the page), or the English text alone."""
    if not zh:
        return en + "\n"
    return '=== "English"\n\n' + indent(en) + '\n\n=== "中文"\n\n' + indent(zh) + "\n"


def _step_md(i: int, text: str, step: dict) -> str:
    out = [f"{i}. {inline(text)}\n"]
    c = step.get("code")
    if c:
        if c.get("before") and c.get("after"):
            out.append('    === "Before"\n\n' + fence(c["before"], c["lang"], "        ") + "\n")
            out.append('    ===+ "After"\n\n' + fence(c["after"], c["lang"], "        ") + "\n")
        else:
            out.append(fence(c.get("snippet") or c["after"], c["lang"], "    ") + "\n")
    return "\n".join(out)


def _trigger_rows(t: dict) -> list[tuple[str, str]]:
    rows = []
    for v in t.get("rocm_versions", []):
        rows.append(("ROCm version", version_words(v)))
    if t.get("gpu_archs"):
        rows.append(("GPU architecture", ", ".join(t["gpu_archs"])))
    for f in t.get("frameworks", []):
        rows.append(("Framework", f"{f['name']} {version_words(f['versions']) if f.get('versions') else ''}".strip()))
    for v in t.get("env", []):
        rows.append(("Environment", f"`{v['name']}`: {v['condition']}"))
    for p in t.get("platform", []):
        rows.append((p["fact"].replace("-", " ").capitalize(), p["value"]))
    return rows


def entry_page(e, by_id: dict, records_by_platform: dict, notebooks: frozenset = frozenset(),
               links: Links = Links(), raw: RawBlocks | None = None) -> str:
    d = e.data
    cause = cause_line(d)
    # Themes print the front-matter title into <title> unescaped: escape it here.
    md = [front_matter({"title": html.escape(f"{d['id']} · {d['title']}"), "tags": d.get("tags", []),
                        "description": html.escape(cause[:300]), "search": {"boost": ENTRY_SEARCH_BOOST},
                        "hide": ["tags"]})]     # tags are listed below the fix box: the first screen is for the fix
    md.append(f"# {inline(d['title'])}\n")
    if d.get("withdrawn"):
        md.append(f'!!! danger "Withdrawn on {inline(str(d["withdrawn"])[:10])}"\n    This entry was withdrawn; '
                  "its id stays reserved.\n")
    md.append(f'<p class="eb-cause" markdown>{inline(cause)}</p>\n')
    md.append(_fix_box(d, e, records_by_platform, raw))

    # What the entry is called: the names and message fragments people search for, in the page's top section.
    names = [a for a in public_aliases(d) if _identifier_like(a)]      # slugs (tensile-library-dat) are ours, not a message
    texts = error_texts(d)
    meta = [f"**{d['id']}**", f"[{CLASSES[d['class']][0]}](../{addresses.class_src(d['class'])})"]
    if d.get("cosmetic"):
        meta.append("harmless message (cosmetic)")
    meta.append('<small data-search-exclude>tags: ' + ", ".join(inline(x) for x in d.get("tags", [])) + "</small>")
    md.append(" · ".join(meta) + "\n")
    if names or texts:
        md.append("Error text: " + " · ".join(_code_span(x) for x in dict.fromkeys([*names, *texts])) + "\n")
    md.append(_tabs(f"*{inline(d['title'])}*\n\n" + _prose(d["summary"], raw),
                    f"*{inline(d['title_zh'])}*\n\n" + (f"**原因：** {inline(cause_line_zh(d))}\n\n" if d.get("cause_zh") else "")
                    + _prose(d["summary_zh"], raw)))

    md.append("## Symptoms\n")
    md.append(_tabs(_list(d["symptoms"], raw), _list(d["symptoms_zh"], raw) if d.get("symptoms_zh") else None))

    md.append("### What the log says\n")
    md.append("Real log text first; `errbook triage` and the [paste-your-log page](../triage.md) match these lines.\n")
    for s in d["signatures"]:
        steps = s.get("sequence") or [s["pattern"]]
        ex = s["examples"][0]
        src = ex["source"]
        src_md = link("source", src) if src.startswith("https://") else inline(src)
        md.append(f"Example ({src_md}):\n")
        md.append(_text_block(ex["text"], "eb-log", raw) + "\n")
        kind = (f"ordered lines within {s.get('within', 50)} lines" if len(steps) > 1 else "one line")
        detail = [f"Signature `{s['id']}`: priority {s['priority']}, {kind}"
                  f"{', ignoring case' if s.get('ignore_case') else ''}.\n", _text_block("\n".join(steps), "eb-regex", raw)]
        for more in s["examples"][1:]:
            msrc = link("source", more["source"]) if more["source"].startswith("https://") else inline(more["source"])
            detail += [f"\nAnother example ({msrc}):\n", _text_block(more["text"], "eb-log", raw)]
        md.append('<div class="eb-pattern" data-search-exclude markdown>\n\n??? note "Pattern '
                  f'{inline(s["id"])}"\n\n' + indent("\n".join(detail)) + "\n\n</div>\n")

    md.append("## Triggers\n")
    t = d["triggers"]
    rows = _trigger_rows(t)
    if rows:
        md.append(_table(("Condition", "Value"), rows, raw) + "\n")
    md.append(_prose(t["explanation"], raw) + "\n")
    md.append(machine_checks_md(d))

    md.append("## Root cause\n")
    md.append(_prose(d["root_cause"], raw) + "\n")

    md.append(f"## Fix {{ #{FIX_ANCHOR} }}\n")
    en = "\n".join(_step_md(i, st["step"], st) for i, st in enumerate(d["fix"], 1))
    zh = None
    if any(st.get("step_zh") for st in d["fix"]):
        zh = "\n".join(_step_md(i, st.get("step_zh") or st["step"], st) for i, st in enumerate(d["fix"], 1))
    md.append(_tabs(en, zh))

    if d.get("corrects"):
        md.append("## Common advice this corrects\n")
        for c in d["corrects"]:
            md.append('!!! failure "What people believe"\n\n' + indent(_prose(c["belief"], raw)) +
                      f"\n\n    *Where it circulates:* {circulates(c)}\n")
            md.append('!!! success "What is true"\n\n' + indent(_prose(c["truth"], raw)) + "\n")
            md.append('!!! quote "Evidence"\n\n' + indent(_prose(c["evidence"], raw)) + "\n")

    # Sections that hold other entries' titles and platform tables stay out of the search index: they would
    # make this page match words that belong to other entries.
    md.append("## Verification { data-search-exclude }\n")
    ver = d["verification"]
    rb = ver["runbook"]
    rb_md = link(rb, links.blob(rb)) if links.repo_url else f"`{rb}`"
    md.append(f"Runbook: {rb_md} (tiers: {', '.join(ver['tiers'])}). Run it with "
              f"`errbook run {d['id']}`; add `--tier rocm` on an AMD machine.\n")
    md.append("| Tier | Platform | Outcome | Date | Commit | Executed run |\n|---|---|---|---|---|---|")
    any_rocm = False
    for ts in tier_status(e, records_by_platform, notebooks):
        if not ts["rows"]:
            md.append(f"| {ts['tier']} | — | {badge('none', 'not run yet')} | | | |")
        for r in ts["rows"]:
            any_rocm |= r["fingerprint"].get("platform") == "rocm"
            nb = r["notebook"]
            nb_md = link("open", "../" + run_page_uri(nb)) if r["has_nb"] else ""
            reason = f" — {inline(r['reason'][:160])}" if r["outcome"] != "passed" and r["reason"] else ""
            out_badge = badge(r["outcome"], r["outcome"]) if r["current"] else \
                badge("none", f"{r['outcome']} · earlier version")        # made before the entry last changed
            md.append(f"| {ts['tier']} | {inline(r['where'])} | {out_badge}{reason} "
                      f"| {inline(r['date'])} | {_code_span(r['commit']) if r['commit'] else ''} | {nb_md} |")
    if not any_rocm:
        md.append("\n!!! warning \"Not yet verified on AMD hardware\"\n    No run of this runbook on a ROCm GPU is "
                  "recorded. Checks of the rocm tier were skipped, not passed.\n")
    md.append("")

    md.append("## References\n")
    if raw is not None:         # external https links only: no link for MkDocs to resolve
        md.append(raw.put("<ul>" + "".join(
            f'<li><a href="{attr(url(r["url"]))}">{inline_html(r["title"])}</a> ({html.escape(r["kind"])})'
            + (f" — {inline_html(r['note'])}" if r.get("note") else "") + "</li>" for r in d["references"]) + "</ul>"))
    else:
        for r in d["references"]:
            note = f" — {inline(r['note'])}" if r.get("note") else ""
            md.append(f"- {link(r['title'], r['url'])} ({r['kind']}){note}")
    md.append("")
    rel = [x for x in d.get("related", []) if x in by_id]
    back = sorted(oid for oid, o in by_id.items() if d["id"] in (o.get("related") or []) and oid not in rel)
    if rel or back:
        md.append("## Related entries { data-search-exclude }\n")
        for x in rel + back:
            md.append(f"- {rel_entry_link(x, by_id[x]['title'], 'entries')}")
        md.append("")
    return "\n".join(md) + "\n"


def machine_checks_md(d: dict) -> str:
    """The checkable part of an entry's trigger in plain words (what `errbook doctor` tests), or why none is."""
    from . import checks
    t = d.get("triggers") or {}
    if t.get("checks"):
        md = ['!!! example "Checked on a machine: `errbook doctor` reports this entry when one of these holds"\n']
        for c in t["checks"]:
            conds = "; ".join(inline(checks.describe(x, code=True)) for x in c["when"])
            md.append(f"    - **{inline(c['says'])}** — when {conds}.")
        return "\n".join(md) + "\n\n    See [Check your machine](../doctor.md).\n"
    if t.get("not_checkable"):
        return '!!! note "Not checkable on a machine"\n    ' + inline(t["not_checkable"]) + "\n"
    return ""


def machine_checks_page(entries: list, vocab: dict) -> str:
    """Every machine check of every entry, and the facts they read."""
    from . import checks
    # The checks table repeats what each entry page says (machine_checks_md), so, like the other index pages, it
    # stays out of the search index: a query for an error name must find the entry, not this table. The facts
    # below are said only here and stay searchable.
    md = [front_matter({"title": "What errbook doctor checks"}), "# What `errbook doctor` checks\n",
          "The machine-checkable part of each entry's trigger, generated from the entries. A check holds when all "
          "its conditions hold; an entry applies when any of its checks holds. How to run it: "
          "[Check your machine](doctor.md).\n", "## Checks { data-search-exclude }\n",
          "| Entry | Finding | Conditions |", "|---|---|---|"]
    n = 0
    for e in sorted(entries, key=lambda x: x.id):
        for c in (e.get("triggers") or {}).get("checks") or []:
            n += 1
            conds = "<br>".join(inline(checks.describe(x, code=True)) for x in c["when"])
            md.append(f"| [{e.id}]({entry_uri(e.id)}) | {inline(c['says'])} | {conds} |")
    none = sorted(e.id for e in entries if (e.get("triggers") or {}).get("not_checkable"))
    md.append(f"\n{n} checks in {len({e.id for e in entries if (e.get('triggers') or {}).get('checks')})} entries. "
              f"Not machine-checkable (the trigger is in code, a build, a workload or a state no fact shows): "
              + ", ".join(f"[{i}]({entry_uri(i)})" for i in none) + ".\n")
    md.append("## Facts\n")
    md.append("What `errbook doctor --collect` records (`errbook doctor --list-facts` prints the same list). "
              "A fact that could not be collected is missing, and a check that needs it is reported as "
              "*could not check*, never as a finding.\n")
    md.append("| Fact | Type | Meaning and source |\n|---|---|---|")
    for name in sorted(vocab):
        if name.startswith("env."):
            continue
        md.append(f"| `{name}` | {vocab[name].type} | {inline(vocab[name].about)} |")
    envs = sorted(n[4:] for n in vocab if n.startswith("env."))
    md.append("\nEnvironment variables, each as `env.NAME` (a string, null when unset); no other variable is read: "
              + ", ".join(f"`{v}`" for v in envs) + ".\n")
    return "\n".join(md) + "\n"


def circulates(c: dict) -> str:
    """Where wrong advice circulates, in plain words (`circulates`; older entries only name a note section)."""
    if c.get("circulates"):
        return inline(c["circulates"])
    return "the team's old internal field notes (the notes this knowledge base replaces)"


def paste_meta(e) -> dict:
    """What a paste-page result card shows for an entry (the bundle's `entries` part)."""
    d = e.data
    first = d["fix"][0]
    code = fix_code(first)
    return {"title": d["title"], "title_zh": d["title_zh"], "cause": cause_line(d), "cause_zh": cause_line_zh(d),
            "fix": first_sentences(first["step"], 300), "fix_zh": first_sentences(first.get("step_zh") or "", 200),
            "code": code[1] if code else "", "lang": code[0] if code else "", "steps": len(d["fix"]),
            "cosmetic": bool(d.get("cosmetic"))}


# --- index pages --------------------------------------------------------------------------------------------------

FILTER_COLUMNS = ("Class", "Tags", "GPU", "ROCm", "Verified")


def _entry_table(entries: list, latest: dict, prefix: str) -> list[str]:
    md = ['<div class="eb-filter" data-columns="' + ",".join(FILTER_COLUMNS) + '"></div>\n',
          "| Entry | Title | Class | Tags | GPU | ROCm | Verified |", "|---|---|---|---|---|---|---|"]
    for e in sorted(entries, key=lambda x: x.id):
        d = e.data
        md.append(f"| [{e.id}]({prefix}{entry_uri(e.id)}) | {inline(d['title'])}<br>*{inline(d['title_zh'])}* | "
                  f"{e.klass} | {' · '.join(inline(t) for t in d['tags'])} | "
                  f"{' · '.join(inline(a) for a in entry_arch_tokens(d))} | "
                  f"{' · '.join(inline(v) for v in entry_rocm_tokens(d))} | "
                  f"{inline(verification_state(e, latest.get(e.id, {})))} |")
    return md


def class_page(klass: str, entries: list, latest: dict | None = None) -> str:
    name, zh, blurb = CLASSES[klass]
    md = [front_matter({"title": f"{name} problems", "search": {"exclude": True}}),
          f"# {name} · {zh}\n", f"{blurb}\n", f"{len(entries)} entries.\n"]
    md += _entry_table(entries, latest or {}, "../")
    return "\n".join(md) + "\n"


def overview_page(entries: list, latest: dict) -> str:
    counts = Counter(e.klass for e in entries)
    md = [front_matter({"title": "All entries", "search": {"exclude": True}, "hide": ["navigation", "toc"]}),
          "# All entries\n",
          " · ".join(f"[{CLASSES[k][0]}]({addresses.class_src(k)}): {counts.get(k, 0)}" for k in CLASSES) + "\n",
          "Filter by class, tag, GPU architecture, ROCm version or verification status; the text box searches "
          "every column.\n"]
    md += _entry_table(entries, latest, "")
    return "\n".join(md) + "\n"


def corrections_page(entries: list) -> str:
    # Out of search: each correction is also on its entry page, which search finds.
    md = [front_matter({"title": "Corrections of common advice", "search": {"exclude": True}}),
          "# Corrections of common advice · 常见错误说法的更正\n",
          "Advice that circulates in team notes and forums, checked against primary sources. Each item states the "
          "wrong advice, what is true, the evidence, and where the advice circulates; it links to the entry that "
          "holds the evidence and the runbook that demonstrates it.\n"]
    n = 0
    for e in sorted(entries, key=lambda x: x.id):
        for c in e.get("corrects") or []:
            n += 1
            md.append(f"## {n}. {inline(e['title'])}\n")
            md.append(f'!!! failure "The advice"\n' + indent(prose(c["belief"])) + "\n")
            md.append(f"*Where it circulates:* {circulates(c)}\n")
            md.append(f'!!! success "What is true"\n' + indent(prose(c["truth"])) + "\n")
            md.append(f"**Evidence.** {prose(c['evidence'])} — [{e.id}]({entry_uri(e.id)}), "
                      f"runbook `{e['verification']['runbook']}`.\n")
    if n == 0:
        md.append("No corrections recorded yet.\n")
    return "\n".join(md) + "\n"


# --- the verification matrix: the fleet -------------------------------------------------------------------------

def fleet_key(fp: dict) -> tuple:
    """Matrix column of a ledger record: (kind, architecture or GPU, software version)."""
    fp = fp if isinstance(fp, dict) else {}
    plat = fp.get("platform", "cpu")
    if plat == "rocm":
        return ("rocm", str(fp.get("arch") or fp.get("gpu") or "?"), str(fp.get("rocm") or fp.get("rocm_host") or "?"))
    if plat == "cuda":
        return ("cuda", str(fp.get("gpu") or "?"), "")
    return ("cpu", "", "")


def fleet_label(key: tuple) -> str:
    kind, what, ver = key
    if kind == "rocm":
        return f"{what} · ROCm {ver}"
    if kind == "cuda":
        return f"CUDA · {what}"
    return "CPU (no GPU)"


_KIND_ORDER = {"rocm": 0, "cuda": 1, "cpu": 2}


def fleet_latest(records: list[dict]) -> dict[str, dict[tuple, dict]]:
    """entry -> fleet column -> newest record (by date; later ledger lines win ties)."""
    out: dict[str, dict[tuple, dict]] = {}
    for r in records:
        if not isinstance(r, dict):
            continue
        k = fleet_key(r.get("fingerprint"))
        cur = out.setdefault(str(r.get("entry")), {}).get(k)
        if cur is None or str(r.get("date", "")) >= str(cur.get("date", "")):
            out[str(r.get("entry"))][k] = r
    return out


def matrix_page(entries: list, records: list[dict], problems: list[str], notebooks: frozenset = frozenset()) -> str:
    latest = fleet_latest(records)
    keys = sorted({k for per in latest.values() for k in per}, key=lambda k: (_KIND_ORDER.get(k[0], 9), k[1], k[2]))
    placeholder = not any(k[0] == "rocm" for k in keys)
    md = [front_matter({"title": "Verification matrix", "search": {"exclude": True}, "hide": ["navigation", "toc"]}),
          "# Verification matrix\n",
          "Every entry against every machine its runbook has run on — GPU architecture and ROCm version for AMD "
          "GPUs — from the verification ledger (`runbooks/ledger.jsonl`). Each cell is the latest run there: its "
          "outcome, date and a link to the executed runbook; the icons below it are the outcome per tier.\n",
          " ".join(badge(o, o) for o in ("passed", "failed", "crashed", "timeout", "skipped")) + " "
          + badge("none", "no run") + " " + badge("none", "earlier version") + "\n\n"
          "A run made before its entry's signatures, checks, fix or runbook last changed says *earlier version*: "
          "it is not evidence for the entry as it is now.\n"]
    if problems:
        md.append('!!! danger "Ledger problems"\n' + "".join(f"    - {inline(p)}\n" for p in problems))
    if placeholder:
        md.append('!!! warning "No AMD GPU in the fleet yet"\n    No run on a ROCm GPU is recorded: the column '
                  "*ROCm (AMD GPU)* stays empty until one is ([how to add a machine](../amd-hosts.md)).\n")
    heads = [inline(fleet_label(k)) for k in keys] + (["ROCm (AMD GPU)"] if placeholder else [])
    md.append("| Entry | " + " | ".join(heads) + " |")
    md.append("|---|" + "---|" * len(heads))
    for e in sorted(entries, key=lambda x: x.id):
        cells = []
        for k in keys:
            rec = latest.get(e.id, {}).get(k)
            if not rec:
                cells.append(badge("none", "no run"))
                continue
            outcome = str(rec.get("outcome", ""))
            nb = str(rec.get("notebook", ""))
            target = run_page_uri(nb)[len("verification/"):] if nb in notebooks else ""
            if rec.get("current") is not True:          # evidence about an earlier version of the entry
                outcome = "none" if outcome == "passed" else outcome
                label = f"{rec.get('outcome', '')} · earlier version"
            else:
                label = outcome or "unknown"
            tiers = rec.get("tiers") if isinstance(rec.get("tiers"), dict) else {}
            tier_txt = " ".join(f'<span class="eb-tier eb-{_outcome_class(v.get("outcome") if isinstance(v, dict) else "")}">'
                                f"{inline(t)}</span>" for t, v in sorted(tiers.items(), key=lambda kv: TIER_ORDER.index(kv[0])
                                                                    if kv[0] in TIER_ORDER else 9))
            cells.append(f"{badge(outcome, label, target)}<br>{inline(str(rec.get('date', ''))[:10])}"
                         f"<br><small>{tier_txt}</small>")
        if placeholder:
            cells.append(badge("none", "not yet"))
        md.append(f"| [{e.id}](../{entry_uri(e.id)}) {inline(e['title'])} | " + " | ".join(cells) + " |")
    return "\n".join(md) + "\n"


# --- executed runbook pages ---------------------------------------------------------------------------------------

RUN_OUTPUT_LINES = 150          # per output
RUN_OUTPUT_CHARS = 12_000       # per output
RUN_PAGE_CHARS = 200_000        # all outputs of one page
RUN_SOURCE_CHARS = 20_000       # per code cell
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


def _safe_markdown_cell(src: str, skip_h1: bool) -> str:
    """A notebook's Markdown cell, rebuilt from inert pieces: headings, list items, paragraphs, code blocks;
    code spans, **bold** and https links survive, raw HTML and everything else is shown as text."""
    out, para = [], []

    def flush():
        if para:
            out.append(_rich(" ".join(para)) + "\n")
            para.clear()

    lines = src.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)", line)
        if m:
            flush()
            close, body = m.group(1), []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(close):
                body.append(lines[i])
                i += 1
            out.append(fence("\n".join(body), (m.group(2) or "text").lower()) + "\n")
            i += 1
            continue
        h = re.match(r"^(#{1,6})\s+(.*)$", line)
        li = re.match(r"^\s*(?:[*+-]|\d+[.)])\s+(.*)$", line)
        if h:
            flush()
            if not (skip_h1 and len(h.group(1)) == 1):
                out.append(f"{'#' * max(2, len(h.group(1)))} {_rich(h.group(2))}\n")
        elif li:
            flush()
            out.append(f"- {_rich(li.group(1))}")
        elif not line.strip():
            flush()
            if out and out[-1].startswith("- "):
                out.append("")
        else:
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(out)


def _inline_spaced(s: str) -> str:
    """inline(), keeping one space where the fragment began or ended with whitespace."""
    core = inline(s)
    return (" " if s[:1].isspace() else "") + core + (" " if s[-1:].isspace() and core else "")


def _rich(s: str) -> str:
    """inline() plus **bold** and [text](https://...) links."""
    out, pos = [], 0
    for m in re.finditer(r"`[^`]+`|\*\*([^*]+)\*\*|\[([^\]]+)\]\((https://[^)\s]+)\)", s):
        out.append(_inline_spaced(s[pos:m.start()]))
        if m.group(0).startswith("`"):
            out.append(inline(m.group(0)))
        elif m.group(1) is not None:
            out.append(f"**{inline(m.group(1))}**")
        else:
            out.append(link(m.group(2), m.group(3)))
        pos = m.end()
    out.append(_inline_spaced(s[pos:]))
    return "".join(out).strip()


def _output_text(o: dict) -> str:
    t = o.get("output_type")
    if t == "stream":
        txt = o.get("text", "")
    elif t in ("execute_result", "display_data"):
        data = o.get("data") or {}
        txt = data.get("text/plain", "")
        if not txt and data:
            return f"[{', '.join(sorted(map(str, data)))} output not shown]"
    elif t == "error":
        txt = "\n".join(o.get("traceback") or [f"{o.get('ename', '')}: {o.get('evalue', '')}"])
    else:
        return ""
    txt = "".join(txt) if isinstance(txt, list) else str(txt)
    return _ANSI.sub("", txt)


def _truncate(txt: str, budget: int) -> tuple[str, str]:
    """(shown text, note) within the per-output limits and what is left of the page budget."""
    lines = txt.split("\n")
    cap = min(RUN_OUTPUT_CHARS, budget)
    shown, size = [], 0
    for ln in lines[:RUN_OUTPUT_LINES]:
        if size + len(ln) + 1 > cap:
            break
        shown.append(ln)
        size += len(ln) + 1
    if len(shown) == len(lines):
        return txt, ""
    if not shown and lines:
        shown = [lines[0][:max(0, cap)]]
    rest = len(lines) - len(shown)
    return "\n".join(shown), f"{rest:,} more line{'s' if rest != 1 else ''} ({len(txt) - size:,} characters) not shown"


def run_page(name: str, nb: dict | None, rec: dict | None, entry, problem: str = "",
             nb_link: str | None = None, raw: RawBlocks | None = None) -> str:
    """The page of one executed runbook: title, outcome per tier as badges, link back to the entry, then the
    notebook's cells with their outputs (truncated for the page; the full notebook is downloadable). Code and
    outputs go to `raw` (pre-rendered, no highlighting) when given."""
    eid = str((rec or {}).get("entry") or (entry.id if entry else name.split("--")[0]))
    fp = (rec or {}).get("fingerprint") if isinstance((rec or {}).get("fingerprint"), dict) else {}
    where = str((rec or {}).get("platform_label") or (platform.label(fp) if rec else name.split("--", 1)[-1]))
    date = str((rec or {}).get("date", ""))[:10]
    title = f"{eid} on {where}" + (f", {date}" if date else "")
    md = [front_matter({"title": html.escape(title), "search": {"exclude": True}}), f"# {inline(title)}\n"]
    if entry is not None:
        md.append(f"Executed runbook of {rel_entry_link(entry.id, entry['title'], RUNS_DIR)}.\n")
    if rec:
        tiers = rec.get("tiers") if isinstance(rec.get("tiers"), dict) else {}
        badges = []
        for t, v in sorted(tiers.items(), key=lambda kv: TIER_ORDER.index(kv[0]) if kv[0] in TIER_ORDER else 9):
            v = v if isinstance(v, dict) else {}
            oc = str(v.get("outcome", ""))
            checks = f" ({v.get('passed', 0)}/{v.get('checks')} checks)" if isinstance(v.get("checks"), int) else ""
            badges.append(badge(oc, f"{t}: {oc}{checks}"))
        md.append(" ".join(badges) + "\n")
        md.append(f"Outcome **{inline(rec.get('outcome', ''))}** · commit {_code_span(str(rec.get('commit', ''))[:12]) or '—'}"
                  f" · {inline(where)}" + (f" · {float(rec['seconds']):.1f} s" if isinstance(rec.get("seconds"), (int, float)) else "") + "\n")
        skipped = [(t, v.get("reason", "")) for t, v in tiers.items() if isinstance(v, dict) and v.get("outcome") == "skipped"]
        if skipped:
            md.append('??? info "Skipped here, and why"\n' + "".join(f"    - **{inline(t)}**: {inline(r)}\n" for t, r in skipped))
    else:
        md.append("!!! warning \"No ledger record\"\n    No record in `runbooks/ledger.jsonl` names this notebook.\n")
    if nb_link:
        md.append(f"[:material-download: The executed notebook]({url(nb_link)}){{ .md-button }}\n")
    else:
        md.append("The executed notebook is too large to publish; the page shows its beginning.\n")
    if problem:
        md.append(f'!!! danger "Notebook not shown"\n    {inline(problem)}\n')
    if not nb:
        return "\n".join(md) + "\n"

    def put(text: str, cls: str, lang: str = "") -> None:
        md.append((raw.put(_pre(text, cls, lang)) if raw is not None else fence(text, lang or "text")) + "\n")

    budget = RUN_PAGE_CHARS
    first_md = True
    for cell in nb.get("cells") or []:
        if not isinstance(cell, dict):
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else str(src)
        if cell.get("cell_type") == "markdown":
            md.append(_safe_markdown_cell(src, skip_h1=first_md))
            first_md = False
            continue
        if cell.get("cell_type") != "code" or budget <= 0:
            continue
        shown = src if len(src) <= RUN_SOURCE_CHARS else src[:RUN_SOURCE_CHARS] + "\n# … (cell truncated for the page)"
        put(shown, "eb-src", "python")
        for o in cell.get("outputs") or []:
            if not isinstance(o, dict):
                continue
            txt = _output_text(o)
            if not txt.strip():
                continue
            if budget <= 0:
                break
            text, note = _truncate(txt.rstrip("\n"), budget)
            budget -= len(text)
            put(text, "eb-out")
            if note:
                md.append(f"*Output truncated for the page: {note}.*\n")
    if budget <= 0:
        md.append("!!! note \"Page truncated\"\n    This runbook printed more than the page shows; the rest is in the "
                  "executed notebook.\n")
    return "\n".join(md) + "\n"


def schema_page(schema: dict) -> str:
    return (front_matter({"title": "Entry schema"}) + "# Entry schema (version 1)\n\n"
            "The JSON Schema below is the single definition of an entry; `errbook validate` applies it plus "
            "cross-checks. Download: [entry-1.schema.json](entry-1.schema.json).\n\n"
            + fence(json.dumps(schema, indent=2, ensure_ascii=False), "json") + "\n")


def expand_refs(markdown: str, by_id: dict, page_dir: str, links: Links = Links()) -> tuple[str, list[str]]:
    """[[RMN-0001]] in hand-written pages becomes a link with the entry's title, [[repo]] a link to the
    repository; unknown ids are reported. Code (fenced blocks and `spans`) is left as written, so pages can
    show the syntax itself."""
    unknown: list[str] = []

    def sub(m):
        if m.group(0) == "[[repo]]":
            return link(links.repo_url, links.repo_url) if links.repo_url else "the project's repository"
        eid = m.group(1)
        if eid not in by_id:
            unknown.append(eid)
            return m.group(0)
        return rel_entry_link(eid, by_id[eid]["title"], page_dir)

    out, in_fence = [], None
    for line in markdown.split("\n"):
        f = re.match(r"^\s*(`{3,}|~{3,})", line)
        if in_fence:
            if f and f.group(1)[0] == in_fence[0] and len(f.group(1)) >= len(in_fence):
                in_fence = None
            out.append(line)
            continue
        if f:
            in_fence = f.group(1)
            out.append(line)
            continue
        parts = re.split(r"(`+[^`]*`+)", line)
        out.append("".join(p if p.startswith("`") else re.sub(r"\[\[(RMN-\d{4})\]\]|\[\[repo\]\]", sub, p)
                           for p in parts))
    return "\n".join(out), unknown
