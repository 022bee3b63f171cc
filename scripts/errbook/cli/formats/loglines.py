"""The log's failure lines that no diagnosis explains, with their line numbers, for the CI formats.

Triage keeps no line numbers for the lines that report a failure (only the evidence of its matches and the
second stage's query lines), so the log is read once more here, counted the way triage counts physical lines
(\\n, \\r\\n or a lone \\r; UTF-16/32 decoded by textenc), and a line is a failure line by the second stage's own
gate (retrieval.first_failure_line: a failure word, not a logger's INFO line, not a zero count of failures),
applied to its cleaned sub-lines. Reading stops after `limit` such lines. Standard input cannot be read twice:
readable() copies it to a file first.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator

import re2

from errbook.triage import normalize, retrieval, textenc

CHUNK = 1 << 20
LIMIT = 10
_BREAK = re.compile(rb"\r\n|\n|\r")
# RE2 over a whole block: Python's re takes 100 times longer on this alternation (21 s against 0.2 s for 50 MB)
_CANDIDATE = re2.compile(b"(?i)" + retrieval.FAILURE_PATTERN.encode())


def _unify(block: bytes) -> bytes:
    """Every line end as \n (\r\n and a lone \r are one end each, as triage counts them)."""
    return block.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in block else block


def blocks(f) -> Iterator[tuple[bytes, int]]:
    """(complete lines with their ends as \n, the number of the first) of a binary stream, a chunk at a time. A
    line with no end for more than a chunk keeps its head (RAW_CAP_BYTES), so memory stays flat whatever the
    log."""
    rest, n, over = b"", 1, False
    while True:
        buf = f.read(CHUNK)
        if over:                                  # skipping the tail of an overlong line up to its end
            m = _BREAK.search(buf)
            if buf and not m:
                continue
            buf, over = (buf[m.start():] if m else buf), False
        data = rest + buf
        if not buf:
            if data:
                yield _unify(data), n
            return
        cut = data.rfind(b"\n") + 1
        if not cut:                               # no \n: a CR-only log ends its lines at a lone \r (not the
            cut = data.rfind(b"\r", 0, len(data) - 1) + 1        # last byte: it may be the half of a \r\n)
        if not cut:
            rest = data
            if len(rest) > normalize.RAW_CAP_BYTES:
                rest, over = rest[:normalize.RAW_CAP_BYTES], True
            continue
        block, rest = _unify(data[:cut]), data[cut:]
        yield block, n
        n += block.count(b"\n")


def failure_lines(f) -> Iterator[tuple[int, str]]:
    """(line number, cleaned text) of each failure line of a binary stream. The failure words are searched in a
    whole block at once; only the lines holding one are split out, cleaned and judged."""
    for block, first in blocks(f):
        pos, counted, n = 0, 0, first
        while True:
            m = _CANDIDATE.search(block, pos)
            if not m:
                break
            start = block.rfind(b"\n", 0, m.start()) + 1
            end = block.find(b"\n", m.end())
            end = len(block) if end < 0 else end
            n += block.count(b"\n", counted, start)
            counted = start
            text = failure_text(block[start:min(end, start + normalize.RAW_CAP_BYTES)])
            if text is not None:
                yield n, text
            pos = end + 1


def failure_text(raw: bytes) -> str | None:
    """The cleaned sub-line that reports a failure, or None."""
    if not _CANDIDATE.search(raw):
        return None
    for sub in normalize.clean(normalize.decode(raw)):
        if retrieval.first_failure_line([sub]):
            return sub
    return None


def unexplained(paths: list[tuple[str, str]], explained: set[tuple[str, int]], limit: int = LIMIT) -> list[dict]:
    """Failure lines, in log order, not in explained ((source, line) of evidence). paths: (file to read, the
    source name triage gives its lines: "" for a single log). A file that cannot be read is skipped."""
    out: list[dict] = []
    for path, source in paths:
        try:
            with open(path, "rb") as f:
                stream, _ = textenc.utf8_stream(f)
                for n, text in failure_lines(stream):
                    if (source, n) in explained:
                        continue
                    out.append({"line": n, "text": text, **({"source": source} if source else {})})
                    if len(out) >= limit:
                        return out
        except OSError:
            continue
    return out


@contextlib.contextmanager
def readable(logs: list[str], again: bool) -> Iterator[list[str]]:
    """The files to triage: logs, or, when the one log is standard input and it is to be read again (by
    unexplained()), a temporary copy of it, removed on leaving. (Standard input among several logs is not
    copied: its lines would be named by the copy's path; its unexplained lines are not listed.)"""
    if not again or logs != ["-"]:
        yield logs
        return
    fd, path = tempfile.mkstemp(prefix="errbook-stdin-", suffix=".log")
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, CHUNK)
        yield [path]
    finally:
        os.unlink(path)
