"""The portable signature regex subset.

A signature must mean the same thing to RE2 (the CLI's engine, linear time), to JavaScript's RegExp (the paste
page) and to Python's re (used only to parse). This module checks a pattern against that subset and extracts the
literal text every match must contain (used to prefilter big logs and to measure how specific a pattern is).
"""
from __future__ import annotations

import functools
import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

from errbook.errors import ErrbookError

MIN_ANCHOR = 4          # every pattern must contain a literal of at least this many characters
MAX_UNBOUNDED = 4       # unbounded repeats per pattern
MAX_NESTED_REPEAT = 16  # a repeated group may itself contain repeats only when its own bound is this small

_ALLOWED_AT = {C.AT_BEGINNING, C.AT_END, C.AT_BOUNDARY, C.AT_NON_BOUNDARY}
_ALLOWED_CATEGORY = {C.CATEGORY_DIGIT, C.CATEGORY_NOT_DIGIT, C.CATEGORY_SPACE, C.CATEGORY_NOT_SPACE,
                     C.CATEGORY_WORD, C.CATEGORY_NOT_WORD}


class SubsetError(ErrbookError, ValueError):
    pass


def _check_source(p: str) -> None:
    for bad, why in (("(?P", "named groups (Python-only syntax)"), ("(?<", "named groups or lookbehind"),
                     ("(?=", "lookahead"), ("(?!", "lookahead"), ("(?i", "inline flags (use ignore_case)"),
                     ("(?m", "inline flags"), ("(?s", "inline flags"), ("(?x", "inline flags"), ("(?#", "comments"),
                     ("{,", "'{,n}' (JavaScript reads it literally)"), ("\\Z", "\\Z"), ("\\A", "\\A"),
                     ("\\z", "\\z"), ("\\p", "\\p classes"), ("\\P", "\\P classes"), ("\\N", "\\N escapes"),
                     ("\\u", "\\u escapes"), ("\\U", "\\U escapes")):
        if bad in p:
            raise SubsetError(f"not in the portable subset: {why}")
    if re.search(r"\\[1-9]", p) or re.search(r"\\0", p):
        raise SubsetError("not in the portable subset: backreferences or octal escapes")
    if re.search("[\U00010000-\U0010ffff\ufffd]", p):
        raise SubsetError("characters outside the BMP (and U+FFFD) are not portable: log text has them replaced")
    esc = in_class = False
    first = -1                                          # where the open class's first member is
    for i, ch in enumerate(p):
        if esc:
            esc = False
        elif ch == "\\":
            esc = True
        elif in_class:
            if ch == "[":
                raise SubsetError("'[' inside a character class (RE2 reads [:alpha:] as a POSIX class, "
                                  "JavaScript as characters): escape it as \\[")
            if ch == "^" and i == first and p[i - 1] == "[":
                first = i + 1
            elif ch == "]" and i == first:
                # Python and RE2 read a ']' first in a class as a member; JavaScript closes the class there
                # ('[]' matches nothing, '[^]' any character), so the pattern means different things
                raise SubsetError("']' first in a character class ('[]' or '[^]'): Python and RE2 read it as a "
                                  "literal ']', JavaScript as an empty class or any character: escape it as \\]")
            elif ch == "]":
                in_class = False
        elif ch == "[":
            in_class, first = True, i + 1


def _walk(items, in_repeat_bound: int | None, counts: dict) -> None:
    for op, av in items:
        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY):
            continue
        if op is C.IN:
            for iop, iav in av:
                if iop is C.CATEGORY and iav not in _ALLOWED_CATEGORY:
                    raise SubsetError(f"character class category {iav} not portable")
                if iop not in (C.LITERAL, C.RANGE, C.CATEGORY, C.NEGATE):
                    raise SubsetError(f"character class item {iop} not portable")
            continue
        if op is C.AT:
            if av not in _ALLOWED_AT:
                raise SubsetError(f"anchor {av} not portable")
            continue
        if op is C.SUBPATTERN:
            group, add_flags, del_flags, sub = av
            if add_flags or del_flags:
                raise SubsetError("inline flags are not portable")
            _walk(sub, in_repeat_bound, counts)
            continue
        if op is C.BRANCH:
            if in_repeat_bound is not None and in_repeat_bound > MAX_NESTED_REPEAT:
                raise SubsetError("alternation inside an unbounded repeat (can backtrack exponentially)")
            for b in av[1]:
                _walk(b, in_repeat_bound, counts)
            continue
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, sub = av
            unbounded = hi is C.MAXREPEAT
            if unbounded:
                counts["unbounded"] += 1
            if in_repeat_bound is not None and (in_repeat_bound > MAX_NESTED_REPEAT or unbounded):
                raise SubsetError("nested repeats (a repeat inside an unbounded or large repeat) are not allowed")
            simple = all(o in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN) for o, _ in sub)
            _walk(sub, None if simple else (MAX_NESTED_REPEAT + 1 if unbounded else hi), counts)
            continue
        raise SubsetError(f"construct {op} is not in the portable subset")


# --- backtracking shape ----------------------------------------------------------------------------------
# The paste page runs signatures with JavaScript's backtracking RegExp. A wide repeat (unbounded, or more than
# MAX_NESTED_REPEAT) is *ambiguous* when what follows it can start with a character the repeat also takes:
# a failing match then retries every split. One ambiguous repeat costs O(line) per start; two cost O(line^2)
# ('marker.*.*zzzz' on a 4 KB line runs for seconds). So a pattern may hold at most one, and may not start with
# a wide repeat (useless in a search, and it multiplies the work by the line length).
MAX_AMBIGUOUS = 1
_ALPHABET = [chr(c) for c in range(128)] + ["\u00e9", "\u4e2d", "\ufffd"]
_CAT = {C.CATEGORY_DIGIT: str.isdigit, C.CATEGORY_SPACE: lambda c: c in " \t\n\r\f\v",
        C.CATEGORY_WORD: lambda c: c.isascii() and (c.isalnum() or c == "_")}
_CAT[C.CATEGORY_NOT_DIGIT] = lambda c: not _CAT[C.CATEGORY_DIGIT](c)
_CAT[C.CATEGORY_NOT_SPACE] = lambda c: not _CAT[C.CATEGORY_SPACE](c)
_CAT[C.CATEGORY_NOT_WORD] = lambda c: not _CAT[C.CATEGORY_WORD](c)


def _charset(op, av, ic: bool) -> frozenset | None:
    """Characters of _ALPHABET one single-character item matches (None: not a single-character item)."""
    if op is C.LITERAL:
        out = {chr(av)}
    elif op is C.NOT_LITERAL:
        out = {c for c in _ALPHABET if c != chr(av)}
    elif op is C.ANY:
        out = {c for c in _ALPHABET if c != "\n"}
    elif op is C.IN:
        neg = any(o is C.NEGATE for o, _ in av)

        def has(c):
            for o, a in av:
                if o is C.LITERAL and c == chr(a) or o is C.RANGE and a[0] <= ord(c) <= a[1] \
                        or o is C.CATEGORY and _CAT[a](c):
                    return True
            return False
        out = {c for c in _ALPHABET if has(c) != neg}
    else:
        return None
    if ic:
        out |= {c.swapcase() for c in out if c.isascii()}
    return frozenset(out)


def _first(items, ic: bool) -> tuple[frozenset, bool]:
    """(characters a match of the sequence can start with, whether it can match empty)."""
    acc: set = set()
    for op, av in items:
        cs = _charset(op, av, ic)
        if cs is not None:
            return frozenset(acc | cs), False
        if op is C.AT:
            continue
        if op is C.SUBPATTERN:
            f, nullable = _first(av[3], ic)
        elif op is C.BRANCH:
            fs = [_first(b, ic) for b in av[1]]
            f, nullable = frozenset().union(*(x[0] for x in fs)), any(x[1] for x in fs)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            f, nullable = _first(av[2], ic)
            nullable = nullable or av[0] == 0
        else:
            return frozenset(acc), False
        acc |= f
        if not nullable:
            return frozenset(acc), False
    return frozenset(acc), True


def _ambiguous(items, follow: frozenset | None, ic: bool, found: list) -> None:
    """Collect wide repeats whose character set meets what may follow them. follow=None: the pattern ends
    (nothing after can fail, so a repeat there never backtracks)."""
    items = list(items)
    for i, (op, av) in enumerate(items):
        rest_first, rest_nullable = _first(items[i + 1:], ic)
        fol = rest_first if not rest_nullable else (None if follow is None else rest_first | follow)
        if op is C.SUBPATTERN:
            _ambiguous(av[3], fol, ic, found)
        elif op is C.BRANCH:
            for b in av[1]:
                _ambiguous(b, fol, ic, found)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, body = av
            wide = hi is C.MAXREPEAT or hi > MAX_NESTED_REPEAT
            body = list(body)
            cs = _charset(body[0][0], body[0][1], ic) if len(body) == 1 else None
            if wide and cs is not None and fol is not None and cs & fol:
                found.append(i)
            elif cs is None:
                bf = _first(body, ic)[0]
                _ambiguous(body, bf if fol is None else bf | fol, ic, found)


def _literal_runs(items) -> list[str]:
    """Literal strings that any match must contain, from the top-level concatenation."""
    runs: list[str] = []
    cur: list[str] = []
    for op, av in items:
        if op is C.LITERAL:
            cur.append(chr(av))
            continue
        if cur:
            runs.append("".join(cur))
            cur = []
        if op is C.SUBPATTERN:
            runs.extend(_literal_runs(av[3]))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
            inner = _literal_runs(av[2])
            runs.extend(inner[:1])
    if cur:
        runs.append("".join(cur))
    return runs


def _requirements(items) -> list[frozenset]:
    """Sets of literals of which every match contains at least one (alternations give several members)."""
    reqs = [frozenset([r.strip()]) for r in _literal_runs(items) if len(r.strip()) >= MIN_ANCHOR]
    for op, av in items:
        sub = None
        if op is C.SUBPATTERN:
            sub = av[3]
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
            sub = av[2]
        if sub is not None:
            reqs += [r for r in _requirements(list(sub)) if len(r) > 1]
            for o2, a2 in sub:
                if o2 is C.BRANCH:
                    reqs += _branch_requirement(a2[1])
        elif op is C.BRANCH:
            reqs += _branch_requirement(av[1])
    return reqs


def _branch_requirement(branches) -> list[frozenset]:
    best = []
    for b in branches:
        r = _requirements(list(b))
        if not r:
            return []
        best.append(max(r, key=_req_score))
    return [frozenset().union(*best)]


# Words so common in ordinary build and runtime output that they make poor prefilter anchors.
_COMMON = {"error", "error:", "errors", "warning", "warning:", "failed", "failure", "cannot", "unable", "invalid",
           "undefined", "reference", "function", "module", "size", "rocm", "found", "file", "with", "from",
           "device", "memory", "kernel", "version", "library", "support", "supported", ": error:"}


def _anchor_score(run: str) -> tuple:
    """Prefer the literal least likely to occur in ordinary log lines: identifiers (underscores, digits,
    inner capitals) and long multi-word phrases beat short common words such as 'error' or 'size'."""
    ident = bool(re.search(r"[_0-9]|[a-z][A-Z]", run))
    common = run.lower() in _COMMON
    return (len(run) + (12 if ident else 0) - (20 if common else 0), run)


def _req_score(req) -> tuple:
    return min(_anchor_score(r) for r in req)


def parse(pattern: str):
    try:
        return sre_parse.parse(pattern, re.ASCII)
    except re.error as e:
        raise SubsetError(f"does not compile: {e}") from None


@functools.lru_cache(maxsize=4096)
def check(pattern: str, ignore_case: bool = False, need_anchor: bool = True) -> dict:
    """Raise SubsetError if pattern is not portable; else return {'anchor', 'literal_chars'}."""
    _check_source(pattern)
    if ignore_case and not pattern.isascii():
        raise SubsetError("ignore_case patterns must be ASCII (case folding differs between engines)")
    tree = parse(pattern)
    if tree.state.groupdict:
        raise SubsetError("named groups are not portable")
    counts = {"unbounded": 0}
    _walk(list(tree), None, counts)
    if counts["unbounded"] > MAX_UNBOUNDED:
        raise SubsetError(f"more than {MAX_UNBOUNDED} unbounded repeats")
    items = [it for it in tree if it[0] is not C.AT]
    if items and items[0][0] in (C.MAX_REPEAT, C.MIN_REPEAT) and (
            items[0][1][1] is C.MAXREPEAT or items[0][1][1] > MAX_NESTED_REPEAT):
        raise SubsetError("starts with a wide repeat: drop it (a search finds the match anywhere anyway)")
    amb: list = []
    _ambiguous(list(tree), None, ignore_case, amb)
    if len(amb) > MAX_AMBIGUOUS:
        raise SubsetError(f"{len(amb)} wide repeats that can take the same characters as what follows them "
                          f"(at most {MAX_AMBIGUOUS}: more makes the browser engine backtrack polynomially); "
                          "use a narrower class such as [^ ]* or \\S+ before a space, or a bounded repeat")
    runs = _literal_runs(list(tree))
    reqs = _requirements(list(tree))
    if not reqs and not need_anchor:
        return {"anchors": [], "literal_chars": sum(len(r.strip()) for r in runs)}
    if not reqs:
        raise SubsetError(f"needs a literal of at least {MIN_ANCHOR} characters that every match contains "
                          "(it anchors the fast prefilter and keeps the pattern specific)")
    best = sorted(max(reqs, key=_req_score))
    return {"anchors": [a.lower() for a in best] if ignore_case else best,
            "literal_chars": sum(len(r.strip()) for r in runs)}
