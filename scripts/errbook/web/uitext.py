"""The entry page's own words (not the entry's) in English and Chinese: the Applies-to line, the verification
badges and the line naming the entry, on the first screen. One table per piece, keyed by language; phrases.py,
status.py and entrypage.py fill them in and write both, for assets/lang.js to show the reader's choice.

Entry data is not translated here: component names, version numbers, dates, platform names and error text stay as
the entry and the ledger write them. A template holds "{}" where that data goes."""
from __future__ import annotations

LANGS = ("en", "zh")
HTML_LANG = {"en": "en", "zh": "zh-Hans"}     # the lang attribute of each language's blocks

# A version range in words ('>=6.0, <6.2' -> 'from 6.0, before 6.2' / '6.0 起，6.2 之前').
VERSION_OPS = {
    "en": {">=": "from {}", ">": "after {}", "<": "before {}", "<=": "up to {}", "==": "{}", "=": "{}",
           "!=": "not {}", "~=": "compatible with {}"},
    "zh": {">=": "{} 起", ">": "{} 之后", "<": "{} 之前", "<=": "至 {}", "==": "{}", "=": "{}",
           "!=": "{} 除外", "~=": "与 {} 兼容"},
}

APPLIES = {
    "en": {"any_version": "any version", "any_of": "{}: any version",
           "bounds": "{}–{}", "ops_sep": ", ", "list_sep": "; ", "archs_sep": ", ",
           "gpu": "GPU {}", "changed": " (changed in {})", "applies": "Applies to {}", "reviewed": "reviewed {}",
           "updated": "updated {}", "sep": " · "},
    "zh": {"any_version": "任意版本", "any_of": "{} 任意版本",
           "bounds": "{}–{}", "ops_sep": "，", "list_sep": "；", "archs_sep": "、",
           "gpu": "GPU {}", "changed": "（{} 起有变化）", "applies": "适用于 {}", "reviewed": "审阅于 {}",
           "updated": "更新于 {}", "sep": " · "},
}

# The line under the fix box that names the entry: its class, a cosmetic message, its tags, its error text.
NAMES = {
    "en": {"cosmetic": "harmless message (cosmetic)", "tags": "tags: ", "error_text": "Error text: "},
    "zh": {"cosmetic": "无害信息（仅为提示）", "tags": "标签：", "error_text": "报错文本："},
}

# The verification badges (status.tier_summary): a tier's name, an outcome, and each verdict's template.
TIERS = {
    "en": {"static": "static", "toolchain": "toolchain", "gpu": "gpu", "rocm": "rocm"},
    "zh": {"static": "静态检查", "toolchain": "工具链", "gpu": "GPU", "rocm": "ROCm"},
}
OUTCOMES = {
    "en": {"passed": "passed", "failed": "failed", "error": "error", "crashed": "crashed", "timeout": "timeout",
           "skipped": "skipped"},
    "zh": {"passed": "通过", "failed": "失败", "error": "出错", "crashed": "崩溃", "timeout": "超时",
           "skipped": "跳过"},
}
# {tier}, {outcome}, {where}, {date} filled in by status.tier_summary; a key_short is the badges' shorter words
# (the key itself where there is none).
VERDICTS = {
    "en": {"passed": "{tier}: passed ({where})", "bad": "{tier}: {outcome} on {where}",
           "bad_short": "{tier}: {outcome}",
           "earlier": "{tier}: verified an earlier version ({date})", "earlier_short": "{tier}: earlier version",
           "skipped": "{tier}: not verified (skipped)", "skipped_short": "{tier}: not verified",
           "not_this": "{tier}: not run on this version", "not_this_short": "{tier}: not run",
           "never": "{tier}: not run yet"},
    "zh": {"passed": "{tier}：通过（{where}）", "bad": "{tier}：在 {where} 上{outcome}",
           "bad_short": "{tier}：{outcome}",
           "earlier": "{tier}：旧版本已验证（{date}）", "earlier_short": "{tier}：旧版本已验证",
           "skipped": "{tier}：未验证（已跳过）", "skipped_short": "{tier}：未验证",
           "not_this": "{tier}：此版本未运行", "not_this_short": "{tier}：未运行",
           "never": "{tier}：尚未运行"},
}
# Where a tier ran, in a badge's words: platforms are names (CUDA, ROCm, CPU); only "no GPU" is words.
NO_GPU = {"en": "no GPU", "zh": "无 GPU"}
PLACES_SEP = {"en": ", ", "zh": "、"}


def check(lang: str) -> str:
    """lang itself, or ValueError: a misspelt language must not fall back to English silently."""
    if lang not in LANGS:
        raise ValueError(f"unknown page language {lang!r} (one of {', '.join(LANGS)})")
    return lang
