"""Entry data every reader can rely on: the schema check, the checks of fields that code reads (version ranges,
runbook parameters), duplicate ids, and usable_entries(): the entries that load and pass them.

The bottom of the knowledge base: triage, runbooks and the site read entries through usable_entries (or check
what they publish with schema_findings); validate.py adds the cross-checks that need the other parts."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jsonschema

from errbook.common import paths
from errbook.kb import entries as entries_mod
from errbook.kb import fixsteps, parameters, versions


@dataclass
class Finding:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field or '<entry>'}: {self.message}"


def field_name(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(paths.SCHEMA_PATH.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _validator():
    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    return cls(schema(), format_checker=None)


@lru_cache(maxsize=1)
def _fast_check():
    """fastjsonschema compiles the schema to Python: a quick yes for valid entries (most of them). Only an
    entry it rejects goes through jsonschema, which reports every error with its path."""
    try:
        import fastjsonschema
    except ImportError:
        return None
    s = dict(schema())
    s["$schema"] = "http://json-schema.org/draft-07/schema#"
    try:
        return fastjsonschema.compile(s)
    except Exception:
        return None


def schema_findings(e: entries_mod.Entry) -> list[Finding]:
    fast = _fast_check()
    if fast is not None:
        try:
            fast(e.data)
            return []
        except Exception:
            pass
    out = []
    for err in _validator().iter_errors(e.data):
        path = tuple(err.absolute_path)
        msg = err.message
        if err.validator == "required":
            # Point at the mapping that lacks the key, name the key in the field.
            missing = msg.split("'")[1] if "'" in msg else ""
            fpath = path + ((missing,) if missing else ())
            out.append(Finding(e.rel, e.line_of(path), field_name(fpath), msg))
            continue
        if err.validator == "additionalProperties":
            extra = [k for k in (err.instance or {}) if k not in err.schema.get("properties", {})]
            for k in extra:
                out.append(Finding(e.rel, e.line_of(path + (k,)), field_name(path + (k,)), "unknown field"))
            continue
        if len(msg) > 300:
            msg = msg[:300] + "…"
        out.append(Finding(e.rel, e.line_of(path), field_name(path), msg))
    return out


def as_list(v) -> list:
    """A field that should be a list: itself when it is one, else [] (the schema finding names the problem)."""
    return v if isinstance(v, list) else []


def str_or_none(v) -> str | None:
    return v if isinstance(v, str) else None


def duplicate_id_findings(all_entries: list[entries_mod.Entry]) -> list[Finding]:
    """An id or alias used by two entries (the site would silently keep one page)."""
    out: list[Finding] = []
    owner: dict[str, entries_mod.Entry] = {}
    for e in all_entries:
        names = [(("id",), e.get("id"))] + [(("aliases", i), a) for i, a in enumerate(as_list(e.get("aliases")))]
        for fpath, name in names:
            if not isinstance(name, str):
                continue
            if name in owner and owner[name] is not e:
                out.append(Finding(e.rel, e.line_of(fpath), field_name(fpath),
                                   f"'{name}' is already used by {owner[name].rel}"))
            else:
                owner[name] = e
    return out


def range_fields(data: dict):
    """(field path, value) of every version range in an entry: applies_to, triggers.rocm_versions,
    triggers.frameworks and the `version` operator of machine checks."""
    for i, a in enumerate(as_list(data.get("applies_to"))):
        if isinstance(a, dict) and "versions" in a:
            yield ("applies_to", i, "versions"), a["versions"]
    t = data.get("triggers")
    if not isinstance(t, dict):
        return
    for i, r in enumerate(as_list(t.get("rocm_versions"))):
        yield ("triggers", "rocm_versions", i), r
    for i, f in enumerate(as_list(t.get("frameworks"))):
        if isinstance(f, dict) and "versions" in f:
            yield ("triggers", "frameworks", i, "versions"), f["versions"]
    for i, chk in enumerate(as_list(t.get("checks"))):
        for j, cond in enumerate(as_list(chk.get("when")) if isinstance(chk, dict) else []):
            if isinstance(cond, dict) and "version" in cond:
                yield ("triggers", "checks", i, "when", j, "version"), cond["version"]


def data_findings(e: entries_mod.Entry, unreadable_only: bool = False) -> list[Finding]:
    """Entry data every reader must be able to use, checked by the code that uses it: version ranges
    (versions.parse_range), the fix list's confirm and fix steps (fixsteps.py) and runbook parameters
    (parameters.py). With unreadable_only, a range that parses
    but holds no version (reversed, '>=7,<6') is not reported: it misleads, but breaks no reader."""
    out = []
    for path, rng in range_fields(e.data):
        try:
            if versions.is_empty(rng) and not unreadable_only:
                out.append(Finding(e.rel, e.line_of(path), field_name(path),
                                   f"version range {rng!r} holds no version (is it reversed?)"))
        except versions.RangeError as ex:
            out.append(Finding(e.rel, e.line_of(path), field_name(path), str(ex)))
    out += [Finding(e.rel, e.line_of(path), field_name(path), msg) for path, msg in fixsteps.problems(e.get("fix"))]
    ver = e.get("verification")
    if isinstance(ver, dict):
        for sub, msg in parameters.problems(ver.get("parameters")):
            path = ("verification", "parameters") + sub
            out.append(Finding(e.rel, e.line_of(path), field_name(path), msg))
    return out


def usable_entries(root: Path) -> tuple[list[entries_mod.Entry], list[str]]:
    """Entries every reader can rely on (loaded and schema-valid), and a warning for each file left out.
    For readers other than validate: run, the site, triage. Ids are not deduplicated here."""
    loaded, errors = entries_mod.load_all(root)
    warnings = [f"skipping {err.kind} {err}" for err in errors]
    usable = []
    for e in loaded:
        bad = data_findings(e, unreadable_only=True) or schema_findings(e)   # the first in plainer words
        if bad:
            warnings.append(f"skipping invalid {bad[0]}" + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""))
        else:
            usable.append(e)
    return usable, warnings
