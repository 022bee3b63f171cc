"""Items of an entry's list that say the same thing twice (a symptom repeated with a few words changed).

Two items repeat each other when they are equal once case, spaces and punctuation are ignored, or when they quote
the same log text (the same quoted fragments) and the rest is nearly the same words. Items that quote different
messages in the same sentence frame ('needs target feature gfx11-insts' / '... mai-insts') are different."""
from __future__ import annotations

import difflib
import re

SIMILAR = 0.8      # share of the normalised characters two items with the same quotes must have in common
_QUOTED = re.compile(r"'[^']{4,}'|\"[^\"]{4,}\"|`[^`]{2,}`|“[^”]{4,}”|‘[^’]{4,}’")
_NOISE = re.compile(r"[\W_]+")


def _norm(text: str) -> str:
    return _NOISE.sub("", text.casefold())


def _quotes(text: str) -> frozenset[str]:
    return frozenset(_norm(q) for q in _QUOTED.findall(text))


def repeated(items: list) -> list[tuple[int, int, str]]:
    """(index of the later item, index of the item it repeats, how) for each item that repeats an earlier one."""
    out: list[tuple[int, int, str]] = []
    texts = [(i, x) for i, x in enumerate(items) if isinstance(x, str)]
    for n, (j, b) in enumerate(texts):
        for i, a in texts[:n]:
            if _norm(a) == _norm(b):
                out.append((j, i, "the same text"))
                break
            qa = _quotes(a)
            if qa and qa == _quotes(b) and \
                    difflib.SequenceMatcher(None, _norm(a), _norm(b), autojunk=False).ratio() >= SIMILAR:
                out.append((j, i, "the same quoted log text in nearly the same words"))
                break
    return out
