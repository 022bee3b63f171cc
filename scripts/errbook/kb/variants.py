"""Variants of a signature's real examples: the same failure as another machine prints it.

`errbook validate` requires every signature to match every variant of each of its examples, so a signature
written against one log also finds the log the next team pastes. A signature whose message really contains a
fixed number, gfx target or path says so with `keeps: [numbers | gfx | paths | hex]`, and those variants are
not made for it.
"""
from __future__ import annotations

import re

_PATH = re.compile(r"(?<![\w.:/\\])/(?:[A-Za-z0-9_.+-]+/)+[A-Za-z0-9_.+-]*")
_NUMBER = re.compile(r"(?<![\w.])[0-9]+(?:\.[0-9]+)*(?![\w])")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_GFX = re.compile(r"\bgfx[0-9]{1,2}[0-9a-f]{1,2}\b")
_ROCM_DIR = re.compile(r"/opt/rocm(?:-[0-9][0-9.]*)?")
_SQUOTED = re.compile(r"'([^'\n]{1,80})'")
_DQUOTED = re.compile(r'"([^"\n]{1,80})"')
_OTHER_GFX = {"gfx90a": "gfx1100", "gfx942": "gfx1201", "gfx1100": "gfx942", "gfx1030": "gfx90a"}


def _digits(m: re.Match) -> str:
    # 0 stays 0 and a non-zero number stays non-zero: "Spill: 0" versus "Spill: 12" is often the message itself.
    return "".join(c if c == "0" or c == "." else str(int(c) % 9 + 1) for c in m.group(0))


_LINUX_ONLY = ("/dev/", "/sys/", "/proc/", "/run/", "/etc/")


def _windows(m: re.Match) -> str:
    p = m.group(0)
    if p.startswith(_LINUX_ONLY):
        return p                   # device and kernel paths have no Windows form
    return "C:\\Program Files\\AMD\\ROCm" + p.replace("/", "\\")


def _gfx(m: re.Match) -> str:
    g = m.group(0)
    return _OTHER_GFX.get(g, "gfx1100" if g != "gfx1100" else "gfx942")


KINDS = {
    # kind: (the part it varies, or None when it varies only the surface), transform
    "windows-path": ("paths", lambda t: _PATH.sub(_windows, t)),
    "rocm-prefix": ("paths", lambda t: _ROCM_DIR.sub(lambda m: "/opt/rocm-7.1.1" if m.group(0) == "/opt/rocm"
                                                      else "/opt/rocm", t)),
    "gcc-quotes": (None, lambda t: _DQUOTED.sub("\u201c\\1\u201d", _SQUOTED.sub("\u2018\\1\u2019", t))),
    "numbers": ("numbers", lambda t: _NUMBER.sub(_digits, t)),
    "hex": ("hex", lambda t: _HEX.sub(lambda m: "0x" + "".join("0123456789abcdef"[(int(c, 16) + 7) % 16]
                                                              for c in m.group(0)[2:]), t)),
    "gfx": ("gfx", lambda t: _GFX.sub(_gfx, t)),
    "kernel-log": (None, lambda t: "\n".join(f"[{1234 + i}.567890] {line}" if line.strip() else line
                                             for i, line in enumerate(t.split("\n")))),
    "journal": (None, lambda t: "\n".join(f"Dec 01 03:04:05 node07 python3[4242]: {line}" if line.strip() else line
                                          for line in t.split("\n"))),
}


def of(text: str, keeps: list[str] | tuple = ()) -> list[tuple[str, str]]:
    """(kind, variant) for every kind that changes the text and is not kept by the signature."""
    out = []
    for kind, (part, fn) in KINDS.items():
        if part and part in keeps:
            continue
        v = fn(text)
        if v != text:
            out.append((kind, v))
    return out
