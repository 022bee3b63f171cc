"""The entry page's own words in English and Chinese (web/uitext.py): every table has both languages with the same
keys, the Chinese words carry no English UI words (only the entry's data: component names, versions, dates,
platform names), and the English words are the page's as before."""
import re

import pytest

from errbook.web import phrases, status, uitext

TABLES = {"VERSION_OPS": uitext.VERSION_OPS, "APPLIES": uitext.APPLIES, "TIERS": uitext.TIERS,
          "OUTCOMES": uitext.OUTCOMES, "VERDICTS": uitext.VERDICTS, "NAMES": uitext.NAMES, "NO_GPU": uitext.NO_GPU,
          "PLACES_SEP": uitext.PLACES_SEP, "HTML_LANG": uitext.HTML_LANG}
# names that stay as they are in Chinese text: platforms and components, never words to translate
NAMES = re.compile(r"\b(?:GPU|ROCm|HIP|CUDA|CPU|NVIDIA|H200|hipcc|Triton)\b")
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def english_words(s: str) -> list[str]:
    """Latin words left once placeholders and names are taken out."""
    return re.findall(r"[A-Za-z]{2,}", NAMES.sub("", re.sub(r"\{\w*\}", "", s)))


@pytest.mark.parametrize("name", TABLES)
def test_every_table_has_both_languages_with_the_same_keys(name):
    t = TABLES[name]
    assert set(t) == set(uitext.LANGS), name
    if isinstance(t["en"], dict):
        assert set(t["en"]) == set(t["zh"]), name
        for k, v in t["zh"].items():      # a template keeps the English one's slots (in its own order)
            assert sorted(re.findall(r"\{\w*\}", v)) == sorted(re.findall(r"\{\w*\}", t["en"][k])), (k, v)


def test_chinese_words_have_no_english_ui_words():
    for name, t in TABLES.items():
        if name == "HTML_LANG":
            continue
        zh = t["zh"] if isinstance(t["zh"], dict) else {"": t["zh"]}
        for k, v in zh.items():
            assert not english_words(v), (name, k, v)


def test_unknown_language_is_an_error_not_english():
    with pytest.raises(ValueError):
        phrases.version_words(">=6.0", "fr")
    with pytest.raises(ValueError):
        status.badge("passed", "x", lang="de")


def test_version_words_in_both_languages():
    assert phrases.version_words(">=6.0, <6.2") == "from 6.0, before 6.2"           # English as before
    assert phrases.version_words(">=6.0, <6.2", "zh") == "6.0 起，6.2 之前"
    assert phrases.version_words(">=6.0,<=6.2", "zh") == "6.0–6.2"
    assert phrases.version_words("any", "zh") == "任意版本"
    assert phrases.version_words("6.1.x", "zh") == "6.1.x"                        # not a range: as written


def test_applies_line_in_chinese_keeps_the_data_and_drops_the_words():
    d = {"applies_to": [{"component": "rocm", "versions": ">=5.0,<6.2", "fixed_in": "6.2"},
                        {"component": "hip", "versions": "any"}], "reviewed": "2026-11-20"}
    en, zh = phrases.applies_line(d), phrases.applies_line(d, "zh")
    assert en == "Applies to ROCm from 5.0, before 6.2 (changed in 6.2); HIP any version · reviewed 2026-11-20"
    assert zh.startswith("适用于 ROCm 5.0 起") and "任意版本" in zh and "2026-11-20" in zh and "6.2" in zh
    assert not english_words(zh), zh
    t = {"triggers": {"rocm_versions": [">=6.0"], "gpu_archs": ["gfx90a", "any"]}, "modified": "2026-11-30T01:00:00"}
    assert phrases.applies_line(t) == "Applies to ROCm from 6.0; GPU gfx90a · updated 2026-11-30"
    zh = phrases.applies_line(t, "zh")
    assert "gfx90a" in zh and "更新于 2026-11-30" in zh and not english_words(zh.replace("gfx90a", ""))


def test_components_of_any_version_are_named_once_after_the_ranges():
    """The fix box's line has a phone's width: 'PyTorch, vLLM, ROCm: any version', not the words three times; a
    range, and an any-version row with fixed_in, keep their own phrase."""
    d = {"applies_to": [{"component": "pytorch", "versions": "any"},
                        {"component": "sglang", "versions": ">=0.5.17,<0.5.20", "fixed_in": "0.5.20"},
                        {"component": "vllm", "versions": "any"}, {"component": "rocm", "versions": "any"},
                        {"component": "hip", "versions": "any", "fixed_in": "6.0"}], "reviewed": "2026-12-07"}
    assert phrases.applies_phrases(d) == ["sglang from 0.5.17, before 0.5.20 (changed in 0.5.20)",
                                          "HIP any version (changed in 6.0)", "PyTorch, vLLM, ROCm: any version"]
    assert phrases.applies_phrases(d, "zh")[-1] == "PyTorch、vLLM、ROCm 任意版本"
    assert phrases.applies_phrases({"applies_to": [{"component": "hip", "versions": "any"}]}) == ["HIP any version"]


def _rec(tier: str, outcome: str, platform: str = "cpu", current: bool = True, date: str = "2026-12-01") -> dict:
    return {"tiers": {tier: {"outcome": outcome}}, "fingerprint": {"platform": platform}, "current": current,
            "date": date, "platform_label": platform.upper()}


def test_badges_in_both_languages_say_the_same_verdicts():
    e = {"verification": {"tiers": ["static", "toolchain", "gpu", "rocm"]}}
    recs = {"a": _rec("static", "passed"), "b": _rec("gpu", "failed", "cuda"),
            "c": _rec("toolchain", "passed", current=False)}
    en = status.tier_summary(e, recs, short=True)
    zh = status.tier_summary(e, recs, short=True, lang="zh")
    assert [(t, c) for t, c, _ in en] == [(t, c) for t, c, _ in zh]              # the same verdicts
    assert [w for _, _, w in en] == ["static: passed (CPU)", "toolchain: earlier version", "gpu: failed",
                                     "rocm: not run yet"]
    assert [w for _, _, w in zh] == ["静态检查：通过（CPU）", "工具链：旧版本已验证", "GPU：失败", "ROCm：尚未运行"]
    long_zh = status.tier_summary(e, recs, lang="zh")
    assert "2026-12-01" in long_zh[1][2] and "CUDA" in long_zh[2][2]


def test_no_gpu_place_is_translated():
    e = {"verification": {"tiers": ["toolchain"]}}
    recs = {"a": {"tiers": {"toolchain": {"outcome": "passed"}}, "fingerprint": {"platform": "cpu"}, "current": True}}
    assert status.tier_summary(e, recs, short=True) == [("toolchain", "passed", "toolchain: passed (no GPU)")]
    assert status.tier_summary(e, recs, short=True, lang="zh")[0][2] == "工具链：通过（无 GPU）"


def test_badge_marks_each_language_copy():
    assert status.badge("passed", "x") == '<small class="eb-badge eb-passed" data-search-exclude>x</small>'
    assert 'class="eb-badge eb-passed eb-en" data-search-exclude' in status.badge("passed", "x", lang="en")
    assert 'class="eb-badge eb-none eb-zh" lang="zh-Hans"' in status.badge("nope", "x", lang="zh")
    both = "".join(status.status_badges({"verification": {"tiers": ["static"]}}, {}, True, lang=x)
                   for x in uitext.LANGS)
    assert both.count("eb-en") == 1 and both.count("eb-zh") == 1 and "static: not run yet" in both
