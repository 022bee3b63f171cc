"""What the CLI writes to a terminal: control characters are shown, never obeyed.

Text printed by errbook comes partly from outside: log lines, a facts file, a ledger's platform_label. An ESC
sequence there could set the window title, write the clipboard (OSC 52) or erase the screen; a backspace or a
carriage return could hide what precedes it. The CLI wraps stdout and stderr in EscapingWriter (cli.main), so
every printer goes through escape() without knowing it.

The escape form is JSON's (\\u001b): a raw control character inside a JSON string printed by a --json command
becomes the JSON escape of that same character, so JSON output keeps its meaning byte for byte after parsing.
"""
from __future__ import annotations

import re

# C0 controls except \t and \n, DEL, and C1 controls (U+0080-U+009F; U+009B is a one-character CSI).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape(s: str) -> str:
    """s with each control character (ESC included, so no escape sequence survives) written as \\uXXXX."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", s)


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
