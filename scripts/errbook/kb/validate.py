"""`errbook validate`: the schema plus the cross-checks a schema cannot express. Each finding names file:line:field.

The checks every reader needs are usable.py's; here are those only `errbook validate` runs: signatures against
their examples and every variant of them (triage.matcher), machine checks (machine.checks), text that must not
stay, symptoms listed twice, cross-entry references, runbook files and the benign corpus."""
from __future__ import annotations

import re
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

from errbook.kb import drafts, facets, listdups, msgvalidate, regexsubset, sigexamples, variants, versions
from errbook.kb import entries as entries_mod
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

__all__ = ["Finding", "data_findings", "draft_split", "duplicate_id_findings", "field_name", "findings_json",
           "range_fields", "schema", "schema_findings", "usable_entries", "validate"]

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
        def vary(fpath: tuple, text: str, m=m, keeps=keeps, sid=sid) -> list[Finding]:
            return [Finding(e.rel, e.line_of(fpath), field_name(fpath),
                            f"signature '{sid}' does not match this example as another machine prints it ({kind} "
                            f"variant; if that part is the message itself, add it to the signature's keeps)")
                    for kind, vtext in variants.of(text, keeps) if not m.match_text(vtext)]
        out += sigexamples.example_findings(e.rel, e.line_of, base, f"signature '{sid}'", sig, m.match_text, vary)
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


def _repeat_findings(e: entries_mod.Entry) -> list[Finding]:
    """A symptom listed twice (listdups.py): the page would show it twice."""
    return [Finding(e.rel, e.line_of((key, j)), field_name((key, j)), f"repeats {key}[{i}] ({how})")
            for key in ("symptoms", "symptoms_zh") for j, i, how in listdups.repeated(as_list(e.get(key)))]


def _primary(ref) -> bool:
    return isinstance(ref, dict) and str_or_none(ref.get("kind")) in PRIMARY_KINDS


def _cross_findings(all_entries: list[entries_mod.Entry], root: Path) -> list[Finding]:
    out = duplicate_id_findings(all_entries)
    # published/modified are UTC timestamps ("2026-12-07T04:04:28Z"), compared as text; an hour of grace for a
    # clock a little ahead. A future time would keep an entry "newest" and hide later changes.
    clock = datetime.now(timezone.utc)
    now, latest = (t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in (clock, clock + timedelta(hours=1)))
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
        for key in ("published", "modified"):
            when = e.get(key)
            if isinstance(when, str) and when > latest:
                out.append(Finding(e.rel, e.line_of((key,)), key,
                                   f"{key} {when} is in the future (now {now}): use the time of the change"))
    return out


REL_FILE = "errata/releases.yaml"


def _release_findings(loaded: list[entries_mod.Entry], root: Path) -> list[Finding]:
    """Freshness (errbook stale): errata/releases.yaml tracks every component that an active entry's applies_to
    or a machine check's version condition names, each with a comparable newest release, the date it was
    checked and the source; every applies_to range of an active 1.2 entry records checked_at, the release it
    was checked against, and no checked_at is newer than releases.yaml's newest."""
    from . import stale
    try:
        _, doc = stale.load_releases(root, located=True)
    except (ValueError, OSError) as ex:
        m = re.match(r".*?:(\d+): (.*)", str(ex), re.S)
        return [Finding(REL_FILE, int(m.group(1)) if m else 1, "", m.group(2) if m else str(ex))]
    out, releases = _releases_file_findings(doc)
    for e in entries_mod.active(loaded):
        out += _range_findings(e, releases)
        out += _check_version_findings(e, releases, stale)
    return out


def _releases_file_findings(doc) -> tuple[list[Finding], dict]:
    """Each component of releases.yaml: a comparable newest, the date checked and the source."""
    out: list[Finding] = []
    releases: dict = {}
    for comp, v in (doc.data.items() if doc is not None and isinstance(doc.data, dict) else ()):
        if not isinstance(v, dict) or not isinstance(v.get("newest"), str):
            out.append(Finding(REL_FILE, doc.line_of((comp,)), str(comp),
                               "needs newest: the newest release, as a string"))
            continue
        releases[comp] = v
        if versions.parse(v["newest"]) is None:
            out.append(Finding(REL_FILE, doc.line_of((comp, "newest")), f"{comp}.newest",
                               f"'{v['newest']}' is not a version number errbook stale can compare"))
        for key in ("checked", "source"):
            if not isinstance(v.get(key), str) or not v[key].strip():
                out.append(Finding(REL_FILE, doc.line_of((comp,)), f"{comp}.{key}",
                                   "required: the date the source was read" if key == "checked" else
                                   "required: where the newest release was read"))
    return out, releases


def _range_findings(e: entries_mod.Entry, releases: dict) -> list[Finding]:
    """An entry's applies_to ranges: a tracked component, and checked_at (required from format 1.2), never newer
    than the newest release."""
    out: list[Finding] = []
    sv = versions.parse(e.get("schema_version")) if isinstance(e.get("schema_version"), str) else None
    needs_checked = sv is not None and versions.compare(sv, (1, 2)) >= 0   # 1.2: every range names checked_at
    for i, a in enumerate(as_list(e.get("applies_to"))):
        comp = a.get("component") if isinstance(a, dict) else None
        if not isinstance(comp, str):
            continue   # the schema finding names it
        base = ("applies_to", i)
        rel = releases.get(comp)
        if rel is None:
            out.append(Finding(e.rel, e.line_of(base + ("component",)), field_name(base + ("component",)),
                               f"'{comp}' is not tracked in {REL_FILE}: add its newest release there, or "
                               f"errbook stale cannot see a newer one"))
        if "checked_at" not in a:
            if needs_checked:
                newest = f" ({REL_FILE}: newest {rel['newest']})" if rel else ""
                out.append(Finding(e.rel, e.line_of(base), field_name(base + ("checked_at",)),
                                   f"required: the newest {comp} release this range was checked against{newest}"))
        elif rel and isinstance(a["checked_at"], str):
            c, n = versions.parse(a["checked_at"]), versions.parse(rel["newest"])
            if c is not None and n is not None and versions.compare(c, n) > 0:
                out.append(Finding(e.rel, e.line_of(base + ("checked_at",)), field_name(base + ("checked_at",)),
                                   f"checked at {a['checked_at']}, newer than the newest {comp} release in "
                                   f"{REL_FILE} ({rel['newest']}): update {REL_FILE}, or correct checked_at"))
    return out


def _check_version_findings(e: entries_mod.Entry, releases: dict, stale) -> list[Finding]:
    """A machine check's version condition compares a component that stale knows and releases.yaml tracks."""
    out: list[Finding] = []
    t = e.get("triggers")
    for i, chk in enumerate(as_list(t.get("checks")) if isinstance(t, dict) else []):
        for j, cond in enumerate(as_list(chk.get("when")) if isinstance(chk, dict) else []):
            if not (isinstance(cond, dict) and "version" in cond and isinstance(cond.get("fact"), str)):
                continue
            path = ("triggers", "checks", i, "when", j, "fact")
            comp = stale.fact_component(cond["fact"])
            if comp is stale._UNMAPPED:
                out.append(Finding(e.rel, e.line_of(path), field_name(path),
                                   f"a version condition on '{cond['fact']}', whose component errbook stale does "
                                   f"not know: map the fact in stale.FACT_COMPONENTS"))
            elif comp is not None and comp not in releases:
                out.append(Finding(e.rel, e.line_of(path), field_name(path),
                                   f"compares a version of '{comp}', which {REL_FILE} does not track: add it"))
    return out


def _benign_findings(loaded: list[entries_mod.Entry], root: Path) -> list[Finding]:
    """No signature may match the benign corpus's tuning half (normal output that is not a problem); the test half
    is held out for `errbook eval`, which requires no signature to match it either. An observation (a signature
    marked `level: observation`, or any signature of a cosmetic entry) may: it names a condition healthy output
    shows, and triage lists it as worth knowing, never as the answer (`errbook eval` counts those apart)."""
    out: list[Finding] = []
    good = [e for e in entries_mod.active(loaded) if isinstance(e.get("signatures"), list)]
    try:
        m = matcher.Matcher.from_entries(good, skipped=[])
    except Exception:
        return out
    for log in corpus.benign_logs(root, split="dev"):
        scan = m.new_scan()
        with open(log, "rb") as f:
            linescan.scan_stream(m, f, scan)
        for r in scan.results():
            if r["level"] == "observation":
                continue
            e = next(x for x in good if x.id == r["id"])
            ev = r["evidence"][0]
            sig = ev["signature"]
            k = next((i for i, s in enumerate(e["signatures"]) if isinstance(s, dict) and s.get("id") == sig), 0)
            out.append(Finding(e.rel, e.line_of(("signatures", k)), f"signatures[{k}]",
                               f"signature '{sig}' matches benign log {log.relative_to(root)}:"
                               f"{ev['lines'][0]['line']} ({ev['lines'][0]['text'][:120]!r})"))
    return out


def _vocabulary(root: Path) -> tuple[facets.Vocabulary | None, list[Finding]]:
    """errata/facets.yaml (None when the knowledge base has none: no facets to check), or a finding naming it."""
    try:
        return facets.load(root), []
    except facets.VocabularyError as e:
        return None, [Finding("errata/facets.yaml", 1, "", str(e))]


def validate(root: Path, only: set[str] | None = None) -> tuple[list[entries_mod.Entry], list[Finding]]:
    """Every finding; with `only` (entry files relative to root, as Entry.rel), the findings in those files: each
    of them checked in full, and the cross-checks (ids, references, releases, the benign corpus) run against all
    entries so that a selected entry is judged as the full run would judge it."""
    loaded, load_errors = entries_mod.load_all(root)
    findings = [Finding(le.rel, le.line, "", le.message) for le in load_errors]
    vocab, vocab_findings = _vocabulary(root)
    findings += [] if only is not None else vocab_findings
    for e in loaded:
        if only is not None and e.rel not in only:
            continue
        data_f = data_findings(e)
        # A range or a parameter the schema also refuses is named once, in the words of the code that reads it.
        covered = {f.field for f in data_f}
        schema_f = [f for f in schema_findings(e)
                    if f.field not in covered and not f.field.startswith("verification.parameters")]
        findings += schema_f + data_f
        broken = {int(f.field.split("[")[1].split("]")[0]) for f in schema_f if f.field.startswith("signatures[")}
        findings += _signature_findings(e, broken)
        findings += _text_findings(e, root) + _repeat_findings(e)
        findings += [Finding(e.rel, e.line_of(p), field_name(p), m) for p, m in checks.validate_entry(e.data)]
        if vocab is not None and not e.withdrawn:
            findings += [Finding(e.rel, e.line_of(p), field_name(p), m)
                         for p, m in facets.entry_findings(e.data, vocab)]
    findings += _cross_findings(loaded, root)
    findings += _release_findings(loaded, root)
    findings += _benign_findings([e for e in loaded if only is None or e.rel in only], root)
    findings += msgvalidate.validate(root, loaded)
    if only is not None:
        findings = [f for f in findings if f.file in only]
    findings.sort(key=lambda f: (f.file, f.line, f.field))
    return loaded, findings


def draft_split(loaded: list[entries_mod.Entry], findings: list[Finding],
                strict: bool) -> tuple[list[Finding], list[Finding]]:
    """(findings, draft notes): what is unfinished in a draft (kb/drafts.py) is a note, not a finding, since the
    published site and triage leave drafts out; with strict (publication) every draft is a finding, and a draft
    with nothing left to fill in is named as one."""
    draft_files = {e.rel: why for e in loaded if (why := drafts.draft_reason(e.data))}
    named = [Finding(rel, 1, "draft", f"a draft ({why}): not published until it is finished")
             for rel, why in draft_files.items()]
    if strict:
        return sorted(findings + named, key=lambda f: (f.file, f.line, f.field)), []
    notes = [f for f in findings if f.file in draft_files] + named
    return [f for f in findings if f.file not in draft_files], sorted(notes, key=lambda f: (f.file, f.line, f.field))


def findings_json(findings: list[Finding]) -> list[dict]:
    return [asdict(f) for f in findings]
