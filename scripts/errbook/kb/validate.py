"""`errbook validate`: the schema plus the cross-checks a schema cannot express. Each finding names file:line:field.

The checks every reader needs are usable.py's; here are those only `errbook validate` runs: signatures against
their examples and every variant of them (triage.matcher), machine checks (machine.checks), text that must not
stay, cross-entry references, runbook files and the benign corpus."""
from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path

from errbook.kb import entries as entries_mod
from errbook.kb import regexsubset, variants
from errbook.kb.usable import (
    Finding,
    as_list,
    data_findings,
    duplicate_id_findings,
    field_name,
    range_fields,
    schema,
    schema_findings,
    str_or_none,
    usable_entries,
)
from errbook.machine import checks
from errbook.triage import corpus, linescan, matcher

__all__ = ["Finding", "data_findings", "duplicate_id_findings", "field_name", "findings_json", "range_fields", "schema",
           "schema_findings", "usable_entries", "validate"]

PRIMARY_KINDS = {"docs", "source", "issue", "release-notes", "spec"}
RUNBOOK_RE = re.compile(r"runbooks/(compile|runtime|performance)/RMN-[0-9]{4}\.ipynb")   # as in the schema
MAX_RUNBOOK_BYTES = 16 << 20   # the TODO check reads no more of a runbook than this


def _signature_findings(e: entries_mod.Entry, broken: set) -> list[Finding]:
    """Patterns compile in the portable subset; examples match; counter-examples do not.
    broken: indexes of signatures that already failed the schema (their examples are not tried)."""
    out = []
    sigs = as_list(e.get("signatures"))
    seen_ids: set[str] = set()
    for i, sig in enumerate(sigs):
        if not isinstance(sig, dict):
            continue
        base = ("signatures", i)
        sid = sig.get("id")
        if isinstance(sid, str):   # else the schema finding names it
            if sid in seen_ids:
                out.append(Finding(e.rel, e.line_of(base + ("id",)), field_name(base + ("id",)),
                                   f"duplicate signature id '{sid}'"))
            seen_ids.add(sid)
        steps_key = "sequence" if "sequence" in sig else "pattern"
        steps = sig.get(steps_key)
        steps = steps if isinstance(steps, list) else [steps]
        bad = False
        for k, p in enumerate(steps):
            if not isinstance(p, str):
                bad = True
                continue
            fpath = base + ((steps_key, k) if steps_key == "sequence" else (steps_key,))
            try:
                regexsubset.check(p, bool(sig.get("ignore_case")))
                matcher.compile_pattern(p, bool(sig.get("ignore_case")))
            except (regexsubset.SubsetError, Exception) as err:  # re2.error has no stable public base
                out.append(Finding(e.rel, e.line_of(fpath), field_name(fpath), f"bad pattern: {err}"))
                bad = True
        if bad or i in broken:
            continue
        m = matcher.Matcher([matcher.build_signature(e.id if isinstance(e.id, str) else "RMN-0000", sig)])
        raw_keeps = sig.get("keeps")
        keeps = raw_keeps if isinstance(raw_keeps, list) else []
        for key, must in (("examples", True), ("counter_examples", False)):
            for j, ex in enumerate(as_list(sig.get(key))):
                if not isinstance(ex, dict) or not isinstance(ex.get("text"), str):
                    continue
                hit = bool(m.match_text(ex["text"]))
                fpath = base + (key, j, "text")
                if hit != must:
                    what = "does not match this example" if must else "matches this counter-example"
                    out.append(Finding(e.rel, e.line_of(fpath), field_name(fpath), f"signature '{sid}' {what}"))
                elif must:
                    for kind, text in variants.of(ex["text"], keeps):
                        if not m.match_text(text):
                            out.append(Finding(e.rel, e.line_of(fpath), field_name(fpath),
                                               f"signature '{sid}' does not match this example as another machine "
                                               f"prints it ({kind} variant; if that part is the message itself, "
                                               f"add it to the signature's keeps)"))
    return out


def _runbook_path(e: entries_mod.Entry) -> str | None:
    """verification.runbook when it has the schema's form (runbooks/<class>/RMN-NNNN.ipynb), else None:
    a path that could leave the checkout is never opened."""
    ver = e.get("verification")
    rb = ver.get("runbook") if isinstance(ver, dict) else None
    return rb if isinstance(rb, str) and RUNBOOK_RE.fullmatch(rb) else None


# The ROCm issue tracker moved from ROCm/ROCm to ROCm/legacy-rocm-build (GitHub redirects for now, but a rename
# of another repository to ROCm/ROCm has been proposed, which would send old links elsewhere).
OLD_TRACKER = re.compile(r"github\.com/ROCm/ROCm/(?:issues|pull|discussions)/", re.I)


def _text_findings(e: entries_mod.Entry, root: Path) -> list[Finding]:
    """Text that must not stay: scaffolding still saying TODO (in the entry or its runbook), and links to the
    ROCm tracker by its old name."""
    out: list[Finding] = []

    def walk(v, path):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, path + (k,))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, path + (i,))
        elif isinstance(v, str):
            if "TODO" in v:
                out.append(Finding(e.rel, e.line_of(path), field_name(path), "unfinished: still contains TODO"))
            if OLD_TRACKER.search(v):
                out.append(Finding(e.rel, e.line_of(path), field_name(path),
                                   "the ROCm issue tracker is github.com/ROCm/legacy-rocm-build now: link it there"))
    walk(e.data, ())
    rb = _runbook_path(e)
    if rb and (root / rb).is_file():
        try:
            with open(root / rb, "rb") as f:
                todo = b"TODO" in f.read(MAX_RUNBOOK_BYTES)
        except OSError as ex:
            out.append(Finding(e.rel, e.line_of(("verification", "runbook")), "verification.runbook",
                               f"cannot read {rb}: {ex.strerror or ex}"))
            todo = False
        if todo:
            out.append(Finding(e.rel, e.line_of(("verification", "runbook")), "verification.runbook",
                               f"unfinished: {rb} still contains TODO"))
    return out


def _primary(ref) -> bool:
    return isinstance(ref, dict) and str_or_none(ref.get("kind")) in PRIMARY_KINDS


def _cross_findings(all_entries: list[entries_mod.Entry], root: Path) -> list[Finding]:
    out = duplicate_id_findings(all_entries)
    ids = {str_or_none(e.get("id")) for e in all_entries} - {None}
    for e in all_entries:
        stem = e.path.stem
        if isinstance(e.get("id"), str) and stem != e.id:
            out.append(Finding(e.rel, e.line_of(("id",)), "id", f"file name must be {e.id}.yaml"))
        klass = e.get("class")
        if isinstance(klass, str) and e.path.parent.name != klass:
            out.append(Finding(e.rel, e.line_of(("class",)), "class",
                               f"entry of class '{klass}' must live in errata/{klass}/"))
        for i, r in enumerate(as_list(e.get("related"))):
            if not isinstance(r, str):
                continue   # the schema finding names it
            if r not in ids:
                out.append(Finding(e.rel, e.line_of(("related", i)), f"related[{i}]", f"no entry with id '{r}'"))
            elif r == e.id:
                out.append(Finding(e.rel, e.line_of(("related", i)), f"related[{i}]",
                                   "an entry cannot relate to itself"))
        rb = _runbook_path(e)
        if rb and not (root / rb).is_file():
            out.append(Finding(e.rel, e.line_of(("verification", "runbook")), "verification.runbook",
                               f"runbook file {rb} does not exist"))
        refs = e.get("references")
        if isinstance(refs, list) and refs and not any(_primary(r) for r in refs):
            out.append(Finding(e.rel, e.line_of(("references",)), "references",
                               "needs at least one primary source (docs, source, issue, release-notes or spec)"))
        mod, pub = e.get("modified"), e.get("published")
        if isinstance(mod, str) and isinstance(pub, str) and mod < pub:
            out.append(Finding(e.rel, e.line_of(("modified",)), "modified", "modified is earlier than published"))
    return out


def _benign_findings(loaded: list[entries_mod.Entry], root: Path) -> list[Finding]:
    """No signature may match the benign corpus (normal output that is not a problem)."""
    out: list[Finding] = []
    good = [e for e in entries_mod.active(loaded) if isinstance(e.get("signatures"), list)]
    try:
        m = matcher.Matcher.from_entries(good, skipped=[])
    except Exception:
        return out
    for log in sorted(corpus.benign_dir(root).glob("*.log")):
        scan = m.new_scan()
        with open(log, "rb") as f:
            linescan.scan_stream(m, f, scan)
        for r in scan.results():
            e = next(x for x in good if x.id == r["id"])
            ev = r["evidence"][0]
            sig = ev["signature"]
            k = next((i for i, s in enumerate(e["signatures"]) if isinstance(s, dict) and s.get("id") == sig), 0)
            out.append(Finding(e.rel, e.line_of(("signatures", k)), f"signatures[{k}]",
                               f"signature '{sig}' matches benign log {log.relative_to(root)}:"
                               f"{ev['lines'][0]['line']} ({ev['lines'][0]['text'][:120]!r})"))
    return out


def validate(root: Path) -> tuple[list[entries_mod.Entry], list[Finding]]:
    loaded, load_errors = entries_mod.load_all(root)
    findings = [Finding(le.rel, le.line, "", le.message) for le in load_errors]
    for e in loaded:
        data_f = data_findings(e)
        # A range or a parameter the schema also refuses is named once, in the words of the code that reads it.
        covered = {f.field for f in data_f}
        schema_f = [f for f in schema_findings(e)
                    if f.field not in covered and not f.field.startswith("verification.parameters")]
        findings += schema_f + data_f
        broken = {int(f.field.split("[")[1].split("]")[0]) for f in schema_f if f.field.startswith("signatures[")}
        findings += _signature_findings(e, broken)
        findings += _text_findings(e, root)
        findings += [Finding(e.rel, e.line_of(p), field_name(p), m) for p, m in checks.validate_entry(e.data)]
    findings += _cross_findings(loaded, root)
    findings += _benign_findings(loaded, root)
    findings.sort(key=lambda f: (f.file, f.line, f.field))
    return loaded, findings


def findings_json(findings: list[Finding]) -> list[dict]:
    return [asdict(f) for f in findings]
