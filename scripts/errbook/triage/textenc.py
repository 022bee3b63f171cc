"""Which encoding a log is in: UTF-8 (with or without a BOM), or UTF-16/UTF-32 (by BOM, or without one by the
NULs that ASCII text has in every other, or three of four, bytes). Windows PowerShell 5.1's `>` writes UTF-16 LE
with a BOM; read as UTF-8 such a log is NUL-interleaved bytes that no signature matches.

Everything after this point reads UTF-8, so a UTF-16/32 stream is transcoded as it is read (Utf8Reader: an
incremental decoder, so a character cut between two reads is kept whole). assets/engine.js has the same rule
(logEncoding), for the paste page's file input; tests/hostile/test_encodings.py keeps the two equal.
"""
from __future__ import annotations

import codecs
import os
import select
import stat

from errbook.common import interrupts

SNIFF_BYTES = 4096          # the head that decides

_BOMS = (                   # longest first: the UTF-32 LE BOM starts with the UTF-16 LE one
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
LABELS = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8 with BOM", "utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE",
          "utf-32-le": "UTF-32 LE", "utf-32-be": "UTF-32 BE"}


def _nul_shares(head: bytes, width: int) -> list[tuple[int, int]] | None:
    """Per byte position within a unit of `width` bytes: (NULs there, units), over the head's whole units."""
    units = len(head) // width
    if units < 2:
        return None
    return [(head[i:units * width:width].count(0), units) for i in range(width)]


def _mostly(shares: list, pos) -> bool:
    """At the byte positions `pos` of each code unit, NUL at least half the time."""
    units = shares[0][1]
    return all(shares[i][0] * 2 >= units for i in pos)


def _rarely(shares: list, i: int) -> bool:
    """At byte position i of each code unit, NUL at most a tenth of the time."""
    return shares[i][0] * 10 <= shares[0][1]


def sniff(head: bytes) -> tuple[str, int]:
    """(encoding, BOM length) of a stream starting with head (its first SNIFF_BYTES bytes, or all of a shorter
    stream). Without a BOM, UTF-32 is taken when the high three bytes of every 4-byte unit (LE; low three BE)
    are NUL in at least half the units and the other byte in at most a tenth; UTF-16 the same with 2-byte units.
    UTF-8 text has no NULs, so a real log is never mistaken; a binary blob has NULs in every position."""
    for bom, enc in _BOMS:
        if head.startswith(bom):
            return enc, len(bom)
    head = head[:SNIFF_BYTES]
    for width, le, be in ((4, "utf-32-le", "utf-32-be"), (2, "utf-16-le", "utf-16-be")):
        shares = _nul_shares(head, width)
        if shares is None:
            continue
        if _mostly(shares, range(1, width)) and _rarely(shares, 0):
            return le, 0
        if _mostly(shares, range(width - 1)) and _rarely(shares, width - 1):
            return be, 0
    return "utf-8", 0


class Utf8Reader:
    """A binary stream of UTF-16/UTF-32 read as UTF-8: read(n) decodes about n source bytes and returns their
    UTF-8 (never empty before the end). Undecodable units become U+FFFD, as invalid UTF-8 does elsewhere.
    source_bytes: how many bytes were read from the source."""

    def __init__(self, f, encoding: str, head: bytes):
        self._f = f
        self._dec = codecs.getincrementaldecoder(encoding)("replace")
        self._head = head
        self._done = False
        self.source_bytes = 0

    def read(self, n: int = -1) -> bytes:
        while not self._done:
            if self._head:
                raw, self._head = self._head, b""
            else:
                raw = self._f.read(n if n and n > 0 else 1 << 20)
            self.source_bytes += len(raw)
            text = self._dec.decode(raw, final=not raw)
            self._done = not raw
            if text:
                return text.encode("utf-8", "surrogatepass")
        return b""


class TerminalReader:
    """Standard input typed at a terminal, as a binary stream: each read is one read(2) of the terminal (a line,
    or what was typed before Ctrl-D), and the first end of input is final. A buffered stream would need Ctrl-D
    twice: its read(n) returns what it has at the first end of input, and the next read waits for another."""

    def __init__(self, fd: int):
        self._fd = fd
        self._eof = False

    def read(self, n: int = -1) -> bytes:
        if self._eof:
            return b""
        data = os.read(self._fd, n if n and n > 0 else 1 << 16)
        self._eof = not data
        return data


class PipeReader:
    """A FIFO, pipe or socket as a binary stream whose waits end on Ctrl-C: each read waits in select() slices of
    SLICE seconds, then does one read(2). A blocking read on a pipe whose writer stays open is not always
    interrupted by SIGINT (common/interrupts.py says when), so a recorded Ctrl-C is re-raised between slices."""

    SLICE = 0.25

    def __init__(self, fd: int):
        self._fd = fd

    def read(self, n: int = -1) -> bytes:
        while True:
            interrupts.raise_if_pending()
            ready, _, _ = select.select([self._fd], [], [], self.SLICE)
            if ready:
                return os.read(self._fd, n if n and n > 0 else 1 << 20)


def waits(fd: int) -> bool:
    """Whether a read of fd can wait for a writer (a FIFO, pipe or socket), so PipeReader should read it."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def utf8_stream(f) -> tuple[object, str]:
    """(a stream of UTF-8 bytes with the same text as binary stream f, the encoding f was found in). A UTF-8
    stream is read as is (a BOM is cleaned as a space, as before), without a copy; others through Utf8Reader.
    Reads f's head, so f must be at its start."""
    head = _read_head(f)
    enc, bom = sniff(head)
    if enc in ("utf-8", "utf-8-sig"):
        return _Prefixed(f, head), enc
    reader = Utf8Reader(f, enc, head[bom:])
    reader.source_bytes = bom
    return reader, enc


def _read_head(f) -> bytes:
    """Up to SNIFF_BYTES from f (a pipe may return less per read: read until that many or the end)."""
    head = b""
    while len(head) < SNIFF_BYTES:
        b = f.read(SNIFF_BYTES - len(head))
        if not b:
            break
        head += b
    return head


class _Prefixed:
    """f with bytes already read from it put back in front."""

    def __init__(self, f, head: bytes):
        self._f, self._head = f, head

    def read(self, n: int = -1) -> bytes:
        if self._head:
            if n is None or n < 0 or n >= len(self._head):
                out, self._head = self._head, b""
                if n is not None and n > len(out):
                    out += self._f.read(n - len(out))
                elif n is None or n < 0:
                    out += self._f.read()
                return out
            out, self._head = self._head[:n], self._head[n:]
            return out
        return self._f.read(n)
