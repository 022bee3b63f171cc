"""Version numbers and the entry format's version ranges (">=6.2,<7.0", "any"): one reading for triage's
environment evidence, `errbook stale` and `errbook doctor`. engine.js has the same two functions."""
from __future__ import annotations

import re

_NUM = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_CLAUSE = re.compile(r"^\s*([<>=!~]=?)\s*([0-9][0-9.]*)\s*$")


def parse(v: str) -> tuple[int, ...] | None:
    """'6.2.41133-abc' -> (6, 2, 41133); None when no number leads the text."""
    m = _NUM.match(str(v).strip().lstrip("v"))
    return tuple(int(x) for x in m.group(0).split(".")) if m else None


def _cmp(a: tuple, b: tuple) -> int:
    n = max(len(a), len(b))
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return (a > b) - (a < b)


def in_range(v: str | tuple, rng: str) -> bool | None:
    """Whether version v lies in range rng (None: v or the range cannot be read). '~=6.2' means >=6.2,<7;
    '==6.2' matches 6.2 and every 6.2.x."""
    ver = parse(v) if isinstance(v, str) else v
    if ver is None:
        return None
    if str(rng).strip() == "any":
        return True
    for clause in str(rng).split(","):
        m = _CLAUSE.match(clause)
        if not m:
            return None
        op, bound = m.group(1), tuple(int(x) for x in m.group(2).rstrip(".").split("."))
        c = _cmp(ver, bound)
        if op in ("==", "="):
            ok = ver[:len(bound)] == bound
        elif op == "!=":
            ok = ver[:len(bound)] != bound
        elif op == ">=":
            ok = c >= 0
        elif op == ">":
            ok = c > 0
        elif op == "<=":
            ok = c <= 0 or ver[:len(bound)] == bound
        elif op == "<":
            ok = c < 0
        else:  # ~=
            ok = c >= 0 and ver[:max(1, len(bound) - 1)] == bound[:max(1, len(bound) - 1)]
        if not ok:
            return False
    return True


def upper_bound(rng: str) -> tuple[int, ...] | None:
    """The smallest upper bound a range states ('<7.0' -> (7, 0)), or None when it is open-ended."""
    best = None
    for clause in str(rng).split(","):
        m = _CLAUSE.match(clause)
        if m and m.group(1) in ("<", "<="):
            b = tuple(int(x) for x in m.group(2).rstrip(".").split("."))
            best = b if best is None or _cmp(b, best) < 0 else best
    return best
