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
available with hipcc alone); an unknown need is an error, not a silent "available". An AssertionError is 'failed';
any other exception is 'error'.

The reproduction's output and the fix's output are kept apart: every text `expect_signature` matched (and every
text given to `note_reproduction`) is remembered as the reproduction's output, with the lines that matched.
`expect_no_signature(text)` fails with "the fix's output still contains the reproduction's output" when `text`
holds such an output verbatim (a whole block of its lines), or every line of one piece of its evidence: a check
that reads the reproduction and the fix from one process, one log or one concatenated string fails by name,
even before a signature exists that would match the reproduction's lines.
"""
from __future__ import annotations

import json
import os
import time
import traceback
from functools import cache
from pathlib import Path
from typing import Any

from errbook.common import paths
from errbook.kb import entries
from errbook.machine import fingerprint
from errbook.machine import tiers as machine_tiers
from errbook.triage import matcher, normalize


class Skip(Exception):
    """Raise inside a check when this machine cannot show what the check is about (say why)."""


@cache
def _entry(entry_id: str):
    root = paths.repo_root()
    for p in entries.entry_files(root):
        if p.stem == entry_id:
            e = entries.load_file(p, root)
            if isinstance(e, entries.Entry):
                return e
            raise ValueError(f"{e.rel}:{e.line}: {e.message}")
    raise KeyError(f"no entry {entry_id} under {root / 'errata'}")


def _lines(text: str) -> tuple[str, ...]:
    """A captured output as lines without trailing blanks, leading and trailing empty lines dropped."""
    lines = [ln.rstrip() for ln in (text or "").splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return tuple(lines)


def _subs(raw: str) -> list[str]:
    """The cleaned sub-lines the matcher sees for one physical line (evidence is recorded in this form)."""
    return normalize.clean(normalize.cap_raw(raw))


def _contains_block(lines: tuple[str, ...], block: tuple[str, ...]) -> bool:
    """`block` occurs in `lines` as consecutive whole lines (a line-aligned substring: 'error: x' is not found
    inside 'warning: error: x')."""
    n = len(block)
    if not n or n > len(lines):
        return False
    first = block[0]
    return any(lines[i] == first and lines[i:i + n] == block for i in range(len(lines) - n + 1))


class Runbook:
    Skip = Skip

    def __init__(self, entry_id: str, tiers="static,toolchain,gpu,rocm", result_path: str = ""):
        self.entry_id = entry_id
        self.selected = machine_tiers.parse(tiers)
        self.result_path = result_path
        self.platform = machine_tiers.detect()
        self.needs = machine_tiers.needs_available(self.platform)
        self.checks: list[dict] = []
        self.started = time.time()
        self._repro_texts: list[tuple[str, ...]] = []     # reproduction outputs, as lines (see _contains_block)
        self._repro_evidence: list[tuple[str, ...]] = []  # cleaned sub-lines of each evidence chain they matched

    @property
    def entry(self):
        return _entry(self.entry_id)

    def skip_reason(self, tier: str, needs: str | tuple | None) -> str | None:
        if tier not in machine_tiers.TIERS:
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
            rec: dict[str, Any] = {"tier": tier, "name": name}
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
        """Assert that the entry's own signatures (or the named one) match captured output; return the evidence.
        The text is remembered as the reproduction's output (see expect_no_signature)."""
        e = self.entry
        sigs = [s for s in e["signatures"] if signature is None or s["id"] == signature]
        assert sigs, f"{self.entry_id} has no signature {signature!r}"
        m = matcher.Matcher([matcher.build_signature(e.id, s) for s in sigs])
        res = m.match_text(text)
        assert res, (f"none of {self.entry_id}'s signatures {[s['id'] for s in sigs]} matched the captured output:\n"
                     + text[-3000:])
        self.note_reproduction(text)
        for ev in res[0]["evidence"]:
            chain = tuple(h["text"] for h in ev["lines"] if h.get("text"))
            if chain and chain not in self._repro_evidence:
                self._repro_evidence.append(chain)
        return res[0]["evidence"]

    def note_reproduction(self, text: str) -> str:
        """Remember output captured from the reproduction that is not matched against the signatures here (on a
        CUDA GPU, say), so that expect_no_signature refuses a text that still contains it. Returns the text."""
        lines = _lines(text)
        if lines and lines not in self._repro_texts:
            self._repro_texts.append(lines)
        return text

    def expect_no_signature(self, text: str) -> None:
        """Assert that the entry's signatures do not match the fix's output, and that this output is the fix's
        alone: it must not contain a reproduction's output (see the module's docstring)."""
        found = self._reproduction_in(text)
        assert found is None, (f"{self.entry_id}: the fix's output still contains the reproduction's output: "
                               f"{found[0]!r} "
                               f"({found[1]}; read only the fix's output: run the fix in its own process or capture, "
                               "not "
                               "together with the reproduction; if it already ran alone, the fix did not remove the "
                               "problem)")
        e = self.entry
        m = matcher.Matcher([matcher.build_signature(e.id, s) for s in e["signatures"]])
        res = m.match_text(text)
        assert not res, f"{self.entry_id}'s signatures still match after the fix: {res[0]['evidence'][:1]}"

    def _reproduction_in(self, text: str) -> tuple[str, str] | None:
        """(a line, how it was found) when `text` still carries a remembered reproduction output, else None."""
        lines = _lines(text)
        evidence = {s for chain in self._repro_evidence for s in chain}
        for block in self._repro_texts:
            if _contains_block(lines, block):      # the line to show: one the reproduction matched, if any
                line = next((ln for ln in block if evidence & set(_subs(ln))), block[0])
                return line, f"all {len(block)} line(s) of a reproduction's output, in order"
        if self._repro_evidence:
            subs = {s for raw in normalize.split_lines(text) for s in _subs(raw)}
            for chain in self._repro_evidence:
                if all(s in subs for s in chain):
                    return chain[0], "the line(s) a reproduction matched"
        return None

    def tier_outcomes(self) -> dict:
        out = {}
        for t in machine_tiers.TIERS:
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
        print(f"\n{self.entry_id} on {fingerprint.label(result['fingerprint'])}")
        for c in self.checks:
            print(f"  {c['tier']:<9} {c['outcome']:<8} "
                  f"{c['name']:<{width}}  {c.get('reason', '') if c['outcome'] != 'passed' else ''}")
        path = self.result_path or os.environ.get("ERRBOOK_RESULT")
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(json.dumps(result, indent=1), encoding="utf-8")
        failed = [c for c in self.checks if c["outcome"] in ("failed", "error")]
        if failed:
            raise RuntimeError(f"{len(failed)} check(s) failed: " + "; ".join(c["name"] for c in failed))
        return result
