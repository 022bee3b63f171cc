"""The page of one executed runbook: its outcome per tier, a link back to the entry, then the notebook's cells
with their outputs, truncated for the page (the full notebook is downloadable). Nothing in a notebook is trusted:
Markdown cells are rebuilt from inert pieces and code and outputs are escaped, pre-rendered blocks."""
from __future__ import annotations

import html
import re

from errbook.machine import fingerprint
from errbook.web import addresses
from errbook.web.escape import RawBlocks, code_span, fence, front_matter, inline, link, pre, url
from errbook.web.refs import rel_entry_link
from errbook.web.status import TIER_ORDER, badge

RUN_OUTPUT_LINES = 150          # per output
RUN_OUTPUT_CHARS = 12_000       # per output
RUN_PAGE_CHARS = 200_000        # all outputs of one page
RUN_SOURCE_CHARS = 20_000       # per code cell
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


def _safe_markdown_cell(src: str, skip_h1: bool) -> str:
    """A notebook's Markdown cell, rebuilt from inert pieces: headings, list items, paragraphs, code blocks;
    code spans, **bold** and https links survive, raw HTML and everything else is shown as text."""
    out: list[str] = []
    para: list[str] = []

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


def run_page(name: str, nb: dict | None, rec: dict | None, entry, problem: str, nb_link: str | None,
             raw: RawBlocks) -> str:
    """The page of the executed notebook `name` (its stem): `rec` is the ledger record that names it (or None),
    `entry` its entry (or None), `problem` why the notebook is not shown, `nb_link` the download (None: too
    large to publish). Code and outputs go to `raw` (pre-rendered, no highlighting)."""
    md = _run_header(name, rec, entry)
    if nb_link:
        md.append(f"[:material-download: The executed notebook]({url(nb_link)}){{ .md-button }}\n")
    else:
        md.append("The executed notebook is too large to publish; the page shows its beginning.\n")
    if problem:
        md.append(f'!!! danger "Notebook not shown"\n    {inline(problem)}\n')
    if nb:
        md += _cells(nb, raw)
    return "\n".join(md) + "\n"


def checks_ran(tiers: dict) -> tuple[int, int]:
    """(checks of the tiers that ran, checks of all tiers): a tier that ran passed or failed; a skipped one did not
    run, whatever it holds (a page whose checks were mostly skipped says so first)."""
    ran = total = 0
    for v in tiers.values():
        n = v.get("checks") if isinstance(v, dict) else None
        if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
            total += n
            ran += n if v.get("outcome") in ("passed", "failed") else 0
    return ran, total


def _run_header(name: str, rec: dict | None, entry) -> list[str]:
    """Title, the entry it belongs to, and the outcome per tier (or that no ledger record names the notebook)."""
    eid = str((rec or {}).get("entry") or (entry.id if entry else name.split("--")[0]))
    raw_fp = (rec or {}).get("fingerprint")
    fp = raw_fp if isinstance(raw_fp, dict) else {}
    where = str((rec or {}).get("platform_label") or (fingerprint.label(fp) if rec else name.split("--", 1)[-1]))
    date = str((rec or {}).get("date", ""))[:10]
    title = f"{eid} on {where}" + (f", {date}" if date else "")
    md = [front_matter({"title": html.escape(title), "search": {"exclude": True}}), f"# {inline(title)}\n"]
    if entry is not None:
        md.append(f"Executed runbook of {rel_entry_link(entry.id, entry['title'], addresses.RUNS_DIR)}.\n")
    if not rec:
        md.append("!!! warning \"No ledger record\"\n    No record in `runbooks/ledger.jsonl` names this notebook.\n")
        return md
    raw_tiers = rec.get("tiers")
    tiers = raw_tiers if isinstance(raw_tiers, dict) else {}
    badges = []
    for t, v in sorted(tiers.items(), key=lambda kv: TIER_ORDER.index(kv[0]) if kv[0] in TIER_ORDER else 9):
        v = v if isinstance(v, dict) else {}
        oc = str(v.get("outcome", ""))
        checks = f" ({v.get('passed', 0)}/{v.get('checks')} checks)" if isinstance(v.get("checks"), int) else ""
        badges.append(badge(oc, f"{t}: {oc}{checks}"))
    md.append(" ".join(badges) + "\n")
    ran, total = checks_ran(tiers)
    if total:
        md.append(f"**{ran} of {total} checks ran** on this machine"
                  + ("; the others were skipped, each with its reason below." if ran < total else ".") + "\n")
    secs = f" · {float(rec['seconds']):.1f} s" if isinstance(rec.get("seconds"), (int, float)) else ""
    md.append(f"Outcome **{inline(rec.get('outcome', ''))}** · commit "
              f"{code_span(str(rec.get('commit', ''))[:12]) or '—'}"
              f" · {inline(where)}" + secs + "\n")
    skipped = [(t, v.get("reason", "")) for t, v in tiers.items()
               if isinstance(v, dict) and v.get("outcome") == "skipped"]
    if skipped:
        md.append('??? info "Skipped here, and why"\n'
                  + "".join(f"    - **{inline(t)}**: {inline(r)}\n" for t, r in skipped))
    return md


def _cells(nb: dict, raw: RawBlocks) -> list[str]:
    """The notebook's Markdown cells (rebuilt inert) and code cells with their outputs, within RUN_PAGE_CHARS."""
    md: list[str] = []

    def put(text: str, cls: str, lang: str = "") -> None:
        md.append(raw.put(pre(text, cls, lang)) + "\n")

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
        budget = _outputs(cell, budget, put, md)
    if budget <= 0:
        md.append("!!! note \"Page truncated\"\n    This runbook printed more than the page shows; the rest is in the "
                  "executed notebook.\n")
    return md


def _outputs(cell: dict, budget: int, put, md: list[str]) -> int:
    """A code cell's outputs, truncated; returns what is left of the page's budget."""
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
    return budget
