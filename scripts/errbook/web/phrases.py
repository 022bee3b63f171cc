"""What an entry says in a few words: its cause in one line, the error text a reader searches for, its version
ranges in plain words, the paste page's card. Shared by the entry page, the index pages and the bundle."""
from __future__ import annotations

import re

from errbook.kb import fixsteps, regexsubset
from errbook.web import uitext
from errbook.web.escape import inline

CLASSES = {
    "compile": ("Compile time", "编译期", "Builds, headers, linkers, toolchains, extension wheels."),
    "runtime": ("Runtime", "运行时", "Devices, drivers, containers, memory, streams, collectives."),
    "performance": ("Performance and numerics", "性能与数值", "Kernels, matrix cores, precision, tuning, profiling."),
}
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


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def identifier_like(a: str) -> bool:
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
        if identifier_like(a):
            return a
    texts = error_texts(d, 1)
    if texts:
        words = texts[0].split()
        return " ".join(words[:8])
    return d["title"]


COMPONENTS = {"rocm": "ROCm", "hip": "HIP", "pytorch": "PyTorch", "rocblas": "rocBLAS", "hipblaslt": "hipBLASLt",
              "rccl": "RCCL", "miopen": "MIOpen", "flash-attention": "FlashAttention", "vllm": "vLLM",
              "triton": "Triton", "llvm": "LLVM", "tensorflow-rocm": "TensorFlow (ROCm)", "llama.cpp": "llama.cpp",
              "hipcc": "hipcc", "amdgpu": "amdgpu driver", "jax": "JAX", "onnxruntime": "ONNX Runtime"}


def any_version(rng) -> bool:
    """Whether a range holds every version ('any', or left empty)."""
    return str(rng).strip() in ("", "any")


def version_words(rng: str, lang: str = "en") -> str:
    """'>=6.0, <6.2' -> 'from 6.0, before 6.2' ('6.0 起，6.2 之前' in zh); 'any' -> 'any version'."""
    ops, w = uitext.VERSION_OPS[uitext.check(lang)], uitext.APPLIES[lang]
    if any_version(rng):
        return w["any_version"]
    rng = str(rng).strip()
    parts = [p.strip() for p in rng.split(",") if p.strip()]
    found = [re.match(r"(>=|<=|==|!=|~=|>|<|=)\s*(.+)", p) for p in parts]
    if all(found):
        pairs = [(m.group(1), m.group(2)) for m in found if m]
        d = dict(pairs)
        if len(pairs) == 2 and ">=" in d and "<=" in d:
            return w["bounds"].format(d[">="], d["<="])
        return w["ops_sep"].join(ops[o].format(v) for o, v in pairs)
    return rng


def component_name(c: str) -> str:
    return COMPONENTS.get(c, c)


def applies_phrases(d: dict, lang: str = "en") -> list[str]:
    """Plain-words version ranges ('ROCm from 6.0, before 6.2 (changed in 6.2)'); from `applies_to` when the
    entry has it, else from its triggers. fixed_in is the release whose change ends the range: a fix, or a
    change of route (RMN-0161), so the page says 'changed', and the evidence says which. Components of any
    version are named together ('PyTorch, vLLM: any version'): the fix box's line has a phone's width to fit."""
    w = uitext.APPLIES[uitext.check(lang)]
    out, anyv = [], []
    for a in d.get("applies_to") or []:
        if any_version(a["versions"]) and not a.get("fixed_in"):
            anyv.append(component_name(a["component"]))     # said once for all of them, after the ranges
            continue
        s = f"{component_name(a['component'])} {version_words(a['versions'], lang)}"
        if a.get("fixed_in"):
            s += w["changed"].format(a["fixed_in"])
        out.append(s)
    if anyv:
        out.append(w["any_of"].format(w["archs_sep"].join(anyv)) if len(anyv) > 1
                   else f"{anyv[0]} {w['any_version']}")
    if out:
        return out
    t = d.get("triggers") or {}
    rv = [v for v in t.get("rocm_versions", []) if v]
    if rv:
        out.append("ROCm " + w["list_sep"].join(version_words(v, lang) for v in rv))
    archs = [a for a in t.get("gpu_archs", []) if a != "any"]
    if archs:
        out.append(w["gpu"].format(w["archs_sep"].join(archs)))
    return out


def applies_line(d: dict, lang: str = "en") -> str:
    """The fix box's line: where the entry applies, and when it was last reviewed (or changed)."""
    w = uitext.APPLIES[uitext.check(lang)]
    parts = []
    ph = applies_phrases(d, lang)
    if ph:
        parts.append(w["applies"].format(inline(w["list_sep"].join(ph))))
    if d.get("reviewed"):
        parts.append(w["reviewed"].format(inline(d["reviewed"])))
    else:
        parts.append(w["updated"].format(inline(str(d["modified"])[:10])))
    return w["sep"].join(parts)


def entry_rocm_ranges(d: dict) -> list[tuple[str, str | None]]:
    """The ROCm ranges an index row shows and its ROCm filter reads, as (range, fixed_in): applies_to's when the
    entry has one for rocm, else its triggers' rocm_versions; [] for any version."""
    ranges = [(a["versions"], a.get("fixed_in")) for a in d.get("applies_to") or [] if a["component"] == "rocm"]
    return ranges or [(v, None) for v in (d.get("triggers") or {}).get("rocm_versions") or []]


def entry_rocm_tokens(d: dict) -> list[str]:
    return [version_words(r) for r, _ in entry_rocm_ranges(d)] or ["any version"]


def entry_arch_tokens(d: dict) -> list[str]:
    return list((d.get("triggers") or {}).get("gpu_archs") or []) or ["any"]


def circulates(c: dict) -> str:
    """Where wrong advice circulates, in plain words (`circulates`; older entries only name a note section)."""
    if c.get("circulates"):
        return inline(c["circulates"])
    return "the team's old internal field notes (the notes this knowledge base replaces)"


def paste_meta(e) -> dict:
    """What a paste-page result card shows for an entry (the bundle's `entries` part)."""
    d = e.data
    first = fixsteps.split(d["fix"])[1][0]      # the card's fix is the first change, not a check (kb/fixsteps.py)
    code = fix_code(first)
    return {"title": d["title"], "title_zh": d["title_zh"], "cause": cause_line(d), "cause_zh": cause_line_zh(d),
            "fix": first_sentences(first["step"], 300), "fix_zh": first_sentences(first.get("step_zh") or "", 200),
            "code": code[1] if code else "", "lang": code[0] if code else "", "steps": len(d["fix"]),
            "cosmetic": bool(d.get("cosmetic"))}
