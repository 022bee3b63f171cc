"""`errbook new`: the next free id, an entry skeleton and its runbook notebook."""
from __future__ import annotations

import datetime as dt
import re
import unicodedata
from pathlib import Path

import nbformat
import yaml
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from errbook import SCHEMA_VERSION
from errbook.errors import ErrbookError
from errbook.kb import entries, parameters, usable, yamlpos

SETUP = ("from errbook.runbooks.runbook import Runbook\n"
         "from errbook.runbooks import toolchains\n\n"
         "rb = Runbook(entry_id, tiers=tiers, result_path=result_path)")


def next_id(root: Path) -> str:
    """Highest id in use (withdrawn entries and aliases included: ids are never reused) plus one."""
    used = [int(m.group(1)) for p in entries.entry_files(root) if (m := re.match(r"RMN-(\d{4})$", p.stem))]
    return f"RMN-{max(used, default=0) + 1:04d}"


def params_source(entry_id: str, extra: dict | None = None) -> str:
    lines = [f'entry_id = "{entry_id}"',
             'tiers = "static,toolchain,gpu,rocm"  # which tiers to attempt; unavailable ones are recorded as skipped',
             'result_path = ""  # errbook run sets this; the outcome JSON is written there']
    for k, v in parameters.checked(extra).items():   # a name is written as code: identifiers only
        lines.append(f"{k} = {v!r}")
    return "\n".join(lines)


def build_notebook(entry_id: str, title: str, intro: str, cells: list[tuple[str, str]], params: dict | None = None):
    """cells: ('md' | 'code', source). The parameters cell, setup and rb.finish() are added around them."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells.append(new_markdown_cell(f"# {entry_id} — {title}\n\n{intro}"))
    p = new_code_cell(params_source(entry_id, params))
    p.metadata["tags"] = ["parameters"]
    nb.cells.append(p)
    nb.cells.append(new_code_cell(SETUP))
    for kind, src in cells:
        nb.cells.append(new_markdown_cell(src) if kind == "md" else new_code_cell(src))
    nb.cells.append(new_markdown_cell("## Outcome\n\nEvery check above, by tier. Skipped checks did not run here."))
    nb.cells.append(new_code_cell("rb.finish()"))
    return nb


def write_notebook(path: Path, nb) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.validate(nb)
    nbformat.write(nb, str(path))


ENTRY_TEMPLATE = """\
schema_version: "{schema}"
id: {id}
published: "{now}"
modified: "{now}"
reviewed: "TODO YYYY-MM-DD, the day you checked every statement against its sources"
applies_to:
  - component: rocm
    versions: "TODO a range such as '>=6.2' (or 'any')"
    checked_at: "TODO the newest release you checked the range against (errata/releases.yaml names it)"
    evidence: TODO what fixes the boundary (release notes, the PR that changed it, the docs version you read).
class: {klass}
title: {title}
title_zh: "TODO 中文标题"
cause: "TODO the cause in one line (what an on-call reader needs first)"
cause_zh: "TODO 一句话原因"
tags: [todo]
# TODO facets: how errbook find files the entry, e.g. facets: {{component: [pytorch], happened: [crash]}}
# (values: errata/facets.yaml; component and happened required, gpu only when it matters)
summary: >-
  TODO: one paragraph a reader understands during an incident.
summary_zh: >-
  TODO：中文摘要。
symptoms:
  - TODO what the engineer sees.
symptoms_zh:
  - TODO 中文症状。
signatures:
  - id: main
    priority: 3
    pattern: "TODO exact error text"
    examples:
      - text: "TODO exact error text, pasted from a real log"
        source: "captured: TODO tool and version"
    counter_examples: []
triggers:
  explanation: >-
    TODO when this happens.
  not_checkable: >-
    TODO replace with `checks:` that errbook doctor can evaluate (see docs/doctor.md), or say why no fact of a
    machine shows this trigger.
root_cause: >-
  TODO why it happens.
fix:
  # First the check that confirms the diagnosis (kind: confirm: a command that prints or inspects and changes
  # nothing), with the output that shows the problem as the sources show it; delete it if there is no such check.
  - kind: confirm
    step: TODO how the reader confirms this is the problem.
    step_zh: TODO 如何确认是这个问题。
    code:
      lang: bash
      snippet: TODO the command that shows it
    expect: TODO what its output shows when the problem is present (quoted from a source, never invented).
    expect_zh: TODO 出现该问题时输出中会看到什么。
  # Then the fix steps (no kind): what to change.
  - step: TODO first step of the fix.
    step_zh: TODO 修复的第一步。
verification:
  runbook: runbooks/{klass}/{id}.ipynb
  tiers: [static]
references:
  - url: https://rocm.docs.amd.com/
    kind: docs
    title: TODO the primary source you read
"""


# Fields the skeleton leaves for the author: the schema refuses their TODO text on purpose (validate then says
# what is unfinished). Any other schema finding in a fresh skeleton means the input broke it.
PLACEHOLDER_FIELDS = {"reviewed", "applies_to[0].versions", "applies_to[0].checked_at"}


class ScaffoldError(ErrbookError, ValueError):
    """A title (or other input) `errbook new` cannot make a valid entry from; nothing is left behind."""


def check_title(title: str) -> str:
    """The title, stripped; raises ScaffoldError when it is empty or holds characters no entry may hold."""
    t = title.strip()
    if not t:
        raise ScaffoldError("the title is empty: give the problem's title, e.g. errbook new runtime \"hipMalloc "
                            "fails after a driver update\"")
    for i, ch in enumerate(t):
        cat = unicodedata.category(ch)
        if cat == "Cs":   # a lone surrogate: the command line was not UTF-8
            raise ScaffoldError(f"the title is not valid UTF-8 (at character {i + 1})")
        if cat == "Cc" or ch in "\u2028\u2029":
            raise ScaffoldError(f"the title contains the control character U+{ord(ch):04X} at character {i + 1}: "
                                "a title is one line of text")
    return t


def yaml_str(s: str) -> str:
    """s as one double-quoted YAML scalar, escaped by the YAML emitter (backslashes, quotes, anything a
    YAML reader would take for an escape or refuse)."""
    out = yaml.safe_dump(s, default_style='"', allow_unicode=True, width=1 << 30)
    return out[:-len("\n...\n")] if out.endswith("\n...\n") else out.rstrip("\n")


def _problem(e) -> str | None:
    """Why a freshly written skeleton is not an entry (None: it is one, placeholders apart)."""
    if isinstance(e, entries.LoadError):
        return f"the skeleton would not load ({e.message})"
    bad = [f for f in usable.schema_findings(e) if f.field not in PLACEHOLDER_FIELDS]
    return "; ".join(f"{f.field}: {f.message}" for f in bad[:3]) or None


def new_entry(root: Path, klass: str, title: str) -> tuple[Path, Path]:
    title = check_title(title)
    eid = next_id(root)
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    epath = root / "errata" / klass / f"{eid}.yaml"
    rpath = root / "runbooks" / klass / f"{eid}.ipynb"
    if epath.exists() or rpath.exists():
        raise FileExistsError(f"{epath} or {rpath} already exists")
    text = ENTRY_TEMPLATE.format(schema=SCHEMA_VERSION, id=eid, now=now, klass=klass, title=yaml_str(title))
    rel = f"errata/{klass}/{eid}.yaml"
    # What `new` says it created must be an entry: checked before anything is written, and read back from
    # the disk through the one loader afterwards.
    try:
        located = yamlpos.load(text)
        why = _problem(entries.Entry(epath, rel, located.data, located))
    except yamlpos.YamlError as ex:
        why = f"the skeleton would not load ({ex.message})"
    if why:
        raise ScaffoldError(f"not created: {why}")
    epath.parent.mkdir(parents=True, exist_ok=True)
    with open(epath, "x", encoding="utf-8") as f:
        f.write(text)
    e = entries.load_file(epath, root)
    why = _problem(e) or (None if isinstance(e, entries.Entry) and e.get("title") == title
                          else "the title did not read back as given")
    if why:
        epath.unlink(missing_ok=True)
        raise ScaffoldError(f"not created: {why}")
    nb = build_notebook(eid, title, "TODO: what this runbook reproduces, and on which tiers.", [
        ("md", "## Static check\n\nTODO: what is analysed without any tool."),
        ("code", '@rb.check("static", "TODO describe the check")\ndef _():\n    assert True  # TODO a real assertion'),
    ])
    write_notebook(rpath, nb)
    return epath, rpath
