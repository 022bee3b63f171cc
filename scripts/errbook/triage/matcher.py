"""The signature matcher: one implementation of how log lines become ranked entries (the first stage).

Used by `errbook triage`, by `errbook validate` (examples must match, counter-examples must not) and by the
runbooks (captured output must match the entry's own signatures). The paste page runs assets/engine.js over
the bundle this module exports; tests/test_engines.py checks both engines give identical answers.

Lines are cleaned into sub-lines (normalize.clean); a signature is one pattern (matched on one sub-line) or a
sequence of patterns matched on sub-lines in order within `within` physical lines.

Ranking (the same rules in engine.js):
  weight(signature)      = 100 * priority + min(literal characters, 50) + (10 if it is a multi-line sequence)
  * A single-line signature is *outranked* on a line when its match lies strictly inside the match of another
    entry's signature on the same sub-line: the longer, more specific message wins whatever the priorities.
  * A line equal to one of a signature's counter-examples but for its paths and hex addresses
    (normalize.mask without numbers) never counts for that signature.
  * score(entry) = max weight of its standing signatures + 10 per further distinct one + min(hits - 1, 9)
  * Entries are ordered by standing: diagnoses first, then observations, then entries whose every hit was
    outranked; then by score, then id.

Answer levels (each result's `level`): a *diagnosis* is a match of a signature that names a problem; an
*observation* is a match only of signatures marked `level: observation` (a condition the entry describes is
present: runtime tracing on, RCCL over sockets, a spill or occupancy remark) or of a cosmetic entry (a harmless
message). An observation is "worth knowing", never an answer: it does not make triage exit 0, it does not stop the
second stage, and a log of normal output that shows one is not answered. A diagnosis may still become *likely*
afterwards (triage/multicause.py): when its only line is a multi-cause message, or every signature that made it one
is generic (priority 1).
"""
from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import re2

from errbook.kb import regexsubset
from errbook.triage import normalize

MAX_EVIDENCE = 5      # evidence chains kept per signature and standing
SUB_SPACE = 1 << 16   # position of a sub-line = physical line * SUB_SPACE + its index in the line
_LONG_HEX = re2.compile(r"[0-9a-f]{8}")
_UNANCHORED, _NULL = re2._Anchor.UNANCHORED, re2._NULL_SPAN     # google-re2's own names for a bare Match


@dataclass
class Signature:
    entry_id: str
    sig_id: str
    steps: list[str]
    ignore_case: bool
    within: int
    priority: int
    weight: int
    anchors: list[str]
    compiled: list = field(repr=False, default_factory=list)
    observation: bool = False     # `level: observation`: a condition, not a problem


@functools.lru_cache(maxsize=8192)
def compile_pattern(p: str, ignore_case: bool):
    return re2.compile(("(?i)" if ignore_case else "") + p)


def build_signature(entry_id: str, sig: dict) -> Signature:
    """Raises regexsubset.SubsetError (or re2.error) when a pattern is unusable."""
    steps = list(sig["sequence"]) if "sequence" in sig else [sig["pattern"]]
    ic = bool(sig.get("ignore_case", False))
    infos = [regexsubset.check(p, ic) for p in steps]
    compiled = [compile_pattern(p, ic) for p in steps]
    literal = sum(i["literal_chars"] for i in infos)
    prio = int(sig.get("priority", 1))
    weight = 100 * prio + min(literal, 50) + (10 if len(steps) > 1 else 0)
    anchors = sorted({a for i in infos for a in i["anchors"]})
    return Signature(entry_id, sig["id"], steps, ic, int(sig.get("within", 50)), prio, weight, anchors, compiled,
                     observation=sig.get("level") == "observation")


@dataclass
class Hit:
    line: int
    text: str | None          # None until filled from `ref` (parallel scans re-read evidence lines at the end)
    source: str = ""
    ref: tuple | None = None  # (byte offset of the physical line, sub-line index)


def _outranked(m: Matcher, subs: list[str], singles: dict[int, int]) -> set[int]:
    """Single-line signatures whose match, on their sub-line, lies strictly inside the match of another entry's
    signature: the longer match names the problem more precisely."""
    by_sub: dict[int, list[int]] = {}
    for i, j in singles.items():
        by_sub.setdefault(j, []).append(i)
    out = set()
    for j, lst in by_sub.items():
        if len({m.sigs[i].entry_id for i in lst}) < 2:
            continue
        text = subs[j].encode("utf-8")
        spans = {i: m.span(m.single_pid[i], text) for i in lst}     # byte offsets: containment is the same
        for a in lst:
            for b in lst:
                (sa, ea), (sb, eb) = spans[a], spans[b]
                if m.sigs[a].entry_id != m.sigs[b].entry_id and sa <= sb and eb <= ea and ea - sa > eb - sb:
                    out.add(b)
    return out


class Scan:
    """Feeds physical lines (their cleaned sub-lines and the pattern ids each matched) through the signatures.

    With `seq_sink`, steps of multi-line sequences are handed to the sink instead of the state machine: a
    parallel worker spills them so the parent can replay every sequence in file order (see parallel.py)."""

    def __init__(self, m: Matcher, seq_sink=None):
        self.m = m
        self.seq_sink = seq_sink
        # sig index -> [count standing, count outranked, chains standing, chains outranked]
        self.single: dict[int, list] = {}
        self.seq_partial: dict[int, list[Any]] = {i: [None] * len(s.steps) for i, s in enumerate(m.sigs)
                                                   if len(s.steps) > 1}
        self.seq_hits: dict[int, list] = {}        # sig index -> [count, chains]
        self.notes: dict[str, list[str]] = {}      # extra pattern name -> first matching sub-lines

    def open_notes(self) -> frozenset[str]:
        """The notes still collecting lines (a full note's pattern leaves the prefilter)."""
        return frozenset(k for k, c in self.m.note_caps.items() if len(self.notes.get(k, ())) < c)

    def reset_sequences(self) -> None:
        """A new input (another rank's log) starts: no sequence continues across inputs."""
        for k in self.seq_partial:
            self.seq_partial[k] = [None] * len(self.seq_partial[k])

    # -- one physical line ------------------------------------------------------------------------------
    # Only a line where some pattern matched is looked at (for vetoes too), so a streamed scan, which never
    # sees the other lines, and an in-memory scan give the same answer.
    def feed(self, lineno: int, subs: list[str], ids: list[list[int]], source: str = "", offset: int | None = None):
        plan = self.m.plan(subs, ids)
        if plan is not None:
            self.apply(lineno, subs, plan, source, offset)

    def apply(self, lineno: int, subs: list[str], plan: tuple, source: str = "", offset: int | None = None):
        """Count one line by its plan (Matcher.plan): what it does to each signature, decided once per
        distinct line."""
        singles, outranked, steps, notes = plan
        for j, i, k in steps:
            hit = Hit(lineno, subs[j], source, None if offset is None else (offset, j))
            if self.seq_sink is not None:
                self.seq_sink(lineno * SUB_SPACE + j, i, k, hit)
            else:
                self.seq_step(lineno * SUB_SPACE + j, i, k, hit)
        for name, j in notes:
            lst = self.notes.setdefault(name, [])
            if len(lst) < self.m.note_caps[name]:
                lst.append(subs[j])
        single = self.single
        for i, j in singles:
            st = single.get(i)
            if st is None:
                st = single[i] = [0, 0, [], []]
            o = i in outranked
            st[o] += 1
            lst = st[3 if o else 2]
            if len(lst) < MAX_EVIDENCE:      # evidence is kept for the first few hits only: no object after that
                lst.append([Hit(lineno, subs[j], source, None if offset is None else (offset, j))])

    def count_more(self, plan: tuple, n: int) -> None:
        """n more lines with this plan, beyond those applied: they add to the counts only (linescan applies the
        first occurrences of a repeated line, which hold every piece of evidence and note it can give)."""
        single = self.single
        outranked = plan[1]
        for i, _ in plan[0]:
            st = single.get(i)
            if st is None:
                st = single[i] = [0, 0, [], []]
            st[i in outranked] += n

    def seq_step(self, pos: int, i: int, k: int, hit: Hit) -> None:
        """Step k of sequence signature i matched at position pos. Steps of one line arrive with the highest
        k first, so one line cannot advance two steps of the same sequence."""
        s = self.m.sigs[i]
        partial = self.seq_partial[i]
        if k == 0:
            partial[0] = (pos, [hit])
            return
        prev = partial[k - 1]
        if prev is None or prev[0] >= pos or hit.line - prev[1][0].line >= s.within:
            return
        chain = (pos, prev[1] + [hit])
        if k == len(s.steps) - 1:
            st = self.seq_hits.setdefault(i, [0, []])
            st[0] += 1
            if len(st[1]) < MAX_EVIDENCE:
                st[1].append(chain[1])
            self.seq_partial[i] = [None] * len(s.steps)
        else:
            partial[k] = chain

    # -- merging a parallel worker's part (its lines numbered from line_base) ----------------------------
    def merge_part(self, part: dict, line_base: int) -> None:
        for i, (c0, c1, ch0, ch1) in part["single"].items():
            st = self.single.setdefault(i, [0, 0, [], []])
            st[0] += c0
            st[1] += c1
            for dst, src in ((st[2], ch0), (st[3], ch1)):
                for chain in src:
                    if len(dst) < MAX_EVIDENCE:
                        dst.append([Hit(h.line + line_base, h.text, h.source, h.ref) for h in chain])
        for name, lines in part["notes"].items():
            lst = self.notes.setdefault(name, [])
            lst.extend(lines[: max(0, self.m.note_caps[name] - len(lst))])

    def part(self) -> dict:
        return {"single": self.single, "notes": self.notes}

    # -- results ------------------------------------------------------------------------------------------
    def evidence_hits(self):
        """Every Hit that results() would show (parallel scans fill their texts before ranking)."""
        for st in self.single.values():
            for chain in st[2] + st[3]:
                yield from chain
        for st in self.seq_hits.values():
            for chain in st[1]:
                yield from chain

    def results(self) -> list[dict]:
        m = self.m
        by_entry: dict[str, dict] = {}

        def slot(eid):
            return by_entry.setdefault(eid, {"id": eid,
                                             "stand": {"best": 0, "sigs": set(), "hits": 0, "ev": [], "diag": False},
                                             "out": {"best": 0, "sigs": set(), "hits": 0, "ev": [], "diag": False}})

        def add(part, s, count, chains):
            part["diag"] = part["diag"] or not s.observation
            part["best"] = max(part["best"], s.weight)
            part["sigs"].add(s.sig_id)
            part["hits"] += count
            part["ev"] += [(s.sig_id, c) for c in chains]

        for i, (c0, c1, ch0, ch1) in self.single.items():
            s = m.sigs[i]
            e = slot(s.entry_id)
            if c0:
                add(e["stand"], s, c0, ch0)
            if c1:
                add(e["out"], s, c1, ch1)
        for i, (c, chains) in self.seq_hits.items():
            s = m.sigs[i]
            add(slot(s.entry_id)["stand"], s, c, chains)
        out = []
        for eid, e in by_entry.items():
            part = e["stand"] if e["stand"]["hits"] else e["out"]
            level = "diagnosis" if part["diag"] and not m.cosmetic.get(eid) else "observation"
            if not e["stand"]["hits"]:
                standing, why = 2, "outranked: a more specific signature of another entry matched the same line"
            elif m.cosmetic.get(eid):
                standing, why = 1, "cosmetic: a harmless message, ranked below real causes"
            elif level == "observation":
                standing, why = 1, "observation: a condition this entry describes is present; no line shows a problem"
            else:
                standing, why = 0, ""
            score = part["best"] + 10 * (len(part["sigs"]) - 1) + min(part["hits"] - 1, 9)
            evidence, seen = [], set()
            for sig_id, chain in sorted(e["stand"]["ev"] + (e["out"]["ev"] if part is e["out"] else []),
                                        key=lambda x: (x[1][0].source, x[1][0].line, x[0])):
                key = tuple((h.source, h.line, h.text) for h in chain)
                if key in seen:           # the same line found by two signatures is shown once
                    continue
                seen.add(key)
                evidence.append({"signature": sig_id, "lines": [
                    {"line": h.line, "text": h.text, **({"source": h.source} if h.source else {})} for h in chain]})
            r = {"id": eid, "score": score, "standing": standing, "confidence": "match", "level": level,
                 "signatures": sorted(e["stand"]["sigs"] | e["out"]["sigs"]),
                 "hits": e["stand"]["hits"] + e["out"]["hits"], "evidence": evidence}
            if why:
                r["note"] = why
            out.append(r)
        out.sort(key=lambda r: (r["standing"], -r["score"], r["id"]))
        return out


class Matcher:
    """The compiled signatures of a set of entries, plus extra named patterns whose matching sub-lines are
    collected as notes (environment facts, second-stage samples)."""

    def __init__(self, sigs: list[Signature], cosmetic: dict | None = None, vetoes: dict | None = None,
                 extras: Sequence[tuple[str, str, bool, int]] = ()):
        self.sigs = sigs
        self.cosmetic = cosmetic or {}
        self.vetoes = vetoes or {}              # masked counter-example line -> signatures it does not count for
        self.patterns: list[tuple[str, bool, list[str]]] = []
        self.pattern_role: list[tuple[str, Any, int]] = []
        # Within a signature, steps are listed from the last: one line never advances two steps at once.
        for i, s in enumerate(sigs):
            for k in range(len(s.steps) - 1, -1, -1):
                self.patterns.append((s.steps[k], s.ignore_case, s.anchors))
                self.pattern_role.append(("sig", i, k))
        self.note_caps: dict[str, int] = {}
        for name, pattern, ic, cap in extras:
            info = regexsubset.check(pattern, ic, need_anchor=False)
            self.patterns.append((pattern, ic, info["anchors"]))
            self.pattern_role.append(("note", name, 0))
            self.note_caps[name] = cap
        self.note_ids = {i for i, r in enumerate(self.pattern_role) if r[0] == "note"}
        # per pattern id: the signature index when it is a one-line signature's only pattern, else -1
        self.single_of = [i if kind == "sig" and len(sigs[i].steps) == 1 else -1 for kind, i, _ in self.pattern_role]
        self.single_pid = {i: pid for pid, i in enumerate(self.single_of) if i >= 0}
        self._prefilter: Any = None
        self._note_prefilters: dict = {}
        # One engine for every prefilter of this matcher, chosen now (ERRBOOK_PREFILTER=re2 forces the fallback)
        self.engine = os.environ.get("ERRBOOK_PREFILTER") or "auto"
        self._exact: Any = None             # an RE2 set of every pattern (built on first use)
        self._fast: Any = None              # each pattern's RE2 object (built on first use)
        self.line_memo: dict = {}           # linescan's memo: raw line -> (candidate ids, sub-lines, plan)
        self.clean_memo: dict = {}          # and: cleaned sub-lines -> (candidate ids, plan)
        self._veto_memo: dict = {}          # cleaned sub-line -> the signatures its counter-examples veto

    @classmethod
    def from_entries(cls, entries, only: set[str] | None = None, skipped: list | None = None,
                     extras=()) -> Matcher:
        """Raises on an unusable signature, unless `skipped` is given: then it is noted there and left out
        (triage during an incident must not die because one entry is being edited)."""
        sigs: list[Signature] = []
        cosmetic: dict = {}
        vetoes: dict = {}
        for e in entries:
            if e.withdrawn or (only is not None and e.id not in only):
                continue
            if e.get("cosmetic"):
                cosmetic[e.id] = True
            for sig in e.get("signatures", []):
                try:
                    sigs.append(build_signature(e.id, sig))
                except Exception as ex:
                    if skipped is None:
                        raise
                    skipped.append(f"{e.rel}: signature {sig.get('id')!r}: {ex}")
                    continue
                # A signature whose paths are the message (keeps: paths, e.g. /var/lib/dkms/amdgpu/...) is not
                # vetoed by a counter-example line that masking would make equal to its own (.../nvidia/...).
                keeps_paths = "paths" in (sig.get("keeps") or [])
                for ce in sig.get("counter_examples") or []:
                    for raw in normalize.split_lines(str(ce.get("text", ""))):
                        for sub in normalize.clean(normalize.cap_raw(raw)):
                            key = normalize.mask(sub, numbers=False)
                            if ("<path>/" in key and not keeps_paths) or ("<hex>" in key and "<path>/" not in key):
                                vetoes.setdefault(key, set()).add(len(sigs) - 1)   # else validate excludes it
        return cls(sigs, cosmetic, vetoes, extras)

    @property
    def prefilter(self):
        """The chunk prefilter of the signatures (built on first use: compiling costs a few hundred ms)."""
        if self._prefilter is None:
            from errbook.triage.prefilter import Prefilter
            self._prefilter = Prefilter(self.patterns, self.engine, exclude=self.note_ids)
        return self._prefilter

    def note_prefilter(self, names: frozenset[str]):
        """A small prefilter of the note patterns still collecting (a handful of patterns: quick to build)."""
        if names not in self._note_prefilters:
            from errbook.triage.prefilter import Prefilter
            keep = {i for i in self.note_ids if self.pattern_role[i][1] in names}
            self._note_prefilters[names] = Prefilter(self.patterns, self.engine,
                                                     exclude=set(range(len(self.patterns))) - keep)
        return self._note_prefilters[names]

    def match_ids(self, sub: str) -> list[int]:
        """The pattern ids that match one cleaned sub-line, in pattern order (an RE2 set: one pass)."""
        if not self.patterns:
            return []
        if self._exact is None:
            self._exact = re2.Set.SearchSet(re2.Options())
            for p, ic, _ in self.patterns:
                self._exact.Add(("(?i)" if ic else "") + p)
            self._exact.Compile()
        return sorted(self._exact.Match(sub) or ())

    def span(self, pid: int, b: bytes) -> tuple[int, int]:
        """(start, end) in bytes of pattern pid's leftmost match in the UTF-8 text b."""
        if self._fast is None:
            self._fast = [compile_pattern(p, ic)._regexp for p, ic, _ in self.patterns]
        return tuple(self._fast[pid].Match(_UNANCHORED, b, 0, len(b))[0])

    def verify(self, sub: str, ids: set[int] | None) -> list[int]:
        """Of the candidate pattern ids (None: unknown), those that really match a cleaned sub-line, sorted."""
        if ids is None:
            return self.match_ids(sub)
        if self._fast is None:
            # The binding's search() decodes offsets back to characters; a yes/no needs only RE2's Match.
            self._fast = [compile_pattern(p, ic)._regexp for p, ic, _ in self.patterns]
        b = sub.encode("utf-8")
        n, fast = len(b), self._fast
        if len(ids) == 1:
            (i,) = ids
            return [i] if fast[i].Match(_UNANCHORED, b, 0, n)[0] != _NULL else []
        return sorted(i for i in ids if fast[i].Match(_UNANCHORED, b, 0, n)[0] != _NULL)

    def plan(self, subs: list[str], ids: list[list[int]]) -> tuple | None:
        """What one line (its cleaned sub-lines and the pattern ids each matched) does, as (one-line signatures
        with the sub-line each first matched, those of them outranked, sequence steps (sub-line, signature,
        step) in arrival order, notes (name, sub-line)); None when nothing. A pure function of the line, so
        a repeated line is planned once (linescan keeps the plans)."""
        if not any(ids):
            return None
        roles, single_of = self.pattern_role, self.single_of
        singles: dict[int, int] = {}       # sig index -> first sub-line it matched in this line
        steps, notes = [], []
        for j, pids in enumerate(ids):
            if not pids:
                continue
            veto = self.veto_of(subs[j]) if self.vetoes else ()
            for pid in pids:
                i = single_of[pid]
                if i >= 0:                  # the common case: a one-line signature
                    if i not in singles and i not in veto:   # (a veto: its own counter-example, another path)
                        singles[i] = j
                    continue
                kind, i, k = roles[pid]
                if kind == "sig":           # a step of a multi-line sequence
                    if i not in veto:
                        steps.append((j, i, k))
                else:
                    notes.append((i, j))
        outranked = _outranked(self, subs, singles) if len(singles) > 1 and \
            len({self.sigs[i].entry_id for i in singles}) > 1 else ()
        if not (singles or steps or notes):
            return None
        return tuple(singles.items()), outranked, steps, notes

    def veto_of(self, sub: str):
        """The signatures that a counter-example equal to this sub-line (paths and hex masked) vetoes."""
        got = self._veto_memo.get(sub)
        if got is None:
            if len(self._veto_memo) >= 4096:
                self._veto_memo.clear()
            got = ()
            # A veto key holds a <path>/ or <hex> token, so only a line with a path or hex can equal one.
            if "/" in sub or "0x" in sub or _LONG_HEX.search(sub):
                got = self.vetoes.get(normalize.mask(sub, numbers=False), ())
            self._veto_memo[sub] = got
        return got

    def new_scan(self, seq_sink=None) -> Scan:
        return Scan(self, seq_sink)

    def feed_text(self, scan: Scan, text: str, source: str = "") -> None:
        for n, raw in enumerate(normalize.split_lines(text), 1):
            subs = normalize.clean(normalize.cap_raw(raw))
            if subs:
                scan.feed(n, subs, [self.match_ids(s) for s in subs], source)

    def match_text(self, text: str, source: str = "") -> list[dict]:
        """Match a whole in-memory text (examples, runbook output, a pasted log)."""
        scan = self.new_scan()
        self.feed_text(scan, text, source)
        return scan.results()

    def bundle(self) -> dict:
        """What the browser engine needs of the compiled entries: patterns, roles, weights and vetoes (web/bundle.py
        adds the cleaning, normalize.JS_SPEC)."""
        return {
            "signatures": [{"entry": s.entry_id, "id": s.sig_id, "steps": s.steps, "ignore_case": s.ignore_case,
                            "within": s.within, "weight": s.weight, "priority": s.priority,
                            "observation": s.observation}
                           for s in self.sigs],
            "patterns": [[p, ic, anchors] for p, ic, anchors in self.patterns],
            "roles": [list(r) for r in self.pattern_role],
            "cosmetic": sorted(self.cosmetic),
            "vetoes": {k: sorted(v) for k, v in sorted(self.vetoes.items())},
            "note_caps": self.note_caps,
        }
