"""`errbook new`: the next free id, an entry skeleton and its runbook notebook."""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from . import SCHEMA_VERSION, entries, parameters

SETUP = ("from errbook.runbook import Runbook\n"
         "from errbook import toolchains\n\n"
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
    evidence: TODO what fixes the boundary (release notes, the PR that changed it, the docs version you read).
class: {klass}
title: "{title}"
title_zh: "TODO 中文标题"
cause: "TODO the cause in one line (what an on-call reader needs first)"
cause_zh: "TODO 一句话原因"
tags: [todo]
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
  - step: TODO first step.
    step_zh: TODO 第一步。
verification:
  runbook: runbooks/{klass}/{id}.ipynb
  tiers: [static]
references:
  - url: https://rocm.docs.amd.com/
    kind: docs
    title: TODO the primary source you read
"""


def new_entry(root: Path, klass: str, title: str) -> tuple[Path, Path]:
    eid = next_id(root)
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    epath = root / "errata" / klass / f"{eid}.yaml"
    rpath = root / "runbooks" / klass / f"{eid}.ipynb"
    if epath.exists() or rpath.exists():
        raise FileExistsError(f"{epath} or {rpath} already exists")
    epath.parent.mkdir(parents=True, exist_ok=True)
    epath.write_text(ENTRY_TEMPLATE.format(schema=SCHEMA_VERSION, id=eid, now=now, klass=klass,
                                           title=title.replace('"', "'")), encoding="utf-8")
    nb = build_notebook(eid, title, "TODO: what this runbook reproduces, and on which tiers.", [
        ("md", "## Static check\n\nTODO: what is analysed without any tool."),
        ("code", '@rb.check("static", "TODO describe the check")\ndef _():\n    assert True  # TODO a real assertion'),
    ])
    write_notebook(rpath, nb)
    return epath, rpath
