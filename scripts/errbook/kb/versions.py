"""Version numbers and the entry format's version ranges (">=6.2,<7.0", "any"): one reading for triage's
environment evidence, `errbook stale`, `errbook doctor` and `errbook validate`. engine.js reads ranges with the
patterns defined here (the bundle ships them) and the same arithmetic.

A range is "any" or comma-separated clauses OP NUMBER, OP one of == = != >= <= > < ~=, NUMBER digits separated
by single dots (RANGE_PATTERN, which the schema's version_range repeats). parse_range raises RangeError for
anything else: a range is entry data, and one unreadable range must cost its entry a finding, never a
traceback in a reader.
"""
from __future__ import annotations

import functools
import re
from typing import cast

from errbook.errors import ErrbookError

MAX_DIGITS = 15        # per number component: exact as a JavaScript Number, and far below int()'s 4300-digit limit
MAX_RANGE_CHARS = 200  # the schema's maxLength for a range
NUMBER = rf"[0-9]{{1,{MAX_DIGITS}}}(?:\.[0-9]{{1,{MAX_DIGITS}}})*"
OPS = r"==|!=|>=|<=|~=|=|>|<"
CLAUSE = rf"({OPS}) *({NUMBER})"
# The schema's version_range pattern, character for character (tests/hostile/test_version_ranges.py compares them).
RANGE_PATTERN = rf"^(any|({OPS}) *{NUMBER}( *, *({OPS}) *{NUMBER})*)$"
_RANGE = re.compile(RANGE_PATTERN[1:-1])     # used with fullmatch: '$' would also accept a trailing newline
_CLAUSE = re.compile(CLAUSE)
_NUM = re.compile(r"[0-9]+(?:\.[0-9]+)*")


class RangeError(ErrbookError, ValueError):
    """A version range that cannot be read."""


def parse(v: str) -> tuple[int, ...] | None:
    """'6.2.41133-abc' -> (6, 2, 41133); None when no number leads the text or a component of it is longer
    than MAX_DIGITS (a 4300-digit "version" is not one, and int() would refuse it)."""
    m = _NUM.match(str(v).strip().lstrip("v"))
    if not m:
        return None
    parts = m.group(0).split(".")
    return tuple(int(x) for x in parts) if all(len(x) <= MAX_DIGITS for x in parts) else None


def _cmp(a: tuple, b: tuple) -> int:
    n = max(len(a), len(b))
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return (a > b) - (a < b)


def compare(a: tuple, b: tuple) -> int:
    """-1, 0 or 1 as version a is older than, the same as or newer than b (missing parts count as 0: 7.1 == 7.1.0)."""
    return _cmp(a, b)


def _next(b: tuple) -> tuple:
    """The first version after every version that starts with b: (6, 2) -> (6, 3)."""
    return b[:-1] + (b[-1] + 1,)


def parse_range(rng) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """'>=6.2,<7.0' -> (('>=', (6, 2)), ('<', (7, 0))); 'any' -> (). Raises RangeError naming the problem."""
    if not isinstance(rng, str):
        raise RangeError(f"a version range is a string, not {type(rng).__name__}")
    return _parse_range(rng)


@functools.lru_cache(maxsize=1024)
def _parse_range(rng: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    if len(rng) > MAX_RANGE_CHARS:
        raise RangeError(f"version range longer than {MAX_RANGE_CHARS} characters")
    if not _RANGE.fullmatch(rng):
        bad = next((c for c in rng.split(",") if not _CLAUSE.fullmatch(c.strip(" "))), None)
        what = f"cannot read {bad[:60]!r} in" if bad is not None else "white space at the ends of"
        raise RangeError(f"{what} version range {rng[:80]!r}: a range is 'any' or clauses OP NUMBER separated by "
                         "commas, OP one of == != >= <= > < ~=, NUMBER such as 6 or 6.2.1 (at most "
                         f"{MAX_DIGITS} digits a part)")
    if rng == "any":
        return ()
    return tuple((m.group(1), tuple(int(x) for x in m.group(2).split(".")))
                 for m in (cast(re.Match, _CLAUSE.fullmatch(c.strip(" "))) for c in rng.split(",")))


def is_empty(rng: str) -> bool:
    """Whether no version can lie in the range (a reversed range such as '>=7,<6'). Conservative: '!=' clauses
    are ignored, so a range it calls empty is empty. Raises RangeError like parse_range."""
    lo: tuple[int, ...] = (0,)
    hi = None
    for op, b in parse_range(rng):
        lows, highs = [], []
        if op in (">=", "==", "=", "~="):
            lows.append((b, False))
        elif op == ">":
            lows.append((b, True))
        if op in ("==", "=", "<="):
            highs.append(_next(b))
        elif op == "<":
            highs.append(b)
        elif op == "~=":
            highs.append(_next(b[:max(1, len(b) - 1)]))
        for x, opn in lows:
            c = _cmp(x, lo)
            if c > 0 or (c == 0 and opn):
                lo = x
        for x in highs:
            hi = x if hi is None or _cmp(x, hi) < 0 else hi
    # Every upper bound is exclusive; between two different versions there is always another one.
    return hi is not None and _cmp(lo, hi) >= 0


def in_range(v: str | tuple, rng: str) -> bool | None:
    """Whether version v lies in range rng (None: v cannot be read as a version; RangeError: rng cannot be
    read). '~=6.2' means >=6.2,<7; '==6.2' matches 6.2 and every 6.2.x."""
    clauses = parse_range(rng)
    ver = parse(v) if isinstance(v, str) else v
    if ver is None:
        return None
    for op, bound in clauses:
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
    """The smallest upper bound a range states ('<7.0' -> (7, 0)), or None when it is open-ended. Raises
    RangeError like parse_range."""
    best = None
    for op, b in parse_range(rng):
        if op in ("<", "<="):
            best = b if best is None or _cmp(b, best) < 0 else best
    return best


def line_in_range(line: str | tuple, rng: str) -> bool | None:
    """Whether some version of release line `line` ('7.2': 7.2, 7.2.1, ...) lies in range rng: the site's ROCm
    filter lists an entry under 7.2 when a 7.2.x release can be affected ('>=7.2.1' is, '<7.2' is not). None:
    line is not a version; RangeError: rng cannot be read.

    Exact without knowing the patch releases: the range is an interval less '!=' holes, so its first version in
    the line is the line's start, a '>=' / '==' / '~=' bound, a version just above a '>' bound, or the version
    after a hole; each of those is tried."""
    base = parse(line) if isinstance(line, str) else line
    if base is None:
        return None
    clauses = parse_range(rng)
    depth = max([len(base)] + [len(b) for _, b in clauses]) + 1   # deeper than every bound: nothing fits between
    points = [base]
    for _op, b in clauses:
        points += [b, b + (0,) * (depth - 1 - len(b)) + (1,), _next(b)]
    return any(_cmp(p[:len(base)], base) == 0 and in_range(p, rng) for p in points)   # p is in the line
