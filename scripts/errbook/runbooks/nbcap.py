"""Cap the outputs of an executed runbook before it is published: a runbook that prints 100 MB must not make
a 100 MB page. Each output keeps its head and tail (MAX_OUTPUT characters in all) and says what was cut."""
from __future__ import annotations

import json
import os
from pathlib import Path

MAX_OUTPUT = 64 * 1024          # characters kept of one output (a stream, or one MIME type of a display)
MAX_NOTEBOOK = 1 << 30          # a notebook larger than this is not even opened: it is replaced by a note


def _cut(text: str, limit: int) -> tuple[str, int]:
    if len(text) <= limit:
        return text, 0
    head, tail = text[: limit // 2], text[-(limit // 2):]
    cut = len(text) - len(head) - len(tail)
    note = f"\n\n[errbook: output truncated for publication: {cut} of {len(text)} characters left out]\n\n"
    return head + note + tail, cut


def _join(v) -> str:
    return "".join(v) if isinstance(v, list) else str(v)


def cap_output(out: dict, limit: int = MAX_OUTPUT) -> int:
    """Truncate one output in place; returns how many characters were left out."""
    cut_total = 0
    if out.get("output_type") == "stream" and "text" in out:
        out["text"], cut_total = _cut(_join(out["text"]), limit)
    elif out.get("output_type") == "error":
        tb = _join([x + "\n" for x in out.get("traceback") or []])
        if len(tb) > limit:
            text, cut_total = _cut(tb, limit)
            out["traceback"] = text.split("\n")
    else:
        for mime, v in list((out.get("data") or {}).items()):
            if isinstance(v, (str, list)):
                text, cut = _cut(_join(v), limit)
                if cut:
                    out["data"][mime] = text if mime.startswith("text/") else \
                        f"[errbook: {mime} output of {len(_join(v))} characters left out]"
                    cut_total += cut
            elif len(json.dumps(v)) > limit:    # e.g. application/json
                out["data"][mime] = {"errbook": f"{mime} output left out: larger than {limit} characters"}
                cut_total += 1
    if cut_total:
        out.setdefault("metadata", {})["errbook_truncated"] = cut_total
    return cut_total


def cap_notebook(path: Path, limit: int = MAX_OUTPUT) -> int:
    """Cap every output of the notebook at path (rewritten only when something was cut); returns characters cut."""
    size = os.path.getsize(path)
    if size > MAX_NOTEBOOK:
        path.write_text(json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source":
                        f"errbook: the executed notebook was {size} bytes and is not published."}],
                        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
        return size
    nb = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    total = 0
    for cell in nb.get("cells") or []:
        for out in cell.get("outputs") or []:
            if isinstance(out, dict):
                total += cap_output(out, limit)
    if total:
        nb.setdefault("metadata", {})["errbook_truncated"] = total
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    return total
