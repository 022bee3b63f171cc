"""What a runbook notebook calls: declare checks by tier, run them honestly, record the outcome.

    rb = Runbook(entry_id, tiers=tiers, result_path=result_path)

    @rb.check("toolchain", "hipcc rejects the CUDA header", needs="hipcc")
    def _():
        r = toolchains.hipcc(SOURCE, offload_arch=offload_arch)
        assert r.rc != 0, r.output
        rb.expect_signature(r.output)

    rb.finish()

A check whose tier was not asked for, or whose tier or tool is missing here, is recorded as skipped with the
reason; it never counts as passed. Every tool a check uses beyond its tier's own must be declared in `needs`
(platform.needs_available lists them: a Triton check declares "triton-amd", since the toolchain tier is
available with hipcc alone); an unknown need is an error, not a silent "available". An AssertionError is 'failed'; any other exception is 'error'.
"""
from __future__ import annotations

import json
import os
import time
import traceback
from functools import lru_cache
from pathlib import Path

from . import entries, matcher, paths, platform

class Skip(Exception):
    """Raise inside a check when this machine cannot show what the check is about (say why)."""


@lru_cache(maxsize=None)
def _entry(entry_id: str):
    root = paths.repo_root()
    for p in entries.entry_files(root):
        if p.stem == entry_id:
            e = entries.load_file(p, root)
            if isinstance(e, entries.Entry):
                return e
            raise ValueError(f"{e.rel}:{e.line}: {e.message}")
    raise KeyError(f"no entry {entry_id} under {root / 'errata'}")


def _parse_tiers(tiers) -> list[str]:
    if isinstance(tiers, str):
        tiers = [t.strip() for t in tiers.split(",") if t.strip()]
    bad = [t for t in tiers if t not in platform.TIERS]
    if bad:
        raise ValueError(f"unknown tier(s) {bad}; tiers are {platform.TIERS}")
    return list(tiers)


class Runbook:
    Skip = Skip

    def __init__(self, entry_id: str, tiers="static,toolchain,gpu,rocm", result_path: str = ""):
        self.entry_id = entry_id
        self.selected = _parse_tiers(tiers)
        self.result_path = result_path
        self.platform = platform.detect()
        self.needs = platform.needs_available(self.platform)
        self.checks: list[dict] = []
        self.started = time.time()

    @property
    def entry(self):
        return _entry(self.entry_id)

    def skip_reason(self, tier: str, needs: str | tuple | None) -> str | None:
        if tier not in platform.TIERS:
            raise ValueError(f"unknown tier {tier}")
        if tier not in self.selected:
            return f"tier '{tier}' not selected for this run"
        reason = self.platform["tiers"].get(tier)
        if reason:
            return reason
        for n in ([needs] if isinstance(needs, str) else list(needs or ())):
            if n not in self.needs:   # a misspelt need must not count as available (it would run, then fail)
                raise ValueError(f"unknown need {n!r}; needs are {sorted(self.needs)}")
            if self.needs[n]:
                return self.needs[n]
        return None

    def check(self, tier: str, name: str, needs: str | tuple | None = None):
        """Decorator: run the function now as one check of the given tier, or record why it was skipped."""
        def deco(fn):
            rec = {"tier": tier, "name": name}
            reason = self.skip_reason(tier, needs)
            if reason:
                rec.update(outcome="skipped", reason=reason)
                print(f"[skipped] {tier}: {name} — {reason}")
            else:
                t0 = time.time()
                try:
                    detail = fn()
                    rec["outcome"] = "passed"
                    if detail is not None:
                        rec["detail"] = detail if isinstance(detail, (str, int, float, dict, list)) else str(detail)
                    print(f"[passed]  {tier}: {name}")
                except Skip as e:
                    rec.update(outcome="skipped", reason=str(e) or "skipped by the check")
                    print(f"[skipped] {tier}: {name} — {rec['reason']}")
                except AssertionError as e:
                    rec.update(outcome="failed", reason=(str(e) or "assertion failed")[-2000:])
                    print(f"[FAILED]  {tier}: {name}\n{rec['reason']}")
                except Exception as e:
                    rec.update(outcome="error", reason="".join(traceback.format_exception_only(e)).strip()[-2000:])
                    print(f"[ERROR]   {tier}: {name}\n{traceback.format_exc()}")
                rec["seconds"] = round(time.time() - t0, 3)
            self.checks.append(rec)
            return fn
        return deco

    def expect_signature(self, text: str, signature: str | None = None) -> list[dict]:
        """Assert that the entry's own signatures (or the named one) match captured output; return the evidence."""
        e = self.entry
        sigs = [s for s in e["signatures"] if signature is None or s["id"] == signature]
        assert sigs, f"{self.entry_id} has no signature {signature!r}"
        m = matcher.Matcher([matcher.build_signature(e.id, s) for s in sigs])
        res = m.match_text(text)
        assert res, (f"none of {self.entry_id}'s signatures {[s['id'] for s in sigs]} matched the captured output:\n"
                     + text[-3000:])
        return res[0]["evidence"]

    def expect_no_signature(self, text: str) -> None:
        e = self.entry
        m = matcher.Matcher([matcher.build_signature(e.id, s) for s in e["signatures"]])
        res = m.match_text(text)
        assert not res, f"{self.entry_id}'s signatures still match after the fix: {res[0]['evidence'][:1]}"

    def tier_outcomes(self) -> dict:
        out = {}
        for t in platform.TIERS:
            cs = [c for c in self.checks if c["tier"] == t]
            if not cs:
                continue
            kinds = {c["outcome"] for c in cs}
            if "error" in kinds:
                o = "error"
            elif "failed" in kinds:
                o = "failed"
            elif "passed" in kinds:
                o = "passed"
            else:
                o = "skipped"
            first = next(c for c in cs if c["outcome"] == o) if o != "passed" else None
            out[t] = {"outcome": o, "checks": len(cs),
                      "passed": sum(c["outcome"] == "passed" for c in cs),
                      **({"reason": f"{first['name']}: {first.get('reason', '')}"[:500]} if first else {})}
        return out

    def finish(self) -> dict:
        result = {"entry": self.entry_id, "tiers": self.tier_outcomes(), "checks": self.checks,
                  "fingerprint": self.platform["fingerprint"], "seconds": round(time.time() - self.started, 3)}
        width = max((len(c["name"]) for c in self.checks), default=10)
        print(f"\n{self.entry_id} on {platform.label(result['fingerprint'])}")
        for c in self.checks:
            print(f"  {c['tier']:<9} {c['outcome']:<8} {c['name']:<{width}}  {c.get('reason', '') if c['outcome'] != 'passed' else ''}")
        path = self.result_path or os.environ.get("ERRBOOK_RESULT")
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(json.dumps(result, indent=1), encoding="utf-8")
        failed = [c for c in self.checks if c["outcome"] in ("failed", "error")]
        if failed:
            raise RuntimeError(f"{len(failed)} check(s) failed: " + "; ".join(c["name"] for c in failed))
        return result
