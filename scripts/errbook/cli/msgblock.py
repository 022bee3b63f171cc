"""`errbook triage`'s message block: when the deciding line is a message several entries explain (an errata/messages/
page), its causes ranked by the evidence in the same log and the machine's facts (triage/messages.py).

Standard input is read once; a copy is kept while it is read (StdinCopy) so the evidence pass can read it again.
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile

from errbook.common import term
from errbook.web import addresses

EVIDENCE_CHARS = 160
SYMBOL = {"found": "+", "missing": "-", "absent": "-", "unknown": "?"}
WORDS = {"found": "found", "missing": "not in the log", "absent": "not on this machine",
         "unknown": "not checked (give --facts)"}


class StdinCopy:
    """A binary stream that copies what is read from it to a temporary file (removed by close())."""

    def __init__(self, f):
        self._f = f
        fd, self.path = tempfile.mkstemp(prefix="errbook-stdin-", suffix=".log")
        self._out = os.fdopen(fd, "wb")

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        if data:
            self._out.write(data)
        return data

    def finish(self) -> None:
        self._out.close()

    def close(self) -> None:
        if not self._out.closed:
            self._out.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)


def explain(root, results: list[dict], read_from: list[str], copy: StdinCopy | None, values: dict | None,
            page_url, entry_url) -> dict | None:
    """The block with its URLs (page_url(src) turns an address of web/addresses.py into a link), or None."""
    from errbook.triage import msgscan
    files = [copy.path if (f == "-" and copy is not None) else f for f in read_from]
    if "-" in files:
        return None                         # standard input that was not kept: nothing to read again
    if copy is not None:
        copy.finish()
    block = msgscan.explain(root, results, files, values)
    if block is None:
        return None
    block["url"] = page_url(addresses.message_src(block["id"]))
    for c in block["causes"]:
        c["url"] = entry_url(c["entry"])
    return block


def print_block(block: dict, style: term.Style, out=sys.stdout) -> None:
    n = len(block["causes"])
    where = f"{block['line']['source']}:" if block["line"].get("source") else "line "
    print(style(f"This message has {n} known cause{'s' if n != 1 else ''}", "bold")
          + f", ranked by the evidence in this log and machine ({block['url']}):", file=out)
    print(style(f"  {where}{block['line']['line']}: ", "dim") + term.cut(block["line"]["text"], EVIDENCE_CHARS),
          file=out)
    for rank, c in enumerate(block["causes"], 1):
        found = sum(e["state"] == "found" for e in c["evidence"])
        print(f"  {rank}. {style(c['entry'], 'bold')}  {c['title']}  "
              f"[{found} of {len(c['evidence'])} evidence found]  {c['url']}", file=out)
        for e in c["evidence"]:
            print(f"     {SYMBOL[e['state']]} {e['says']} ({WORDS[e['state']]})", file=out)
            for ln in e.get("lines", [])[:1]:
                lw = f"{ln['source']}:" if ln.get("source") else "line "
                print(style(f"         {lw}{ln['line']}: ", "dim") + term.cut(ln["text"], EVIDENCE_CHARS), file=out)
    for o in block["other_causes"]:
        print(f"  also reported, no entry yet: {o['says']} ({o['source']})", file=out)
