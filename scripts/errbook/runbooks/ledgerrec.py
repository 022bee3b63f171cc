"""What a valid ledger record is: the one check used by `errbook ledger`, the site and the writer.

The ledger is a file anyone can change in a pull request, so every field the CLI or the site uses is checked
for type and allowed values here; a record that fails is reported (with its line) and used nowhere.
"""
from __future__ import annotations

import datetime as dt
import math
import re

OUTCOMES = ("passed", "failed", "error", "crashed", "timeout", "skipped")
TIERS = ("static", "toolchain", "gpu", "rocm")       # platform.TIERS, repeated here to keep this module import-free
REQUIRED = ("entry", "runbook", "outcome", "tiers", "fingerprint", "date", "commit")

ENTRY_RE = re.compile(r"RMN-[0-9]{4}")
RUNBOOK_RE = re.compile(r"runbooks/(compile|runtime|performance)/RMN-[0-9]{4}\.ipynb")
DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
COMMIT_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z._+-]{0,63}")    # a sha, "+dirty", "unknown" or $ERRBOOK_COMMIT
NOTEBOOK_RE = re.compile(r"docs/verification/runs/[A-Za-z0-9][A-Za-z0-9._+()-]{0,150}\.ipynb")
DIGEST_RE = re.compile(r"v1:[0-9a-f]{64}")      # verified.digest: what the run verified
MAX_TEXT = 4000        # platform_label, reason, requested_tiers and fingerprint values are at most this long


def _text(v, limit: int = MAX_TEXT) -> str | None:
    if not isinstance(v, str):
        return f"must be a string, not {type(v).__name__}"
    if len(v) > limit:
        return f"longer than {limit} characters"
    return None


def _match(v, rx: re.Pattern, what: str) -> str | None:
    if not isinstance(v, str):
        return f"must be a string, not {type(v).__name__}"
    return None if rx.fullmatch(v) else f"must be {what}"


def tier_problems(name, v) -> list[tuple[str, str]]:
    where = f"tiers.{name}" if isinstance(name, str) and len(name) < 20 and name.isidentifier() else "tiers"
    if name not in TIERS:
        return [(where, f"unknown tier (tiers are {', '.join(TIERS)})")]
    if not isinstance(v, dict):
        return [(where, f"must be a mapping with an outcome, not {type(v).__name__}")]
    out = []
    if v.get("outcome") not in OUTCOMES or not isinstance(v.get("outcome"), str):
        out.append((f"{where}.outcome", f"must be one of {', '.join(OUTCOMES)}"))
    for k in ("checks", "passed"):
        if k in v and (type(v[k]) is not int or v[k] < 0):
            out.append((f"{where}.{k}", "must be a count (an integer >= 0)"))
    if "reason" in v and (why := _text(v["reason"])):
        out.append((f"{where}.reason", why))
    return out


def fingerprint_problem(fp) -> str | None:
    if not isinstance(fp, dict):
        return f"must be a mapping, not {type(fp).__name__}"
    if len(fp) > 50 or any(v is not None and (not isinstance(v, str) or len(v) > 200) for v in fp.values()):
        return "values must be short strings (or null)"
    return None


def problems(rec) -> list[tuple[str, str]]:
    """(field, message) for everything wrong with one record; [] when it may be used."""
    if not isinstance(rec, dict):
        return [("", f"a record must be a JSON object, not {type(rec).__name__}")]
    missing = [k for k in REQUIRED if k not in rec]
    if missing:
        return [("", f"record lacks required fields {missing}")]
    out: list[tuple[str, str]] = []

    def check(field: str, why: str | None) -> None:
        if why:
            out.append((field, why))

    check("entry", _match(rec["entry"], ENTRY_RE, "an entry id (RMN-NNNN)"))
    check("runbook", _match(rec["runbook"], RUNBOOK_RE, "runbooks/<class>/RMN-NNNN.ipynb"))
    o = rec["outcome"]
    check("outcome", None if isinstance(o, str) and o in OUTCOMES else f"must be one of {', '.join(OUTCOMES)}")
    tiers = rec["tiers"]
    if not isinstance(tiers, dict):
        out.append(("tiers", f"must be a mapping of tier to result, not {type(tiers).__name__}"))
    else:
        for name, v in tiers.items():
            out += tier_problems(name, v)
    check("fingerprint", fingerprint_problem(rec["fingerprint"]))
    d = rec["date"]
    why = _match(d, DATE_RE, "a UTC time YYYY-MM-DDTHH:MM:SSZ")
    if not why:
        try:
            dt.datetime.strptime(d, "%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            why = "is not a real date and time"
    check("date", why)
    check("commit", _match(rec["commit"], COMMIT_RE, "a commit id (letters, digits, . _ + -; at most 64)"))
    if "notebook" in rec:
        nb = rec["notebook"]
        check("notebook", _match(nb, NOTEBOOK_RE, "a notebook under docs/verification/runs/")
              or (".." in nb and "must not contain '..'") or None)
    if "seconds" in rec:
        s = rec["seconds"]
        ok = type(s) in (int, float) and math.isfinite(s) and s >= 0
        check("seconds", None if ok else "must be a number of seconds >= 0")
    if "digest" in rec:
        check("digest", _match(rec["digest"], DIGEST_RE, "a content digest (v1:<64 hex digits>)"))
    for k in ("platform_label", "reason", "requested_tiers"):
        if k in rec:
            check(k, _text(rec[k]))
    return out
