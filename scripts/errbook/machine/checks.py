"""Machine-checkable triggers: evaluate an entry's `triggers.checks` over collected facts (facts.py).

A check holds when ALL its conditions hold; an entry applies to a machine when ANY of its checks holds.
Each condition names one fact and one operator. Three-valued, and simple enough to port to JavaScript as is:

- the fact is missing from the facts      -> unknown ("could not check"; never a finding)
- `present: true|false`                   -> whether the value is not null
- value null (known absent: unset, none)  -> positive operators false, negative (not_*) operators true
- equals / not_equals                     -> same JSON type and value (true is not 1)
- in / not_in                             -> the value is one of the list; for a list fact: some item is
- matches / not_matches                   -> a search with a portable regex (RegExp.test); list: some item
- contains / not_contains                 -> substring of a string, or an item of a list
- version                                 -> versions.in_range (a range such as ">=6.2,<7.0"); list: some item;
                                             a value that is not a version -> unknown
- count_gte / count_lte                   -> length of a list
- gte / lte                               -> an integer fact compared with a number
The not_* operators are exactly the negation of their positive form (unknown stays unknown). A check
combines its conditions with AND where false wins over unknown: a check with one false condition is false
even if another fact is missing.
"""
from __future__ import annotations

import functools
import re

from errbook.errors import ErrbookError
from errbook.kb import regexsubset, versions
from errbook.machine import facts as facts_mod

OPERATORS = ("present", "equals", "not_equals", "in", "not_in", "matches", "not_matches", "version",
             "contains", "not_contains", "count_gte", "count_lte", "gte", "lte")
NEGATIVE = {"not_equals": "equals", "not_in": "in", "not_matches": "matches", "not_contains": "contains"}
_STR_OPS = {"present", "equals", "not_equals", "in", "not_in", "matches", "not_matches", "contains", "not_contains"}
OPS_BY_TYPE = {
    "bool": {"present", "equals", "not_equals"},
    "int": {"present", "equals", "not_equals", "in", "not_in", "gte", "lte"},
    "str": _STR_OPS,
    "version": _STR_OPS | {"version"},
    "list": {"present", "in", "not_in", "matches", "not_matches", "contains", "not_contains", "version",
             "count_gte", "count_lte"},
}
BONUS = 20   # triage score points for an entry one of whose checks holds on the machine the log came from
# What assets/engine.js ports this module with, beyond its literal OPERATORS and NEGATIVE (tests/test_twins.py
# keeps those equal): the bonus, at the top level of the bundle.
JS_SPEC = {"check_bonus": BONUS}


@functools.lru_cache(maxsize=512)
def _rx(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.ASCII)


def operator_of(cond: dict) -> str | None:
    ops = [k for k in cond if k in OPERATORS]
    return ops[0] if len(ops) == 1 else None


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _positive(op: str, arg, v):
    if v is None:
        return False
    if isinstance(v, list):
        if op == "in":
            return any(_same(x, a) for x in v for a in arg)
        if op == "matches":
            return any(isinstance(x, str) and _rx(arg).search(x) is not None for x in v)
        if op == "contains":
            return any(_same(x, arg) for x in v)
        if op == "count_gte":
            return len(v) >= arg
        if op == "count_lte":
            return len(v) <= arg
        if op == "version":
            return any(isinstance(x, str) and versions.in_range(x, arg) is True for x in v)
        return False
    if op == "equals":
        return _same(v, arg)
    if op == "in":
        return any(_same(v, a) for a in arg)
    if op == "matches":
        return isinstance(v, str) and _rx(arg).search(v) is not None
    if op == "contains":
        return isinstance(v, str) and isinstance(arg, str) and arg in v
    if op == "version":
        return versions.in_range(v, arg) if isinstance(v, str) else False
    if op in ("gte", "lte"):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return False
        return v >= arg if op == "gte" else v <= arg
    return False


def holds(cond: dict, values: dict) -> bool | None:
    """True / False / None (unknown: the fact was not collected, or a version cannot be read)."""
    name, op = cond.get("fact"), operator_of(cond)
    if op is None or name not in values:
        return None
    v, arg = values[name], cond[op]
    if op == "present":
        return (v is not None) == bool(arg)
    if op in NEGATIVE:
        r = _positive(NEGATIVE[op], arg, v)
        return None if r is None else not r
    return _positive(op, arg, v)


def _and(states: list) -> bool | None:
    if any(s is False for s in states):
        return False
    if any(s is None for s in states):
        return None
    return True


# --- plain words ------------------------------------------------------------------------------------------

def _lit(x) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, str):
        return "an empty string" if x == "" else f"'{x}'"
    return str(x)


def _items(xs) -> str:
    return ", ".join(str(x) for x in xs)


def fact_label(name: str) -> str:
    return name[4:] if name.startswith("env.") else name


def describe(cond: dict, code: bool = False) -> str:
    """A condition in plain words, e.g. "HSA_OVERRIDE_GFX_VERSION does not match ^[0-9]+$" (code=True puts
    the fact and the pattern in Markdown code spans, for the site)."""
    name, op = cond.get("fact", "?"), operator_of(cond)
    d = facts_mod.VOCAB.get(name)
    is_list = d is not None and d.type == "list"
    is_env = name.startswith("env.")
    label = f"`{fact_label(name)}`" if code else fact_label(name)
    if op is None:
        return f"{label}: (no single operator)"
    arg = cond[op]
    if code and op in ("matches", "not_matches", "version", "contains", "not_contains") and isinstance(arg, str):
        arg = f"`{arg}`" if arg else arg
    if op == "present":
        if is_env:
            return f"{label} is {'set' if arg else 'unset'}"
        return f"{label} is {'present' if arg else 'absent'}"
    words = {
        "equals": f"is {_lit(arg)}", "not_equals": f"is not {_lit(arg)}",
        "in": ((f"includes one of {_items(arg)}" if is_list else f"is one of {_items(arg)}")
               if isinstance(arg, list) else ""),
        "not_in": ((f"includes none of {_items(arg)}" if is_list else f"is none of {_items(arg)}")
                   if isinstance(arg, list) else ""),
        "matches": f"has an item matching {arg}" if is_list else f"matches {arg}",
        "not_matches": f"has no item matching {arg}" if is_list else f"does not match {arg}",
        "version": f"has a version in {arg}" if is_list else f"is a version in {arg}",
        "contains": f"includes {arg}" if is_list else f"contains {arg if code else _lit(arg)}",
        "not_contains": f"does not include {arg}" if is_list else f"does not contain {arg if code else _lit(arg)}",
        "count_gte": f"has at least {arg} item{'s' if arg != 1 else ''}",
        "count_lte": "is empty" if arg == 0 else f"has at most {arg} item{'s' if arg != 1 else ''}",
        "gte": f"is at least {arg}", "lte": f"is at most {arg}",
    }
    return f"{label} {words[op]}"


def render_value(name: str, v) -> str:
    if v is None:
        return "(unset)" if name.startswith("env.") else "(none)"
    if isinstance(v, list):
        return "[" + ", ".join(str(x) for x in v[:12]) + (", ..." if len(v) > 12 else "") + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return repr(v if len(v) <= 160 else v[:157] + "...")
    return str(v)


# --- evaluation -------------------------------------------------------------------------------------------

def field_name(path: tuple) -> str:
    """('triggers', 'checks', 0, 'when', 1) -> 'triggers.checks[0].when[1]' (as validate names fields)."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


class CheckError(ErrbookError, ValueError):
    """A check that cannot be evaluated (a version range that cannot be read); path is its field path in the
    entry, so the reader can say file:line: field and go on with the other entries."""

    def __init__(self, path: tuple, message: str):
        super().__init__(message)
        self.path, self.message = path, message


def evaluate_check(check: dict, values: dict, sources: dict | None = None, path: tuple = ()) -> dict:
    sources = sources or {}
    conds = []
    for j, c in enumerate(check.get("when") or []):
        name = c.get("fact")
        try:
            st = holds(c, values)
        except versions.RangeError as ex:
            raise CheckError(path + ("when", j, "version"), str(ex)) from None
        known = name in values
        conds.append({"fact": name, "test": describe(c), "holds": st,
                      "value": values.get(name) if known else None, "known": known,
                      "shown": render_value(name, values.get(name)) if known else "(not collected)",
                      "source": sources.get(name, "")})
    show = [{"fact": n, "shown": render_value(n, values[n]), "value": values[n], "source": sources.get(n, "")}
            for n in check.get("show") or [] if n in values]
    return {"id": check.get("id"), "says": check.get("says"), "says_zh": check.get("says_zh"),
            "holds": _and([c["holds"] for c in conds]), "conditions": conds, "show": show,
            "missing": sorted({c["fact"] for c in conds if not c["known"]})}


def evaluate_entry(data: dict, values: dict, sources: dict | None = None) -> dict:
    """state: applies (a check holds), clear (every check is false), unknown (none holds, some could not be
    checked), not_checkable (the entry says so) or unchecked (the entry has neither). Raises CheckError."""
    t = data.get("triggers") or {}
    checks = t.get("checks") or []
    if not checks:
        return {"id": data.get("id"), "state": "not_checkable" if t.get("not_checkable") else "unchecked",
                "checks": []}
    res = [evaluate_check(c, values, sources, ("triggers", "checks", i)) for i, c in enumerate(checks)]
    if any(r["holds"] is True for r in res):
        state = "applies"
    elif any(r["holds"] is None for r in res):
        state = "unknown"
    else:
        state = "clear"
    return {"id": data.get("id"), "state": state, "checks": res}


# --- for triage -------------------------------------------------------------------------------------------

def to_log_facts(values: dict) -> dict:
    """Doctor facts in the shape of logfacts.from_notes(): {gfx: [...], rocm: '6.2.0', torch: '2.5.1', env: [...]}."""
    out: dict = {}
    gfx = values.get("gpu.runtime_gfx") or values.get("gpu.gfx") or values.get("torch.gfx")
    if isinstance(gfx, list) and gfx:
        out["gfx"] = sorted(set(gfx))
    rocm = values.get("rocm.default_version") or values.get("torch.hip")
    if isinstance(rocm, str) and (rv := versions.parse(rocm)):
        out["rocm"] = ".".join(str(x) for x in rv[:3])
    tv = values.get("torch.version")
    if isinstance(tv, str) and (pv := versions.parse(tv)):
        out["torch"] = ".".join(str(x) for x in pv[:3])
    env = sorted(n[4:] for n, v in values.items() if n.startswith("env.") and v is not None)
    if env:
        out["env"] = env
    return out


def machine_bonus(entries, values: dict, problems: list | None = None) -> dict[str, tuple[int, list[str]]]:
    """{entry id: (score points, reasons)} for every entry one of whose checks holds on the machine. An entry
    whose checks cannot be evaluated gets no bonus; the reason goes to problems."""
    out = {}
    for e in entries:
        data = e.data if hasattr(e, "data") else e
        try:
            r = evaluate_entry(data, values)
        except CheckError as ex:
            if problems is not None:
                where = f"{e.rel}:{e.line_of(ex.path)}" if hasattr(e, "line_of") else str(data.get("id"))
                problems.append(f"skipping the checks of {where}: {field_name(ex.path)}: {ex}")
            continue
        if r["state"] == "applies":
            says = [c["says"] for c in r["checks"] if c["holds"] is True]
            out[data["id"]] = (BONUS, [f"this machine: {s}" for s in says])
    return out


# --- validation -------------------------------------------------------------------------------------------

def _arg_problem(op: str, typ: str, arg) -> str | None:
    scalar = "int" if typ == "int" else "bool" if typ == "bool" else "str"
    if op == "present":
        return None if isinstance(arg, bool) else "present takes true or false"
    if op in ("equals", "not_equals"):
        ok = {"bool": isinstance(arg, bool), "int": isinstance(arg, int) and not isinstance(arg, bool),
              "str": isinstance(arg, str)}[scalar]
        return None if ok else f"{op} needs a {scalar} value for a {typ} fact"
    if op in ("in", "not_in"):
        if not isinstance(arg, list) or not arg:
            return f"{op} needs a non-empty list"
        want = int if typ == "int" else str
        if not all(isinstance(a, want) and not isinstance(a, bool) for a in arg):
            return f"{op} needs a list of {'integers' if want is int else 'strings'} for a {typ} fact"
        return None
    if op in ("matches", "not_matches"):
        if not isinstance(arg, str):
            return f"{op} needs a regular expression"
        try:
            regexsubset.check(arg, False, need_anchor=False)
            re.compile(arg, re.ASCII)
        except (regexsubset.SubsetError, re.error) as e:
            return f"{op}: not a portable regular expression: {e}"
        return None
    if op == "version":
        return None   # read with every other range of the entry: validate.data_findings
    if op in ("contains", "not_contains"):
        return None if isinstance(arg, str) else f"{op} needs a string"
    if op in ("count_gte", "count_lte"):
        count = isinstance(arg, int) and not isinstance(arg, bool) and arg >= 0
        return None if count else f"{op} needs a count (integer >= 0)"
    if op in ("gte", "lte"):
        return None if isinstance(arg, (int, float)) and not isinstance(arg, bool) else f"{op} needs a number"
    return f"unknown operator {op}"


def validate_entry(data: dict) -> list[tuple[tuple, str]]:
    """Problems with an entry's checks, as (field path, message): fact names from facts.VOCAB, one operator
    valid for the fact's type, arguments of the right type, regexes in the portable subset."""
    out: list[tuple[tuple, str]] = []
    t = data.get("triggers")
    if not isinstance(t, dict):
        return out
    checks = t.get("checks")
    if checks is not None and t.get("not_checkable") is not None:
        out.append((("triggers", "not_checkable"), "an entry has either checks or not_checkable, not both"))
    if not isinstance(checks, list):
        return out
    seen = set()
    for i, chk in enumerate(checks):
        if not isinstance(chk, dict):
            continue
        base = ("triggers", "checks", i)
        if chk.get("id") in seen:
            out.append((base + ("id",), f"duplicate check id '{chk.get('id')}'"))
        seen.add(chk.get("id"))
        for j, n in enumerate(chk.get("show") or []):
            if isinstance(n, str) and n not in facts_mod.VOCAB:
                out.append((base + ("show", j), f"unknown fact '{n}' (see errbook doctor --list-facts)"))
        for j, cond in enumerate(chk.get("when") or []):
            if not isinstance(cond, dict):
                continue
            cpath = base + ("when", j)
            name = cond.get("fact")
            d = facts_mod.VOCAB.get(name) if isinstance(name, str) else None
            if d is None:
                out.append((cpath + ("fact",), f"unknown fact '{name}' (see errbook doctor --list-facts)"))
                continue
            ops = [k for k in cond if k in OPERATORS]
            if len(ops) != 1:
                out.append((cpath, f"a condition needs exactly one operator, found {len(ops)}: "
                                   f"{', '.join(ops) or 'none'}"))
                continue
            op = ops[0]
            if op not in OPS_BY_TYPE[d.type]:
                out.append((cpath + (op,), f"operator {op} does not apply to {name} ({d.type}); "
                                          f"use one of {', '.join(sorted(OPS_BY_TYPE[d.type]))}"))
                continue
            why = _arg_problem(op, d.type, cond[op])
            if why:
                out.append((cpath + (op,), why))
    return out
