"""The index pages: all entries, each class, corrections of common advice, the verification matrix, what
`errbook doctor` checks, and the entry schema. They repeat what entry pages say, so they stay out of search."""
from __future__ import annotations

import json
from collections import Counter

from errbook.machine import checks, fingerprint
from errbook.web import addresses, filterdata
from errbook.web.escape import fence, front_matter, indent, inline, prose
from errbook.web.phrases import CLASSES, circulates, entry_arch_tokens, entry_rocm_tokens
from errbook.web.status import BAD, TIER_ORDER, badge, outcome_class


def _filter_mount(data: dict) -> list[str]:
    """The filters' mount, and beside it what each row matches (web/filterdata; tables.js builds the selects)."""
    return ['<div class="eb-filter"></div>', filterdata.script(data) + "\n"]


def _entry_table(entries: list, latest: dict, prefix: str, releases: dict) -> list[str]:
    # The table inside a div of its own: at phone widths errbook.css lays its rows out as cards.
    md = _filter_mount(filterdata.entry_table(entries, latest, filterdata.rocm_lines(releases)))
    md += ['<div class="eb-entries" markdown>\n', "| Entry | Title | Class | Tags | GPU | ROCm | Verified |",
           "|---|---|---|---|---|---|---|"]
    for e in sorted(entries, key=lambda x: x.id):
        d = e.data
        verified = filterdata.entry_verified(e, latest.get(e.id, {}))
        md.append(f"| [{e.id}]({prefix}{addresses.entry_src(e.id)}) | "
                  f"{inline(d['title'])}<br>*{inline(d['title_zh'])}* | "
                  f"{e.klass} | {' · '.join(inline(t) for t in d['tags'])} | "
                  f"{' · '.join(inline(a) for a in entry_arch_tokens(d))} | "
                  f"{' · '.join(inline(v) for v in entry_rocm_tokens(d))} | "
                  f"{' · '.join(filterdata.VERIFIED[k][0] for k in verified)} |")
    md.append("\n</div>")
    return md


def class_page(klass: str, entries: list, latest: dict | None = None, releases: dict | None = None) -> str:
    """releases: errata/releases.yaml (stale.load_releases); its rocm lines are the ROCm filter's choices."""
    name, zh, blurb = CLASSES[klass]
    md = [front_matter({"title": f"{name} problems", "search": {"exclude": True}}),
          f"# {name} · {zh}\n", f"{blurb}\n", f"{len(entries)} entries.\n"]
    md += _entry_table(entries, latest or {}, "../", releases or {})
    return "\n".join(md) + "\n"


def overview_page(entries: list, latest: dict, releases: dict | None = None) -> str:
    counts = Counter(e.klass for e in entries)
    md = [front_matter({"title": "All entries", "search": {"exclude": True}, "hide": ["navigation", "toc"]}),
          "# All entries\n",
          " · ".join(f"[{CLASSES[k][0]}]({addresses.class_src(k)}): {counts.get(k, 0)}" for k in CLASSES) + "\n",
          "Filter by class, tag, GPU, ROCm release or where the entry was verified; the text box searches every "
          "column. A GPU or ROCm choice keeps the entries that apply to any GPU or any version, and says how "
          "many. The address keeps the filters: bookmark or share it.\n"]
    md += _entry_table(entries, latest, "", releases or {})
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
            md.append('!!! failure "The advice"\n' + indent(prose(c["belief"])) + "\n")
            md.append(f"*Where it circulates:* {circulates(c)}\n")
            md.append('!!! success "What is true"\n' + indent(prose(c["truth"])) + "\n")
            md.append(f"**Evidence.** {prose(c['evidence'])} — [{e.id}]({addresses.entry_src(e.id)}), "
                      f"runbook `{e['verification']['runbook']}`.\n")
    if n == 0:
        md.append("No corrections recorded yet.\n")
    return "\n".join(md) + "\n"


_KIND_ORDER = {"rocm": 0, "cuda": 1, "cpu": 2}


def fleet_latest(records: list[dict]) -> dict[str, dict[tuple, dict]]:
    """entry -> fleet column -> newest record (by date; later ledger lines win ties)."""
    out: dict[str, dict[tuple, dict]] = {}
    for r in records:
        if not isinstance(r, dict):
            continue
        k = fingerprint.fleet_key(r.get("fingerprint"))
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
                  "*ROCm (AMD GPU)* stays empty until one is ([how to add a "
                  f"machine](../{addresses.DOCS['amd_hosts']})).\n")
    md += _matrix_summary(entries, latest, keys)
    md += ["## Every entry\n", "Filter by class, or by what one run said: its platform, a tier and that tier's "
           "outcome (*no run*: no run of that tier on that platform). The address keeps the filters.\n"]
    md += _filter_mount(filterdata.matrix_table(entries, latest))
    md.append('<div class="eb-matrix" markdown>\n')
    heads = [inline(fingerprint.fleet_label(k)) for k in keys] + (["ROCm (AMD GPU)"] if placeholder else [])
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
            target = addresses.run_page_src(nb)[len("verification/"):] if nb in notebooks else ""
            if rec.get("current") is not True:          # evidence about an earlier version of the entry
                outcome = "none" if outcome == "passed" else outcome
                label = f"{rec.get('outcome', '')} · earlier version"
            else:
                label = outcome or "unknown"
            raw_tiers = rec.get("tiers")
            tiers = raw_tiers if isinstance(raw_tiers, dict) else {}
            in_order = sorted(tiers.items(), key=lambda kv: TIER_ORDER.index(kv[0]) if kv[0] in TIER_ORDER else 9)
            tier_txt = " ".join('<span class="eb-tier '
                                f'eb-{outcome_class(v.get("outcome") if isinstance(v, dict) else "")}">'
                                f"{inline(t)}</span>" for t, v in in_order)
            cells.append(f"{badge(outcome, label, target)}<br>{inline(str(rec.get('date', ''))[:10])}"
                         f"<br><small>{tier_txt}</small>")
        if placeholder:
            cells.append(badge("none", "not yet"))
        md.append(f"| [{e.id}](../{addresses.entry_src(e.id)}) {inline(e['title'])} | " + " | ".join(cells) + " |")
    md.append("\n</div>")
    return "\n".join(md) + "\n"


def summary_counts(entries: list, latest: dict, key: tuple) -> dict:
    """For one matrix column: entries by their latest run's outcome (passed, failed, skipped at the current
    version; earlier; none) and, per tier, the current runs' tier outcomes (tier -> outcome -> entries)."""
    runs: Counter[str] = Counter()
    tiers: dict[str, Counter] = {t: Counter() for t in TIER_ORDER}
    for e in entries:
        rec = latest.get(e.id, {}).get(key)
        if rec is None:
            runs["none"] += 1
        elif rec.get("current") is not True:
            runs["earlier"] += 1
        else:
            o = rec.get("outcome")
            runs["failed" if o in BAD else str(o)] += 1
            for t, v in (rec.get("tiers") if isinstance(rec.get("tiers"), dict) else {}).items():
                if t in tiers and isinstance(v, dict):
                    tiers[t]["failed" if v.get("outcome") in BAD else str(v.get("outcome"))] += 1
    return {"runs": runs, "tiers": tiers}


def _matrix_summary(entries: list, latest: dict, keys: list) -> list[str]:
    """One row per column: how many entries its latest runs verified, failed or skipped, in all and per tier."""
    md = ["## Summary\n", f"{len(entries)} entries. Per machine, the latest run of each entry: its outcome at the "
          "entry's current version, then each tier's (✓ passed, ✗ failed, » skipped).\n",
          "| Machine | Passed | Failed | Skipped | Earlier version | No run | "
          + " | ".join(f"{t} tier" for t in TIER_ORDER) + " |", "|---|" + "--:|" * 5 + "---|" * len(TIER_ORDER)]
    for k in keys:
        c = summary_counts(entries, latest, k)
        runs = c["runs"]
        tiers = [" ".join(f"{g} {c['tiers'][t][o]}" for o, g in (("passed", "✓"), ("failed", "✗"), ("skipped", "»"))
                          if c["tiers"][t][o]) or "–" for t in TIER_ORDER]
        md.append(f"| {inline(fingerprint.fleet_label(k))} | "
                  + " | ".join(str(runs[o]) for o in ("passed", "failed", "skipped", "earlier", "none"))
                  + " | " + " | ".join(tiers) + " |")
    return md + [""]


def machine_checks_page(entries: list, vocab: dict) -> str:
    """Every machine check of every entry, and the facts they read."""
    # The checks table repeats what each entry page says (machine_checks_md), so, like the other index pages, it
    # stays out of the search index: a query for an error name must find the entry, not this table. The facts
    # below are said only here and stay searchable.
    md = [front_matter({"title": "What errbook doctor checks"}), "# What `errbook doctor` checks\n",
          "The machine-checkable part of each entry's trigger, generated from the entries. A check holds when all "
          "its conditions hold; an entry applies when any of its checks holds. How to run it: "
          "[Check your machine](" + addresses.DOCS["doctor"] + ").\n", "## Checks { data-search-exclude }\n",
          "| Entry | Finding | Conditions |", "|---|---|---|"]
    n = 0
    for e in sorted(entries, key=lambda x: x.id):
        for c in (e.get("triggers") or {}).get("checks") or []:
            n += 1
            conds = "<br>".join(inline(checks.describe(x, code=True)) for x in c["when"])
            md.append(f"| [{e.id}]({addresses.entry_src(e.id)}) | {inline(c['says'])} | {conds} |")
    none = sorted(e.id for e in entries if (e.get("triggers") or {}).get("not_checkable"))
    md.append(f"\n{n} checks in {len({e.id for e in entries if (e.get('triggers') or {}).get('checks')})} entries. "
              f"Not machine-checkable (the trigger is in code, a build, a workload or a state no fact shows): "
              + ", ".join(f"[{i}]({addresses.entry_src(i)})" for i in none) + ".\n")
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


def schema_page(schema: dict) -> str:
    return (front_matter({"title": "Entry schema"}) + "# Entry schema (version 1)\n\n"
            "The JSON Schema below is the single definition of an entry; `errbook validate` applies it plus "
            "cross-checks. Download: [entry-1.schema.json](entry-1.schema.json).\n\n"
            + fence(json.dumps(schema, indent=2, ensure_ascii=False), "json") + "\n")
