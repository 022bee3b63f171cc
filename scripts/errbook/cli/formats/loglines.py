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

from errbook.triage import normalize, retrieval, textenc

CHUNK = 1 << 20
LIMIT = 10
_BREAK = re.compile(rb"\r\n|\n|\r")
_CANDIDATE = re.compile(retrieval.FAILURE_PATTERN.encode(), re.IGNORECASE)


def physical_lines(f) -> Iterator[bytes]:
    """The lines of a binary stream, without their ends; a line longer than RAW_CAP_BYTES keeps its head (as
    triage reads it), so memory stays flat whatever the log."""
    rest, over = b"", False
    while True:
        buf = f.read(CHUNK)
        if over:
            m = _BREAK.search(buf)
            if buf and not m:
                continue
            buf, over = (buf[m.start():] if m else buf), False
        data = rest + buf
        held = b""
        if buf and data.endswith(b"\r"):       # maybe the first half of \r\n
            data, held = data[:-1], b"\r"
        pos = 0
        for m in _BREAK.finditer(data):
            yield data[pos:min(m.start(), pos + normalize.RAW_CAP_BYTES)]
            pos = m.end()
        rest = data[pos:] + held
        if not buf:
            if rest:
                yield rest
            return
        if len(rest) > normalize.RAW_CAP_BYTES:
            rest, over = rest[:normalize.RAW_CAP_BYTES], True


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
                for n, raw in enumerate(physical_lines(stream), 1):
                    text = failure_text(raw)
                    if text is None or (source, n) in explained:
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
