"""Entry -> Markdown page generation. The only module that knows how pages look.

Kept free of MkDocs imports (mkdocs_plugin.py adapts it), so a move to another generator (Zensical) only
replaces the adapter. Every string that comes from an entry is escaped here: entries are data, not markup.
"""
from __future__ import annotations

import html
import json
import re
from collections import Counter

from . import platform

CLASSES = {
    "compile": ("Compile time", "编译期", "Builds, headers, linkers, toolchains, extension wheels."),
    "runtime": ("Runtime", "运行时", "Devices, drivers, containers, memory, streams, collectives."),
    "performance": ("Performance and numerics", "性能与数值", "Kernels, matrix cores, precision, tuning, profiling."),
}
TIER_ORDER = ("static", "toolchain", "gpu", "rocm")
# Material's bundled icons: inlined as SVG at build time (no emoji font, no request to a CDN).
MARK = {"passed": ":material-check-circle:", "failed": ":material-close-circle:", "error": ":material-close-circle:",
        "crashed": ":material-skull:", "timeout": ":material-timer-sand:", "skipped": ":material-skip-next-circle:"}

_INLINE_ESC = {"<": "&lt;", ">": "&gt;", "&": "&amp;", "[": "&#91;", "]": "&#93;", "{": "&#123;", "}": "&#125;",
               "|": "&#124;", "\\": "&#92;", "!": "&#33;", "*": "&#42;", "_": "&#95;", "#": "&#35;", "=": "&#61;",
               ":": "&#58;", '"': "&quot;", "~": "&#126;", "^": "&#94;", "+": "&#43;", "-": "&#45;"}
_ESC_RE = re.compile("[" + re.escape("".join(_INLINE_ESC)) + "]")


def _esc_plain(s: str) -> str:
    return _ESC_RE.sub(lambda m: _INLINE_ESC[m.group(0)], s)


def _code_span(s: str) -> str:
    if not s.strip():
        return _esc_plain(s)
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def inline(s) -> str:
    """Entry prose -> inert Markdown: `code spans` stay code, everything else is entity-escaped."""
    s = " ".join(str(s).split())
    out, pos = [], 0
    for m in re.finditer(r"`([^`]+)`", s):
        out.append(_esc_plain(s[pos:m.start()]))
        out.append(_code_span(m.group(1)))
        pos = m.end()
    out.append(_esc_plain(s[pos:]))
    return "".join(out)


def prose(s) -> str:
    """Multi-paragraph prose: paragraphs split on blank lines, each rendered with inline()."""
    paras = [p for p in re.split(r"\n\s*\n", str(s).strip()) if p.strip()]
    return "\n\n".join(inline(p) for p in paras)


def fence(code: str, lang: str = "text", indent: str = "") -> str:
    n = max(3, max((len(r) for r in re.findall(r"`{3,}", code)), default=0) + 1)
    lang = lang if re.fullmatch(r"[a-z0-9+#-]{1,20}", lang or "") else "text"
    body = "\n".join(indent + line for line in code.rstrip("\n").split("\n"))
    return f"{indent}{'`' * n}{lang}\n{body}\n{indent}{'`' * n}"


def url(u: str) -> str:
    for ch, code in (("(", "%28"), (")", "%29"), (" ", "%20"), ('"', "%22"), ("'", "%27"), ("<", "%3C"),
                     (">", "%3E"), ("`", "%60")):
        u = str(u).replace(ch, code)
    return u


def link(title: str, u: str) -> str:
    return f"[{inline(title)}]({url(u)})"


def front_matter(meta: dict) -> str:
    return "---\n" + json.dumps(meta, ensure_ascii=False, indent=None) + "\n---\n\n"


def entry_uri(eid: str) -> str:
    return f"entries/{eid}.md"


def rel_entry_link(eid: str, title: str, from_dir: str) -> str:
    depth = from_dir.count("/") + 1 if from_dir else 0
    return link(f"{eid} · {title}", "../" * depth + entry_uri(eid))


# --- verification status -------------------------------------------------------------------------------

def tier_status(e, records_by_platform: dict, notebooks: frozenset = frozenset()) -> list[dict]:
    """For each tier the runbook declares: the best evidence across platforms (passed beats failed beats skipped)."""
    out = []
    for t in [x for x in TIER_ORDER if x in e["verification"]["tiers"]]:
        rows = []
        for key, rec in sorted(records_by_platform.items()):
            tr = rec.get("tiers", {}).get(t)
            if not tr:
                continue
            rows.append({"platform": rec.get("platform_label") or platform.label(rec["fingerprint"]),
                         "outcome": tr["outcome"], "reason": tr.get("reason", rec.get("reason", "")),
                         "date": rec["date"][:10], "commit": rec["commit"][:10],
                         "notebook": rec.get("notebook", ""), "fingerprint": rec["fingerprint"],
                         "has_nb": rec.get("notebook", "") in notebooks})
        out.append({"tier": t, "rows": rows})
    return out


def status_line(e, records_by_platform: dict) -> str:
    parts = []
    for ts in tier_status(e, records_by_platform):
        passed = [r for r in ts["rows"] if r["outcome"] == "passed"]
        bad = [r for r in ts["rows"] if r["outcome"] in ("failed", "error", "crashed", "timeout")]
        if passed:
            parts.append(f"{ts['tier']} {MARK['passed']} " + ", ".join(sorted({inline(r['platform']) for r in passed})))
        elif bad:
            parts.append(f"{ts['tier']} {MARK['failed']} {inline(bad[0]['outcome'])} on {inline(bad[0]['platform'])}")
        else:
            parts.append(f"{ts['tier']}: not yet verified")
    return " · ".join(parts)


# --- pages ------------------------------------------------------------------------------------------------

def entry_page(e, by_id: dict, records_by_platform: dict, notebooks: frozenset = frozenset()) -> str:
    d = e.data
    # Themes print the front-matter title into <title> unescaped: escape it here.
    md = [front_matter({"title": html.escape(f"{d['id']} · {d['title']}"), "tags": d.get("tags", []),
                        "description": html.escape(e.summary_line[:300])})]
    md.append(f"# {inline(d['title'])}\n")
    meta = [f"**{d['id']}**", CLASSES[d["class"]][0], f"updated {d['modified'][:10]}"]
    if d.get("aliases"):
        meta.append("aka " + ", ".join(_code_span(a) for a in d["aliases"]))
    md.append(" · ".join(meta) + "\n")
    if d.get("withdrawn"):
        md.append(f'!!! danger "Withdrawn on {d["withdrawn"][:10]}"\n    This entry was withdrawn; its id stays reserved.\n')
    md.append(f"*{inline(d['title_zh'])}*\n")
    md.append('=== "English"\n\n    ' + prose(d["summary"]).replace("\n", "\n    ") + "\n")
    md.append('=== "中文"\n\n    ' + prose(d["summary_zh"]).replace("\n", "\n    ") + "\n")
    md.append('!!! tip "Verification"\n    ' + status_line(e, records_by_platform) +
              f"\n\n    Run it yourself: `errbook run {d['id']}` — see [the verification section](#verification).\n")

    md.append("## Symptoms\n")
    md += [f"- {inline(s)}" for s in d["symptoms"]]
    md.append("")

    md.append("## Log signatures\n")
    md.append("Lines like these in a log point to this entry. `errbook triage` and the "
              "[paste-your-log page](../triage.md) match them.\n")
    for s in d["signatures"]:
        steps = s.get("sequence") or [s["pattern"]]
        kind = "ordered lines" + (f" within {s.get('within', 50)} lines" if len(steps) > 1 else "") if len(steps) > 1 else "one line"
        md.append(f"**`{s['id']}`** — priority {s['priority']}, {kind}{', ignoring case' if s.get('ignore_case') else ''}\n")
        md.append(fence("\n".join(steps), "text") + "\n")
        ex = s["examples"][0]
        src = ex["source"]
        src_md = link("source", src) if src.startswith("https://") else inline(src)
        md.append(f'??? example "Real example ({src_md})"\n\n' + fence(ex["text"], "text", "    ") + "\n")
    md.append("## Triggers\n")
    t = d["triggers"]
    rows = []
    for v in t.get("rocm_versions", []):
        rows.append(("ROCm version", v))
    if t.get("gpu_archs"):
        rows.append(("GPU architecture", ", ".join(t["gpu_archs"])))
    for f in t.get("frameworks", []):
        rows.append(("Framework", f"{f['name']} {f.get('versions', '')}".strip()))
    for v in t.get("env", []):
        rows.append(("Environment", f"{v['name']}: {v['condition']}"))
    for p in t.get("platform", []):
        rows.append((p["fact"].replace("-", " ").capitalize(), p["value"]))
    if rows:
        md.append("| Condition | Value |\n|---|---|")
        md += [f"| {inline(a)} | {inline(b)} |" for a, b in rows]
        md.append("")
    md.append(prose(t["explanation"]) + "\n")
    md.append(machine_checks_md(d))

    md.append("## Root cause\n")
    md.append(prose(d["root_cause"]) + "\n")

    md.append("## Fix\n")
    for i, step in enumerate(d["fix"], 1):
        md.append(f"{i}. {inline(step['step'])}\n")
        c = step.get("code")
        if c:
            if c.get("before") and c.get("after"):
                md.append('    === "Before"\n\n' + fence(c["before"], c["lang"], "        ") + "\n")
                md.append('    === "After"\n\n' + fence(c["after"], c["lang"], "        ") + "\n")
            else:
                md.append(fence(c.get("snippet") or c["after"], c["lang"], "    ") + "\n")

    if d.get("corrects"):
        md.append("## Common advice this corrects\n")
        for c in d["corrects"]:
            md.append('!!! failure "What people believe"\n    ' + prose(c["belief"]).replace("\n", "\n    ") +
                      (f"\n\n    *Where:* {inline(c['seed'])}" if c.get("seed") else "") + "\n")
            md.append('!!! success "What is true"\n    ' + prose(c["truth"]).replace("\n", "\n    ") + "\n")
            md.append('!!! quote "Evidence"\n    ' + prose(c["evidence"]).replace("\n", "\n    ") + "\n")

    md.append("## Verification\n")
    ver = d["verification"]
    md.append(f"Runbook: `{ver['runbook']}` (tiers: {', '.join(ver['tiers'])}). Run it with "
              f"`errbook run {d['id']}`; add `--tier rocm` on an AMD machine.\n")
    md.append("| Tier | Platform | Outcome | Date | Commit | Executed notebook |\n|---|---|---|---|---|---|")
    for ts in tier_status(e, records_by_platform, notebooks):
        if not ts["rows"]:
            md.append(f"| {ts['tier']} | — | not yet run | | | |")
        for r in ts["rows"]:
            nb = r["notebook"]
            nb_md = link("open", "../" + nb[len("docs/"):]) if nb.startswith("docs/") and nb.endswith(".ipynb") and r["has_nb"] else ""
            reason = f" — {inline(r['reason'][:160])}" if r["outcome"] != "passed" and r["reason"] else ""
            md.append(f"| {ts['tier']} | {inline(r['platform'])} | {MARK.get(r['outcome'], '')} {inline(r['outcome'])}{reason} "
                      f"| {inline(r['date'])} | {_code_span(r['commit'])} | {nb_md} |")
    if not any(r["fingerprint"].get("platform") == "rocm" for ts in tier_status(e, records_by_platform) for r in ts["rows"]):
        md.append("\n!!! warning \"Not yet verified on AMD hardware\"\n    No run of this runbook on a ROCm GPU is "
                  "recorded. Checks of the rocm tier were skipped, not passed.\n")
    md.append("")

    md.append("## References\n")
    for r in d["references"]:
        note = f" — {inline(r['note'])}" if r.get("note") else ""
        md.append(f"- {link(r['title'], r['url'])} ({r['kind']}){note}")
    md.append("")
    rel = [x for x in d.get("related", []) if x in by_id]
    back = sorted(oid for oid, o in by_id.items() if d["id"] in (o.get("related") or []) and oid not in rel)
    if rel or back:
        md.append("## Related entries\n")
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
    md = [front_matter({"title": "What errbook doctor checks"}), "# What `errbook doctor` checks\n",
          "The machine-checkable part of each entry's trigger, generated from the entries. A check holds when all "
          "its conditions hold; an entry applies when any of its checks holds. How to run it: "
          "[Check your machine](doctor.md).\n", "| Entry | Finding | Conditions |", "|---|---|---|"]
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


def class_page(klass: str, entries: list) -> str:
    name, zh, blurb = CLASSES[klass]
    md = [front_matter({"title": f"{name} problems"}), f"# {name} · {zh}\n", f"{blurb}\n",
          f"{len(entries)} entries.\n", "| Entry | Title | 标题 | Tags |", "|---|---|---|---|"]
    for e in sorted(entries, key=lambda x: x.id):
        md.append(f"| [{e.id}](../{entry_uri(e.id)}) | {inline(e['title'])} | {inline(e['title_zh'])} | "
                  f"{', '.join(inline(t) for t in e['tags'])} |")
    return "\n".join(md) + "\n"


def overview_page(entries: list, latest: dict) -> str:
    counts = Counter(e.klass for e in entries)
    md = [front_matter({"title": "All entries"}), "# All entries\n",
          " · ".join(f"[{CLASSES[k][0]}](classes/{k}.md): {counts.get(k, 0)}" for k in CLASSES) + "\n",
          "| Entry | Class | Title | Verified |", "|---|---|---|---|"]
    for e in sorted(entries, key=lambda x: x.id):
        md.append(f"| [{e.id}]({entry_uri(e.id)}) | {e.klass} | {inline(e['title'])} | "
                  f"{status_line(e, latest.get(e.id, {}))} |")
    return "\n".join(md) + "\n"


def corrections_page(entries: list) -> str:
    md = [front_matter({"title": "Corrections of common advice"}), "# Corrections of common advice · 常见错误说法的更正\n",
          "Advice that circulates in team notes and forums, checked against primary sources. Each item links to "
          "the entry that holds the evidence and the runbook that demonstrates it.\n"]
    n = 0
    for e in sorted(entries, key=lambda x: x.id):
        for c in e.get("corrects") or []:
            n += 1
            md.append(f"## {n}. {inline(e['title'])}\n")
            md.append(f"**Belief.** {prose(c['belief'])}\n")
            md.append(f"**What is true.** {prose(c['truth'])}\n")
            md.append(f"**Evidence.** {prose(c['evidence'])} — [{e.id}]({entry_uri(e.id)}), "
                      f"runbook `{e['verification']['runbook']}`.\n")
            if c.get("seed"):
                md.append(f"*Seen in:* {inline(c['seed'])}\n")
    if n == 0:
        md.append("No corrections recorded yet.\n")
    return "\n".join(md) + "\n"


def matrix_page(entries: list, latest: dict, problems: list[str]) -> str:
    plats: dict[str, str] = {}
    for per in latest.values():
        for key, rec in per.items():
            plats[key] = rec.get("platform_label") or platform.label(rec["fingerprint"])
    keys = sorted(plats)
    if not any(k.startswith("rocm") for k in keys):
        keys.append("rocm:?")
        plats["rocm:?"] = "ROCm (AMD GPU)"
    md = [front_matter({"title": "Verification matrix"}), "# Verification matrix\n",
          "Which runbook checks passed where, from the verification ledger (`runbooks/ledger.jsonl`). "
          f"{MARK['passed']} passed · {MARK['failed']} failed · {MARK['crashed']} crashed · {MARK['timeout']} timed out · "
          f"{MARK['skipped']} skipped (the tier could not run there) · — no run.\n"]
    if problems:
        md.append('!!! danger "Ledger problems"\n' + "".join(f"    - {inline(p)}\n" for p in problems))
    md.append("| Entry | " + " | ".join(inline(plats[k]) for k in keys) + " |")
    md.append("|---|" + "---|" * len(keys))
    for e in sorted(entries, key=lambda x: x.id):
        cells = []
        for k in keys:
            rec = latest.get(e.id, {}).get(k)
            if not rec:
                cells.append("—")
                continue
            cells.append(" ".join(f"{inline(t)} {MARK.get(v['outcome']) or inline(v['outcome'])}" for t, v in
                                  sorted(rec["tiers"].items(), key=lambda kv: TIER_ORDER.index(kv[0]) if kv[0] in TIER_ORDER else 9))
                         + f"<br>{inline(rec['date'][:10])}")
        md.append(f"| [{e.id}](../{entry_uri(e.id)}) | " + " | ".join(cells) + " |")
    return "\n".join(md) + "\n"


def schema_page(schema: dict) -> str:
    return (front_matter({"title": "Entry schema"}) + "# Entry schema (version 1)\n\n"
            "The JSON Schema below is the single definition of an entry; `errbook validate` applies it plus "
            "cross-checks. Download: [entry-1.schema.json](entry-1.schema.json).\n\n"
            + fence(json.dumps(schema, indent=2, ensure_ascii=False), "json") + "\n")


def expand_refs(markdown: str, by_id: dict, page_dir: str) -> tuple[str, list[str]]:
    """[[RMN-0001]] in hand-written pages becomes a link with the entry's title; unknown ids are reported."""
    unknown: list[str] = []

    def sub(m):
        eid = m.group(1)
        if eid not in by_id:
            unknown.append(eid)
            return m.group(0)
        return rel_entry_link(eid, by_id[eid]["title"], page_dir)
    return re.sub(r"\[\[(RMN-\d{4})\]\]", sub, markdown), unknown
