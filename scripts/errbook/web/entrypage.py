"""An entry's page, section by section: one function per section, assembled by entry_page in reading order.

Kept free of MkDocs imports (plugin.py adapts it), so a move to another generator (Zensical) only replaces the
adapter. Every string that comes from an entry or the ledger is escaped (escape.py): they are data, not markup.
Pages use Material for MkDocs building blocks (admonitions, content tabs, buttons, tables, tags); the little raw
HTML left is status badges (coloured, always labelled in words). Long text (real logs, patterns, prose, lists,
tables, references) goes through the page's RawBlocks: pre-rendered HTML that skips the Markdown pass.

Each section returns the page's lines (joined with newlines): to change the layout, change or reorder them in
entry_page.
"""
from __future__ import annotations

import html

from errbook.machine import checks
from errbook.web import addresses, fixbox, uitext
from errbook.web.escape import (
    RawBlocks,
    attr,
    code_span,
    front_matter,
    indent,
    inline,
    inline_html,
    link,
    pre,
    prose_html,
    url,
)
from errbook.web.phrases import (
    CLASSES,
    cause_line,
    cause_line_zh,
    circulates,
    error_texts,
    identifier_like,
    public_aliases,
    version_words,
)
from errbook.web.refs import Links, rel_entry_link
from errbook.web.status import badge, tier_status

FIX_ANCHOR = addresses.FIX_ANCHOR
fix_box = fixbox.fix_box      # the first screen's box (web/fixbox.py), kept importable from here
# The reader's language, English or 中文 (assets/lang.js shows it; without script the page stays English): the
# same choice as the page's English/中文 tabs.
LANG_SWITCH = ('<div class="eb-langswitch" role="group" aria-label="Language / 语言" data-search-exclude hidden>'
               '<button type="button" data-eb-lang="en">English</button>'
               f'<button type="button" data-eb-lang="zh" lang="{fixbox.ZH}">中文</button></div>\n')
# Search: entry pages rank above the hand-written pages that mention the same words. Index pages (all
# entries, classes, matrix, corrections) only repeat what entry pages say: they stay out of the index.
ENTRY_SEARCH_BOOST = 4
# A cosmetic entry (`cosmetic: true`) says a message is harmless (RMN-0419's "Could not detect ROCm GPU
# architecture"): its own words still find it, but a generic query ("rocm unable to detect gpu") is about a failure
# and should reach the causes first. 1.5, measured with Material's worker on the built site (2026-12-07): at 2
# RMN-0419 still came above RMN-0099 for that query; at 1 RMN-0200 lost the top 3 for its own message.
COSMETIC_SEARCH_BOOST = 1.5


def search_boost(d: dict) -> float:
    """The page's search boost: ENTRY_SEARCH_BOOST, or COSMETIC_SEARCH_BOOST for an entry of harmless messages."""
    return COSMETIC_SEARCH_BOOST if d.get("cosmetic") is True else ENTRY_SEARCH_BOOST


def entry_page(e, by_id: dict, records_by_platform: dict, notebooks: frozenset, links: Links, raw: RawBlocks,
               draft: str | None = None, note: str = "") -> str:
    """draft: why the entry is a draft (kb/drafts.py), shown in a banner under the title; None for a finished one.
    note: Markdown shown under the fix box (the messages this entry is one cause of, web/messagepage.py): the first
    screen stays the fix's."""
    d = e.data
    md = _header(d)
    if draft:
        md.insert(2, f'!!! warning "Draft"\n    This entry is a draft ({inline(draft)}): `errbook serve` previews it; '
                     "the published site, the paste page and triage leave it out until it is finished "
                     "(`errbook validate --strict` lists what is left).\n")
    md.append(fixbox.fix_box(d, e, records_by_platform, raw))
    md += [note] if note else []
    md += _names(d)
    md.append(_tabs(f"*{inline(d['title'])}*\n\n" + raw.put(prose_html(d["summary"])),
                    f"*{inline(d['title_zh'])}*\n\n"
                    + (f"**原因：** {inline(cause_line_zh(d))}\n\n" if d.get("cause_zh") else "")
                    + raw.put(prose_html(d["summary_zh"]))))
    md += _symptoms(d, raw)
    md += _log_text(d, raw)
    md += _triggers(d, raw)
    md += ["## Root cause\n", raw.put(prose_html(d["root_cause"])) + "\n"]
    md += fixbox.fix_steps(d)
    md += _corrections(d, raw)
    # Sections that hold other entries' titles and platform tables stay out of the search index: they would
    # make this page match words that belong to other entries.
    md += _verification(d, e, records_by_platform, notebooks, links)
    md += _references(d, raw)
    md += _related(d, by_id)
    return "\n".join(md) + "\n"


def _header(d: dict) -> list[str]:
    """Front matter, title, the withdrawn notice and the cause in one line."""
    cause = cause_line(d)
    # Themes print the front-matter title into <title> unescaped: escape it here.
    md = [front_matter({"title": html.escape(f"{d['id']} · {d['title']}"), "tags": d.get("tags", []),
                        "description": html.escape(cause[:300]), "search": {"boost": search_boost(d)},
                        "hide": ["tags"]})]     # tags are listed below the fix box: the first screen is for the fix
    zh = d.get("title_zh")
    md.append(_title(d, zh_too=bool(zh)))     # first: the search's top
    if zh:      # shown instead of the h1 when the reader chose 中文 (assets/lang.js); its text is in the 中文 tab too
        md.append(f'<p class="eb-zh eb-title-zh" lang="{fixbox.ZH}" role="heading" aria-level="1" data-search-exclude '
                  f'markdown>{inline(zh)}</p>\n')
        md.append(LANG_SWITCH)
    if d.get("withdrawn"):
        md.append(f'!!! danger "Withdrawn on {inline(str(d["withdrawn"])[:10])}"\n    This entry was withdrawn; '
                  "its id stays reserved.\n")
    md.append(f'<p class="eb-cause" markdown>{inline(cause)}</p>\n')
    if d.get("cause_zh"):
        md.append(f'<p class="eb-cause eb-zh" lang="{fixbox.ZH}" data-search-exclude markdown>'
                  f"{inline(cause_line_zh(d))}</p>\n")
    return md


def _title(d: dict, zh_too: bool) -> str:
    """The h1 (English only when a Chinese title replaces it in 中文 mode). With title_short, phones show the short
    title as the heading and the full one under it (CSS picks by width; the short one is out of the search index,
    so the entry ranks as before)."""
    full = inline(d["title"])
    attr = " { .eb-en }" if zh_too else ""
    if not d.get("title_short"):
        return f"# {full}{attr}\n"
    short = inline(d["title_short"])
    under = "eb-title-under eb-en" if zh_too else "eb-title-under"
    return (f'# <span class="eb-title-full">{full}</span><span class="eb-title-short" data-search-exclude>{short}'
            f'</span>{attr}\n\n<p class="{under}" data-search-exclude markdown>{full}</p>\n')



def _names(d: dict) -> list[str]:
    """What the entry is called: the names and message fragments people search for, in the page's top section."""
    # slugs (tensile-library-dat) are ours, not a message
    names = [a for a in public_aliases(d) if identifier_like(a)]
    texts = error_texts(d)
    en, zh = uitext.NAMES["en"], uitext.NAMES["zh"]

    def words(key: str) -> str:     # the page's own words, in both languages (assets/lang.js shows one)
        return fixbox.pair(en[key], zh[key], search=False)
    cls = CLASSES[d["class"]]
    meta = [f"**{d['id']}**", f"[{fixbox.pair(cls[0], cls[1], search=False)}](../{addresses.class_src(d['class'])})"]
    if d.get("cosmetic"):
        meta.append(words("cosmetic"))
    meta.append('<small data-search-exclude>' + words("tags") + ", ".join(inline(x) for x in d.get("tags", []))
                + "</small>")
    md = [" · ".join(meta) + "\n"]
    if names or texts:
        md.append(words("error_text") + " · ".join(code_span(x) for x in dict.fromkeys([*names, *texts])) + "\n")
    return md


def _tabs(en: str, zh: str | None) -> str:
    """English / 中文 content tabs (linked across the page), or the English text alone."""
    if not zh:
        return en + "\n"
    return ('=== "English"\n\n' + indent(en) + '\n\n=== "中文"\n\n'
            + indent(f'<div lang="{fixbox.ZH}">\n\n{zh}\n\n</div>') + "\n")


def _list(items, raw: RawBlocks) -> str:
    return raw.put("<ul>" + "".join(f"<li>{inline_html(x)}</li>" for x in items) + "</ul>")


def _symptoms(d: dict, raw: RawBlocks) -> list[str]:
    return ["## Symptoms\n",
            _tabs(_list(d["symptoms"], raw), _list(d["symptoms_zh"], raw) if d.get("symptoms_zh") else None)]


def _log_text(d: dict, raw: RawBlocks) -> list[str]:
    """Each signature's first real example, then its pattern and further examples behind a fold."""
    md = ["### What the log says\n",
          f"Real log text first; `errbook triage` and the [paste-your-log page](../{addresses.PAGES['triage']}) "
          "match these lines.\n"]
    for s in d["signatures"]:
        steps = s.get("sequence") or [s["pattern"]]
        ex = s["examples"][0]
        md.append(f"Example ({_source(ex['source'])}):\n")
        md.append(raw.put(pre(ex["text"], "eb-log")) + "\n")
        kind = (f"ordered lines within {s.get('within', 50)} lines" if len(steps) > 1 else "one line")
        detail = [f"Signature `{s['id']}`: priority {s['priority']}, {kind}"
                  f"{', ignoring case' if s.get('ignore_case') else ''}.\n", raw.put(pre("\n".join(steps), "eb-regex"))]
        for more in s["examples"][1:]:
            detail += [f"\nAnother example ({_source(more['source'])}):\n", raw.put(pre(more["text"], "eb-log"))]
        md.append('<div class="eb-pattern" data-search-exclude markdown>\n\n??? note "Pattern '
                  f'{inline(s["id"])}"\n\n' + indent("\n".join(detail)) + "\n\n</div>\n")
    return md


def _source(src: str) -> str:
    return link("source", src) if src.startswith("https://") else inline(src)


def _triggers(d: dict, raw: RawBlocks) -> list[str]:
    md = ["## Triggers\n"]
    t = d["triggers"]
    rows = _trigger_rows(t)
    if rows:
        md.append(_table(("Condition", "Value"), rows, raw) + "\n")
    md.append(raw.put(prose_html(t["explanation"])) + "\n")
    md.append(machine_checks_md(d))
    return md


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


def _table(head: tuple, rows: list[tuple], raw: RawBlocks) -> str:
    return raw.put("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"
                   + "".join("<tr>" + "".join(f"<td>{inline_html(c)}</td>" for c in r) + "</tr>" for r in rows)
                   + "</tbody></table>")


def machine_checks_md(d: dict) -> str:
    """The checkable part of an entry's trigger in plain words (what `errbook doctor` tests), or why none is."""
    t = d.get("triggers") or {}
    if t.get("checks"):
        md = ['!!! example "Checked on a machine: `errbook doctor` reports this entry when one of these holds"\n']
        for c in t["checks"]:
            conds = "; ".join(inline(checks.describe(x, code=True)) for x in c["when"])
            md.append(f"    - **{inline(c['says'])}** — when {conds}.")
        return "\n".join(md) + f"\n\n    See [Check your machine](../{addresses.DOCS['doctor']}).\n"
    if t.get("not_checkable"):
        return '!!! note "Not checkable on a machine"\n    ' + inline(t["not_checkable"]) + "\n"
    return ""


def _corrections(d: dict, raw: RawBlocks) -> list[str]:
    if not d.get("corrects"):
        return []
    md = ["## Common advice this corrects\n"]
    for c in d["corrects"]:
        md.append('!!! failure "What people believe"\n\n' + indent(raw.put(prose_html(c["belief"]))) +
                  f"\n\n    *Where it circulates:* {circulates(c)}\n")
        md.append('!!! success "What is true"\n\n' + indent(raw.put(prose_html(c["truth"]))) + "\n")
        md.append('!!! quote "Evidence"\n\n' + indent(raw.put(prose_html(c["evidence"]))) + "\n")
    return md


def _verification(d: dict, e, records_by_platform: dict, notebooks: frozenset, links: Links) -> list[str]:
    """The runbook, and every tier's evidence per platform (a record of an earlier version says so)."""
    md = ["## Verification { data-search-exclude }\n"]
    ver = d["verification"]
    rb = ver["runbook"]
    rb_md = link(rb, links.blob(rb)) if links.repo_url else f"`{rb}`"
    md.append(f"Runbook: {rb_md} (tiers: {', '.join(ver['tiers'])}). Run it with "
              f"`errbook run {d['id']}` (a trial: the team's ledger is untouched); add `--tier rocm` on an AMD "
              "machine and `--record` to add the result to the ledger.\n")
    md.append("| Tier | Platform | Outcome | Date | Commit | Executed run |\n|---|---|---|---|---|---|")
    any_rocm = False
    for ts in tier_status(e, records_by_platform, notebooks):
        if not ts["rows"]:
            md.append(f"| {ts['tier']} | — | {badge('none', 'not run yet')} | | | |")
        for r in ts["rows"]:
            any_rocm |= r["fingerprint"].get("platform") == "rocm"
            md.append(_verification_row(ts["tier"], r))
    if not any_rocm:
        md.append("\n!!! warning \"Not yet verified on AMD hardware\"\n    No run of this runbook on a ROCm GPU is "
                  "recorded. Checks of the rocm tier were skipped, not passed.\n")
    md.append("")
    return md


def _verification_row(tier: str, r: dict) -> str:
    nb_md = link("open", "../" + addresses.run_page_src(r["notebook"])) if r["has_nb"] else ""
    reason = f" — {inline(r['reason'][:160])}" if r["outcome"] != "passed" and r["reason"] else ""
    out_badge = badge(r["outcome"], r["outcome"]) if r["current"] else \
        badge("none", f"{r['outcome']} · earlier version")        # made before the entry last changed
    return (f"| {tier} | {inline(r['where'])} | {out_badge}{reason} "
            f"| {inline(r['date'])} | {code_span(r['commit']) if r['commit'] else ''} | {nb_md} |")


def _references(d: dict, raw: RawBlocks) -> list[str]:
    # external https links only: no link for MkDocs to resolve
    return ["## References\n", raw.put("<ul>" + "".join(
        f'<li><a href="{attr(url(r["url"]))}">{inline_html(r["title"])}</a> ({html.escape(r["kind"])})'
        + (f" — {inline_html(r['note'])}" if r.get("note") else "") + "</li>" for r in d["references"]) + "</ul>"), ""]


def _related(d: dict, by_id: dict) -> list[str]:
    """Entries this one declares related, and those that declare it."""
    rel = [x for x in d.get("related", []) if x in by_id]
    back = sorted(oid for oid, o in by_id.items() if d["id"] in (o.get("related") or []) and oid not in rel)
    if not (rel or back):
        return []
    return (["## Related entries { data-search-exclude }\n"]
            + [f"- {rel_entry_link(x, by_id[x]['title'], 'entries')}" for x in rel + back] + [""])


def error_page(eid: str, rel: str, problems: list[str]) -> str:
    """The page of an entry that cannot be built (serve mode): what is wrong, file:line: field, so that a broken
    save shows at once in the browser instead of failing the rebuild."""
    body = "\n".join("        " + line for p in problems[:50] for line in str(p).splitlines())
    return (front_matter({"title": html.escape(f"{eid} · cannot be shown")})
            + f"\n# {eid}: this entry cannot be shown\n\n"
            + f'!!! failure "{html.escape(rel)} has errors"\n    Fix them and save: the page reloads.\n\n{body}\n')
