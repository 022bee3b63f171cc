"""GPU target names from the numbers the hardware and HSA_OVERRIDE_GFX_VERSION give (pure functions)."""
from __future__ import annotations

import re


def gfx_name(major: int, minor: int, stepping: int) -> str:
    """Target name from ISA version numbers: major in decimal, minor and stepping in hex (9.0.10 -> gfx90a)."""
    return f"gfx{major}{minor:x}{stepping:x}"


def gfx_from_target_version(v: int) -> str | None:
    """KFD's gfx_target_version (major*10000 + minor*100 + stepping, e.g. 90402) as a target name."""
    if v <= 0:
        return None
    return gfx_name(v // 10000, (v // 100) % 100, v % 100)


def override_target(value: str | None) -> str | None:
    """The target an HSA_OVERRIDE_GFX_VERSION value names, or None when libhsakmt would reject it (it accepts
    exactly three dot-separated decimal numbers, major <= 63, minor and stepping <= 255; see RMN-0023)."""
    m = re.fullmatch(r"([0-9]+)\.([0-9]+)\.([0-9]+)", value or "")
    if not m:
        return None
    a, b, c = (int(x) for x in m.groups())
    return gfx_name(a, b, c) if a <= 63 and b <= 255 and c <= 255 else None
