"""Log-line cleaning before matching. assets/engine.js implements the same steps; tests/test_engines.py keeps them equal."""
from __future__ import annotations

import re

RAW_CAP_BYTES = 65536   # a raw line is cut here before cleaning (memory stays flat on a 100 MB line)
LINE_CAP = 4096         # a cleaned line is cut here before matching (bounds regex work per line)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]", re.ASCII)
# Non-ASCII spaces and \v \f become a plain space so \s means the same in RE2, Python and JavaScript.
_SPACES = re.compile("[\u000b\u000c\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")
# Prefixes that launchers and CI systems put before the real message; stripped repeatedly from the left.
_PREFIX = re.compile(
    r"^(?:"
    r"\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?"  # ISO timestamps
    r"|\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?"                                              # clock times
    r"|\[(?:rank|RANK|default)\s*\d+\]:?"                                                # torchrun ranks
    r"|\([A-Za-z_][A-Za-z0-9_]* pid=\d+(?:, ip=[0-9.]+)?\)"                              # vLLM/Ray workers
    r")[ \t]*",
    re.ASCII,
)


def clean_line(raw: str) -> str:
    line = raw.rstrip("\r")
    cr = line.rfind("\r")
    if cr >= 0:                      # a progress bar redrawn with \r: only its last state was visible
        line = line[cr + 1:]
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    line = _SPACES.sub(" ", line)
    while True:
        m = _PREFIX.match(line)
        if not m or m.end() == 0:
            break
        line = line[m.end():]
    if len(line) > LINE_CAP:
        line = line[:LINE_CAP]
    return line


def cap_raw(line: str) -> str:
    """The in-memory twin of decode(): cut a line at RAW_CAP_BYTES of UTF-8."""
    if len(line) * 3 <= RAW_CAP_BYTES:
        return line
    b = line.encode("utf-8", "surrogatepass")
    return b[:RAW_CAP_BYTES].decode("utf-8", "replace") if len(b) > RAW_CAP_BYTES else line


def decode(raw: bytes) -> str:
    return raw[:RAW_CAP_BYTES].decode("utf-8", "replace")


# Exported for assets/engine.js so both engines run the very same cleaning expressions.
JS_SPEC = {
    "raw_cap_bytes": RAW_CAP_BYTES,
    "line_cap": LINE_CAP,
    "ansi": _ANSI.pattern,
    "spaces": _SPACES.pattern,
    "prefix": _PREFIX.pattern,
}
