"""Log-line cleaning before matching: one implementation for the CLI, validate and the runbooks.

assets/engine.js runs the very same steps with the expressions exported in JS_SPEC; tests/test_engines.py keeps
the two equal. A physical log line becomes one or more *sub-lines*, each matched on its own:

  1. the raw line is cut at RAW_CAP_BYTES of UTF-8 (memory stays flat on a 200 MB line);
  2. colour codes are removed; characters outside the BMP become U+FFFD (so `.` means one character in RE2 and
     in JavaScript's RegExp alike); odd spaces become a plain space; typographic quotes (GCC's ‘…’ and “…”)
     become ASCII quotes; the two non-ASCII letters RE2 folds onto ASCII ones become those letters;
  3. a JSON-escaped line (a log exported by a CI system or a container runtime, with `\\n` inside a string) is
     unescaped and split at its escaped newlines;
  4. in each sub-line: backslashes become slashes in a sub-line holding a Windows drive path, and launcher
     prefixes (timestamps, torchrun ranks, Ray workers, dmesg/journal headers, driver device names, container
     and CI prefixes) are stripped from the left;
  5. a sub-line longer than LINE_CAP is matched in overlapping windows (a match shorter than WINDOW_OVERLAP
     characters is never cut in two).

Physical lines are split at \\n, \\r\\n and a lone \\r (a CR-only log has as many lines as an editor shows).
"""
from __future__ import annotations

import re

import re2

RAW_CAP_BYTES = 65536   # a raw line is cut here before cleaning
LINE_CAP = 4096         # matching works on windows of at most this many characters
WINDOW_OVERLAP = 256    # consecutive windows share this many characters

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]", re.ASCII)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
# JSON escapes, in a line that looks like JSON (starts with { [ or ", or holds "key":), holds an escaped
# newline and no Windows path with single backslashes (C:\native\transformers is a path, not JSON).
# \n and \r become line breaks.
_JSON_LINE = re.compile(r"\\[nr]")
_JSON_SHAPE = re.compile(r'^[ \t]*[\[{"]|":')
_WINPATH_SINGLE = re.compile(r"[A-Za-z]:\\(?!\\)")
_JSON_ESC = re.compile(r'\\(?:u001[bB]|[nrt"\\/])')
_JSON_MAP = {"\\n": "\n", "\\r": "\n", "\\t": "\t", '\\"': '"', "\\\\": "\\", "\\/": "/",
             "\\u001b": "\x1b", "\\u001B": "\x1b"}
_BREAKS = re.compile(r"\r\n|\r|\n")
# Non-ASCII spaces and \v \f become a plain space so \s means the same in RE2, Python and JavaScript.
_SPACES = re.compile("[\u000b\u000c\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")
_SQUOTE = re.compile("[\u2018\u2019\u201a\u201b\u2032]")
_DQUOTE = re.compile("[\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb]")
# The two non-ASCII letters whose case folds onto ASCII ones in RE2 but not in JavaScript.
_KELVIN, _LONG_S = re.compile("\u212a"), re.compile("\u017f")
_WINPATH = re.compile(r"(?:^|[^A-Za-z0-9])[A-Za-z]:\\")
# Prefixes that launchers, loggers and CI systems put before the real message; stripped repeatedly from the left.
_PREFIX = re.compile(
    r"^(?:(?:"
    r"\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?"      # ISO timestamps
    r"|\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?"                                                  # clock times
    r"|\[\s*\d+\.\d+\]"                                                                      # dmesg [  12.345678]
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} [A-Za-z0-9._-]+ [A-Za-z0-9._/-]+(?:\[\d+\])?:"  # journal/syslog
    r"|[a-z][a-z0-9_]* [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]:"                           # amdgpu 0000:03:00.0:
    r"|\[(?:rank|RANK|default)\s*\d+\]:?"                                                    # torchrun ranks
    r"|\([A-Za-z_][A-Za-z0-9_]* pid=\d+(?:, ip=[0-9.]+)?\)"                                  # vLLM/Ray workers
    r"|[A-Za-z0-9][A-Za-z0-9_.-]*-\d+ +\|"                                                   # docker compose svc-1 |
    r"|[A-Za-z0-9][A-Za-z0-9_.-]* \[(?:stdout|stderr)\]"                                      # runner [stderr]
    r"|##\[[a-z]+\]"                                                                         # GitHub Actions ##[error]
    r"|\{\"(?:log|message|msg|text)\": ?\""                                                  # JSON log record head
    r")[ \t]*)+",                                                                           # one or more, in one match
    re.ASCII,
)


def split_lines(text: str) -> list[str]:
    """Physical lines of an in-memory text (the streaming reader splits the same way)."""
    return _BREAKS.split(text)


def cap_raw(line: str) -> str:
    """Cut a line at RAW_CAP_BYTES of UTF-8 (the in-memory twin of decode())."""
    if len(line) * 3 <= RAW_CAP_BYTES:
        return line
    b = line.encode("utf-8", "surrogatepass")
    return b[:RAW_CAP_BYTES].decode("utf-8", "replace") if len(b) > RAW_CAP_BYTES else line


def decode(raw: bytes) -> str:
    return raw[:RAW_CAP_BYTES].decode("utf-8", "replace")


def _strip_prefixes(s: str) -> str:
    m = _PREFIX.match(s)
    return s[m.end():] if m else s


def _windows(s: str) -> list[str]:
    if len(s) <= LINE_CAP:
        return [s]
    step = LINE_CAP - WINDOW_OVERLAP
    return [s[i:i + LINE_CAP] for i in range(0, len(s) - WINDOW_OVERLAP, step)]


def clean(raw: str) -> list[str]:
    """One physical line (already capped) -> the sub-lines that are matched. Empty sub-lines are dropped."""
    line = raw
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if not line.isascii():
        line = _ASTRAL.sub("\ufffd", line)
        line = _DQUOTE.sub('"', _SQUOTE.sub("'", _SPACES.sub(" ", line)))
        line = _LONG_S.sub("s", _KELVIN.sub("K", line))
    if _JSON_LINE.search(line) and _JSON_SHAPE.search(line) and not _WINPATH_SINGLE.search(line):
        parts = _BREAKS.split(_JSON_ESC.sub(lambda m: _JSON_MAP[m.group(0)], line))
        parts = [_ANSI.sub("", p) if "\x1b" in p else p for p in parts]
    else:
        parts = [line]
    out: list[str] = []
    for s in parts:
        if "\\" in s and _WINPATH.search(s):
            s = s.replace("\\", "/")
        s = _strip_prefixes(s)
        if s:
            out.extend(_windows(s))
    return out


# --- the prefilter's view of raw bytes ----------------------------------------------------------------------
# The prefilter searches raw chunks, not cleaned lines. Every cleaned sub-line must appear inside its raw
# line's probe, so a pattern that matches the sub-line also matches the probe (the prefilter is a superset):
# the probe applies the same character rewrites as clean(), and turns escaped newlines into spaces (not line
# breaks), so the probe has exactly as many lines as the raw chunk.
_ANSI_B = re.compile(_ANSI.pattern.encode(), re.ASCII)
_REWRITE_B = {**{ch.encode(): b" " for ch in "\u000b\u000c\u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
                 + "".join(chr(c) for c in range(0x2000, 0x200B))},
              **{ch.encode(): b"'" for ch in "\u2018\u2019\u201a\u201b\u2032"},
              **{ch.encode(): b'"' for ch in "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"},
              "\u212a".encode(): b"K", "\u017f".encode(): b"s"}
# A literal alternation (no backtracking to fear); sub() with a dict lookup is one C pass with a cheap call per
# rewritten character (a dense log of GCC messages has one on nearly every line).
_REWRITE_FIND_B = re.compile(b"|".join(re.escape(k) for k in _REWRITE_B))
_SPECIAL_B = re2.compile(rb"\\[nr]|[A-Za-z]:\\")
_JSON_LINE_B = re.compile(_JSON_LINE.pattern.encode())
_JSON_SHAPE_B = re.compile(_JSON_SHAPE.pattern.encode())
_WINPATH_SINGLE_B = re.compile(_WINPATH_SINGLE.pattern.encode())
_WINPATH_B = re.compile(_WINPATH.pattern.encode())
_JSON_MAP_B = {k.encode(): (b" " if v == "\n" else v.encode()) for k, v in _JSON_MAP.items()}
_JSON_ESC_B = re.compile(_JSON_ESC.pattern.encode())


def _probe_special(line: bytes) -> bytes:
    if _JSON_LINE_B.search(line) and _JSON_SHAPE_B.search(line) and not _WINPATH_SINGLE_B.search(line):
        line = _JSON_ESC_B.sub(lambda x: _JSON_MAP_B[x.group(0)], line)
        if b"\x1b" in line:
            line = _ANSI_B.sub(b"", line)
    if b"\\" in line and _WINPATH_B.search(line):
        line = line.replace(b"\\", b"/")
    return line


def _rewrite_one(m) -> bytes:
    return _REWRITE_B[m.group(0)]


def probe(data: bytes) -> bytes:
    """What the prefilter searches for a chunk of whole lines (valid UTF-8, same number of newlines)."""
    data = valid_utf8(data)
    if b"\x1b" in data:
        data = _ANSI_B.sub(b"", data)
    if not data.isascii():
        data = _REWRITE_FIND_B.sub(_rewrite_one, data)
    if b"\\" in data:
        # Lines holding an escaped newline or a drive path, found by RE2 (a DFA: one pass however many
        # backslashes); each such line is rewritten once, and the search resumes after it.
        out, pos = [], 0
        while (m := _SPECIAL_B.search(data, pos)) is not None:
            s = data.rfind(b"\n", 0, m.start()) + 1
            e = data.find(b"\n", m.end())
            e = len(data) if e < 0 else e
            out += [data[pos:s], _probe_special(data[s:e])]
            pos = e
        if out:
            out.append(data[pos:])
            data = b"".join(out)
    return data


def valid_utf8(data: bytes) -> bytes:
    """The chunk with invalid UTF-8 sequences replaced (newlines untouched): Hyperscan's UTF-8 mode needs it."""
    if data.isascii():
        return data
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace").encode("utf-8")


# --- masking: what varies between two reports of the same failure ------------------------------------------
# Used to compare a log line with an entry's counter-examples (and by the second stage's tokenizer). Constant
# replacement strings and ASCII classes, so engine.js applies the same list with the same result.
_MASK = [
    (re.compile(r"(?:[A-Za-z]:)?(?:/[^ \t/:'\"()<>,;\[\]]+)+/", re.ASCII), "<path>/"),   # directories
    (re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{8,}\b", re.ASCII), "<hex>"),
    (re.compile(r"[0-9]+(?:\.[0-9]+)*", re.ASCII), "<n>"),
    (re.compile(r"[ \t]+", re.ASCII), " "),
]


def mask(s: str, numbers: bool = True) -> str:
    """Paths keep their last component, hex becomes <hex>, numbers <n> (unless numbers=False: a counter-example
    such as 'VGPRs Spill: 0' differs from the failure by its number alone)."""
    if "/" in s:
        s = _MASK[0][0].sub(_MASK[0][1], s)
    s = _MASK[1][0].sub(_MASK[1][1], s)
    if numbers:
        s = _MASK[2][0].sub(_MASK[2][1], s)
    if "  " in s or "\t" in s:
        s = _MASK[3][0].sub(_MASK[3][1], s)
    return s.strip()


# Exported for assets/engine.js so both engines run the very same cleaning expressions.
JS_SPEC = {
    "raw_cap_bytes": RAW_CAP_BYTES,
    "line_cap": LINE_CAP,
    "window_overlap": WINDOW_OVERLAP,
    "ansi": _ANSI.pattern,
    "json_line": _JSON_LINE.pattern,
    "json_shape": _JSON_SHAPE.pattern,
    "winpath_single": _WINPATH_SINGLE.pattern,
    "json_esc": _JSON_ESC.pattern,
    "json_map": _JSON_MAP,
    "breaks": _BREAKS.pattern,
    "spaces": _SPACES.pattern,
    "squote": _SQUOTE.pattern,
    "dquote": _DQUOTE.pattern,
    "winpath": _WINPATH.pattern,
    "kelvin": _KELVIN.pattern,
    "long_s": _LONG_S.pattern,
    "prefix": _PREFIX.pattern,
    "mask": [[rx.pattern, rep] for rx, rep in _MASK],
}
