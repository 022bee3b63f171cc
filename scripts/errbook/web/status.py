"""Verification status on the site: a record's outcome as a badge, each declared tier's evidence per platform,
and the one-line verdicts of entry pages and index tables. Only records at an entry's current content digest
(`current`, set by kb.verified) count as verifying it."""
from __future__ import annotations

import re

from errbook.machine import fingerprint
from errbook.web import uitext
from errbook.web.escape import inline, url

TIER_ORDER = ("static", "toolchain", "gpu", "rocm")
# Outcomes a badge knows; its glyph (✓ ✗ …) comes from errbook.css, so thousands of badges add no inline SVG
# to the pages and no work to Markdown.
OUTCOMES = ("passed", "failed", "error", "crashed", "timeout", "skipped")
BAD = ("failed", "error", "crashed", "timeout")


def outcome_class(outcome) -> str:
    return outcome if outcome in OUTCOMES else "none"


def badge(outcome, label: str, target: str = "", lang: str = "") -> str:
    """A status badge: colour from a fixed set of classes, the words always in the label (never colour alone);
    with a target (a docs-relative .md path) it is a Markdown link, which MkDocs checks and resolves. lang marks
    one language's copy of a badge written in both (eb-en / eb-zh, for assets/lang.js); "" for a badge in
    English only."""
    cls = outcome_class(outcome)
    which = f" eb-{uitext.check(lang)}" if lang else ""
    tag = f' lang="{uitext.HTML_LANG[lang]}"' if lang and lang != "en" else ""
    # data-search-exclude: status words (passed, CPU, GPU) on every page would only add noise to search.
    # <small>, not <span>: Material's indexer ends an exclusion at the first closing tag of the same name.
    out = f'<small class="eb-badge eb-{cls}{which}"{tag} data-search-exclude>{inline(label)}</small>'
    return f"[{out}]({url(target)})" if target else out


def tier_platform(tier: str, fp: dict, label: str, short: bool = False) -> str:
    """Where a tier ran, in the words a badge uses: "CUDA · NVIDIA H200", "hipcc 5.2, Triton 3.9, no GPU"."""
    plat = fp.get("platform", "cpu")
    if plat == "cpu" and tier == "toolchain":
        m = re.search(r"HIP (\d+\.\d+)", str(fp.get("hipcc") or ""))
        tools = ([f"hipcc {m.group(1)}"] if m else []) + ([f"Triton {fp['triton']}"] if fp.get("triton") else [])
        return uitext.NO_GPU["en"] if short else ", ".join(tools + [uitext.NO_GPU["en"]])
    if short:
        return {"cuda": "CUDA", "rocm": "ROCm"}.get(plat, "CPU")
    return label


def tier_status(e, records_by_platform: dict, notebooks: frozenset = frozenset()) -> list[dict]:
    """For each tier the runbook declares: the evidence per platform (latest record per platform). `current`
    is true only for a record made at the entry's current content digest (the plugin marks it: verified.py)."""
    out = []
    for t in [x for x in TIER_ORDER if x in e["verification"]["tiers"]]:
        rows = []
        for _key, rec in sorted(records_by_platform.items()):
            tr = (rec.get("tiers") or {}).get(t)
            if not isinstance(tr, dict):
                continue
            fp = rec.get("fingerprint") if isinstance(rec.get("fingerprint"), dict) else {}
            nb = str(rec.get("notebook", ""))
            label = str(rec.get("platform_label") or fingerprint.label(fp))
            rows.append({"platform": label, "where": tier_platform(t, fp, label),
                         "where_short": tier_platform(t, fp, label, short=True),
                         "outcome": str(tr.get("outcome", "")), "reason": str(tr.get("reason", rec.get("reason", ""))),
                         "date": str(rec.get("date", ""))[:10], "commit": str(rec.get("commit", ""))[:10],
                         "notebook": nb, "fingerprint": fp, "has_nb": nb in notebooks,
                         "current": rec.get("current") is True})
        out.append({"tier": t, "rows": rows})
    return out


def tier_summary(e, records_by_platform: dict, short: bool = False, lang: str = "en") -> list[tuple[str, str, str]]:
    """(tier, outcome class, words) per declared tier, from records at the current digest only: passed
    somewhere beats failed beats not verified; a pass of an earlier version says so, with its date. lang picks
    the words' language (uitext.VERDICTS); the tier and class stay the same in every language."""
    words, tiers, outcomes = (uitext.VERDICTS[uitext.check(lang)], uitext.TIERS[lang], uitext.OUTCOMES[lang])
    out = []
    for ts in tier_status(e, records_by_platform):
        t, rows = ts["tier"], ts["rows"]
        cur = [r for r in rows if r["current"]]
        passed = sorted({r["where_short" if short else "where"] for r in cur if r["outcome"] == "passed"})
        bad = [r for r in cur if r["outcome"] in BAD]
        earlier = sorted(r["date"] for r in rows if not r["current"] and r["outcome"] == "passed")
        fill = {"tier": tiers.get(t, t)}
        if passed:
            key, cls = "passed", "passed"
            fill["where"] = uitext.PLACES_SEP[lang].join(_place(w, lang) for w in passed)
        elif bad:
            key, cls = "bad", bad[0]["outcome"]
            fill.update(outcome=outcomes.get(cls, cls), where=_place(bad[0]["where"], lang))
        elif earlier:
            key, cls = "earlier", "none"
            fill["date"] = earlier[-1]
        elif cur:
            key, cls = "skipped", "skipped"
        else:
            key, cls = ("not_this" if rows else "never"), "none"
        template = words.get(key + "_short", words[key]) if short else words[key]    # short: the badges' words
        out.append((t, cls, template.format(**fill)))
    return out


def _place(where: str, lang: str) -> str:
    """Where a tier ran, in lang: platform names stay, the words "no GPU" are translated."""
    en = uitext.NO_GPU["en"]
    return where[: -len(en)] + uitext.NO_GPU[lang] if where.endswith(en) else where


def status_badges(e, records_by_platform: dict, short: bool = False, lang: str = "") -> str:
    """The badges in English ("", unmarked), or one marked language's copy ("en", "zh") of badges written in both."""
    return " ".join(badge(cls, words, lang=lang)
                    for _, cls, words in tier_summary(e, records_by_platform, short, lang or "en"))


def verification_state(e, records_by_platform: dict) -> str:
    """One word-group (errbook show): how far this entry's current version has been verified."""
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
