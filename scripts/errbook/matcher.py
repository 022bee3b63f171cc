"""The signature matcher: one implementation of how log lines become ranked entries.

Used by `errbook triage`, by `errbook validate` (examples must match, counter-examples must not) and by the
runbooks (captured output must match the entry's own signatures). The paste page runs assets/engine.js over
the bundle this module exports; tests/test_engines.py checks both engines give identical answers.

Scoring (the same formula in engine.js):
  weight(signature) = 100 * priority + min(literal characters, 50) + (10 if it is a multi-line sequence)
  score(entry)      = max weight of its matched signatures + 10 per further distinct matched signature
                      + min(hits - 1, 9)
so one specific signature outranks any number of hits on a generic one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import functools
import re
from typing import Iterable

import re2

from . import normalize, regexsubset

MAX_EVIDENCE = 5  # lines kept per signature


@dataclass
class Signature:
    entry_id: str
    sig_id: str
    steps: list[str]
    ignore_case: bool
    within: int
    weight: int
    anchors: list[str]
    compiled: list = field(repr=False, default_factory=list)

    def step_matches(self, k: int, line: str) -> bool:
        return self.compiled[k].search(line) is not None


@functools.lru_cache(maxsize=4096)
def compile_pattern(p: str, ignore_case: bool):
    return re2.compile(("(?i)" if ignore_case else "") + p)


def build_signature(entry_id: str, sig: dict) -> Signature:
    """Raises regexsubset.SubsetError (or re2.error) when a pattern is unusable."""
    steps = list(sig["sequence"]) if "sequence" in sig else [sig["pattern"]]
    ic = bool(sig.get("ignore_case", False))
    infos = [regexsubset.check(p, ic) for p in steps]
    compiled = [compile_pattern(p, ic) for p in steps]
    literal = sum(i["literal_chars"] for i in infos)
    weight = 100 * int(sig.get("priority", 1)) + min(literal, 50) + (10 if len(steps) > 1 else 0)
    anchors = sorted({a for i in infos for a in i["anchors"]})
    return Signature(entry_id, sig["id"], steps, ic, int(sig.get("within", 50)), weight, anchors, compiled)


@dataclass
class Hit:
    line: int
    text: str
    source: str = ""


@dataclass
class _SeqState:
    # partial[k] = (start line, evidence) of the latest chain that completed steps 0..k
    partial: list


class Scan:
    """Feeds cleaned lines (with their numbers) through every signature; keeps per-signature hits."""

    def __init__(self, sigs: list[Signature]):
        self.sigs = sigs
        self.hits: dict[int, list[list[Hit]]] = {}      # sig index -> list of evidence chains
        self.counts: dict[int, int] = {}
        self._seq = {i: _SeqState([None] * len(s.steps)) for i, s in enumerate(sigs) if len(s.steps) > 1}

    def reset_sequences(self) -> None:
        """A new input (another rank's log) starts: no sequence continues across inputs."""
        for st in self._seq.values():
            st.partial = [None] * len(st.partial)

    def feed(self, lineno: int, line: str, source: str = "", candidates: Iterable[int] | None = None) -> None:
        idx = range(len(self.sigs)) if candidates is None else candidates
        for i in idx:
            s = self.sigs[i]
            if len(s.steps) == 1:
                if s.step_matches(0, line):
                    self._record(i, [Hit(lineno, line, source)])
                continue
            st = self._seq[i]
            # Walk steps from the last so one line cannot advance two steps at once.
            for k in range(len(s.steps) - 1, -1, -1):
                if not s.step_matches(k, line):
                    continue
                if k == 0:
                    st.partial[0] = (lineno, [Hit(lineno, line, source)])
                    continue
                prev = st.partial[k - 1]
                if prev is None or prev[1][-1].line >= lineno or lineno - prev[0] >= s.within:
                    continue
                chain = (prev[0], prev[1] + [Hit(lineno, line, source)])
                if k == len(s.steps) - 1:
                    self._record(i, chain[1])
                    st.partial = [None] * len(s.steps)
                else:
                    st.partial[k] = chain

    def _record(self, i: int, chain: list[Hit]) -> None:
        self.counts[i] = self.counts.get(i, 0) + 1
        lst = self.hits.setdefault(i, [])
        if len(lst) < MAX_EVIDENCE:
            lst.append(chain)

    def results(self, entries_meta: dict | None = None) -> list[dict]:
        by_entry: dict[str, dict] = {}
        for i, chains in self.hits.items():
            s = self.sigs[i]
            e = by_entry.setdefault(s.entry_id, {"id": s.entry_id, "best": 0, "sigs": [], "hits": 0, "evidence": []})
            e["best"] = max(e["best"], s.weight)
            e["sigs"].append(s.sig_id)
            e["hits"] += self.counts[i]
            for chain in chains:
                e["evidence"].append({"signature": s.sig_id,
                                      "lines": [{"line": h.line, "text": h.text, **({"source": h.source} if h.source else {})}
                                                for h in chain]})
        out = []
        for e in by_entry.values():
            score = e["best"] + 10 * (len(e["sigs"]) - 1) + min(e["hits"] - 1, 9)
            e["evidence"].sort(key=lambda ev: (ev["lines"][0].get("source", ""), ev["lines"][0]["line"]))
            out.append({"id": e["id"], "score": score, "signatures": sorted(e["sigs"]), "hits": e["hits"],
                        "evidence": e["evidence"]})
        out.sort(key=lambda r: (-r["score"], r["id"]))
        return out


class Matcher:
    def __init__(self, sigs: list[Signature]):
        self.sigs = sigs
        # Prefilter: one RE2 alternation of every step's own pattern, run over raw byte chunks (as grep -E -f
        # does). It finds a superset of the lines that match after cleaning: cleaning only keeps a substring of
        # the raw line (the last \r segment, the text after a stripped prefix, the head before the cap), so the
        # pattern with its ^/$ dropped still matches the raw line. Steps with other anchors fall back to their
        # literal anchors. Hits are then verified line by line with the exact engine.
        parts: list[bytes] = []
        for sg in sigs:
            for p in sg.steps:
                q = p[1:] if p.startswith("^") else p
                if q.endswith("$") and not q.endswith("\\$"):
                    q = q[:-1]
                if re.search(r"(?<![\\\[])[\^$]", q):
                    parts += [re2.escape(a.encode()) for a in sg.anchors]
                    continue
                parts.append(("(?i:" if sg.ignore_case else "(?:").encode() + q.encode() + b")")
        opts = re2.Options()
        opts.max_mem = 256 << 20
        self.prefilter = re2.compile(b"|".join(parts), opts) if parts else None
        # anchor -> signature indexes whose steps carry it (to test only those signatures on a candidate line)
        self._by_anchor: dict[tuple[str, bool], set[int]] = {}
        for i, s in enumerate(sigs):
            for a in s.anchors:
                self._by_anchor.setdefault((a, s.ignore_case), set()).add(i)

    @classmethod
    def from_entries(cls, entries, only: set[str] | None = None, skipped: list | None = None) -> "Matcher":
        """Raises on an unusable signature, unless `skipped` is given: then it is noted there and left out
        (triage during an incident must not die because one entry is being edited)."""
        sigs = []
        for e in entries:
            if e.withdrawn or (only is not None and e.id not in only):
                continue
            for sig in e.get("signatures", []):
                try:
                    sigs.append(build_signature(e.id, sig))
                except Exception as ex:
                    if skipped is None:
                        raise
                    skipped.append(f"{e.rel}: signature {sig.get('id')!r}: {ex}")
        return cls(sigs)

    def candidates(self, line: str) -> list[int]:
        low = None
        out: set[int] = set()
        for (a, ic), idx in self._by_anchor.items():
            if ic:
                if low is None:
                    low = line.lower()
                if a in low:
                    out |= idx
            elif a in line:
                out |= idx
        return sorted(out)

    def new_scan(self) -> Scan:
        return Scan(self.sigs)

    def match_text(self, text: str, source: str = "") -> list[dict]:
        """Match a whole in-memory text (examples, runbook output)."""
        scan = self.new_scan()
        for n, raw in enumerate(text.split("\n"), 1):
            line = normalize.clean_line(normalize.cap_raw(raw))
            scan.feed(n, line, source, self.candidates(line))
        return scan.results()

    def bundle(self) -> dict:
        """What the browser engine needs: the same patterns, anchors and weights."""
        return {
            "normalize": normalize.JS_SPEC,
            "signatures": [{"entry": s.entry_id, "id": s.sig_id, "steps": s.steps, "ignore_case": s.ignore_case,
                            "within": s.within, "weight": s.weight, "anchors": s.anchors} for s in self.sigs],
        }
