"""What the CLI writes to a terminal: control characters are shown, never obeyed.

Text printed by errbook comes partly from outside: log lines, a facts file, a ledger's platform_label. An ESC
sequence there could set the window title, write the clipboard (OSC 52) or erase the screen; a backspace or a
carriage return could hide what precedes it. The CLI wraps stdout and stderr in EscapingWriter (cli.main), so
every printer goes through escape() without knowing it.

The escape form is JSON's (\\u001b): a raw control character inside a JSON string printed by a --json command
becomes the JSON escape of that same character, so JSON output keeps its meaning byte for byte after parsing.
"""
from __future__ import annotations

import os
import re
import secrets
import sys

# C0 controls except \t and \n, DEL, and C1 controls (U+0080-U+009F; U+009B is a one-character CSI).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape(s: str) -> str:
    """s with each control character (ESC included, so no escape sequence survives) written as \\uXXXX; the
    colour codes Style wrote (and only those) become real SGR sequences."""
    out = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", s)
    return _OWN_SGR.sub("\x1b[\\1m", out) if _MARK in out else out


class EscapingWriter:
    """A text stream whose write() escapes control characters; everything else is the wrapped stream's."""

    def __init__(self, stream):
        self.raw_stream = stream

    def write(self, s: str) -> int:
        self.raw_stream.write(escape(s))
        return len(s)

    def writelines(self, lines) -> None:
        for s in lines:
            self.write(s)

    def __getattr__(self, name):
        return getattr(self.raw_stream, name)


def unwrapped(stream):
    """The stream under an EscapingWriter (a progress bar that redraws its line with \\r needs it), else stream."""
    return getattr(stream, "raw_stream", stream) if isinstance(stream, EscapingWriter) else stream


# --- Cutting, plurals, colour, progress: the one place the CLI decides how text looks in a terminal. ---

ELLIPSIS = "…"


def cut(text: str, limit: int) -> str:
    """text on one line (runs of whitespace as one space), at most `limit` characters: when longer, cut at the
    last word boundary that fits and ended with "…" (a single word longer than the limit is cut inside it)."""
    s = " ".join(str(text).split())
    if len(s) <= limit:
        return s
    room = max(1, limit - len(ELLIPSIS))
    head = s[:room + 1]
    space = head.rfind(" ")
    head = head[:space] if space > room // 2 else s[:room]
    return head.rstrip(" ,;:") + ELLIPSIS


def plural(n: int, one: str, many: str | None = None) -> str:
    """'1 line', '2 lines', '0 lines'; `many` for irregular plurals ('entry', 'entries')."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def wants_colour(stream, no_color: bool = False) -> bool:
    """Colour only on a terminal, and never with --no-color or NO_COLOR set to anything non-empty
    (https://no-color.org)."""
    if no_color or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(unwrapped(stream), "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


_SGR = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "cyan": "36"}


class Style:
    """Wraps text in SGR colour codes when enabled, else returns it unchanged. The codes are written with
    write_raw (past EscapingWriter, which would show them as text); the text itself is still escaped."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles:
            return text
        codes = ";".join(_SGR[s] for s in styles)
        return f"{_MARK}[{codes}m{text}{_MARK}[0m"


# A mark with a per-process random part stands for ESC inside text: EscapingWriter turns it into a real ESC only
# before the SGR codes Style writes, so an ESC (or anything else) that came from a log is still shown, never obeyed.
_MARK = f"\ue01b{secrets.token_hex(6)}\ue01b"
_OWN_SGR = re.compile(re.escape(_MARK) + r"\[((?:[0-9]|3[0-9])(?:;3?[0-9])*)m")     # colours and bold/dim only


def style_for(stream, no_color: bool = False) -> Style:
    return Style(wants_colour(stream, no_color))


class Progress:
    """One stderr line that redraws itself ("eval: 120/316 logs") only when stderr is a terminal; nothing at all
    in a pipe, a file or a --json run (pass enabled=False). close() clears the line."""

    def __init__(self, label: str, total: int, enabled: bool = True, stream=None):
        self.stream = unwrapped(stream if stream is not None else sys.stderr)
        self.label, self.total, self.done = label, total, 0
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(enabled and isatty and isatty())
        self._width = 0

    def step(self, n: int = 1, note: str = "") -> None:
        self.done += n
        if not self.enabled:
            return
        count = f"{self.done}/{self.total} " if self.total else ""
        text = escape(cut(f"{self.label}: {count}{note}".rstrip(), 78))
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def close(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
        self._width = 0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
