"""An entry's fix list in two parts: the confirm steps (`kind: confirm`: checks that confirm the diagnosis and
change nothing, with the output that confirms it in `expect`) and the fix steps (every step without `kind`).

The one reading of that split (the entry page's fix box, `errbook show`), and the rules the schema cannot state:
confirm steps come before every fix step, at least one fix step remains, and `expect` belongs to a confirm step.
Every reader relies on them (the fix box shows the first fix step), so usable.py checks them with the schema."""
from __future__ import annotations

from typing import Any

CONFIRM = "confirm"


def is_confirm(step: Any) -> bool:
    return isinstance(step, dict) and step.get("kind") == CONFIRM


def split(steps: Any) -> tuple[list[dict], list[dict]]:
    """(confirm steps, fix steps), each in the entry's order; anything but a list of steps gives ([], [])."""
    if not isinstance(steps, list):
        return [], []
    steps = [s for s in steps if isinstance(s, dict)]
    return [s for s in steps if is_confirm(s)], [s for s in steps if not is_confirm(s)]


def problems(steps: Any) -> list[tuple[tuple, str]]:
    """(path under the entry, message) for each rule the fix list breaks; the schema names wrong types."""
    if not isinstance(steps, list) or not steps:
        return []
    out: list[tuple[tuple, str]] = []
    first_fix = next((i for i, s in enumerate(steps) if not is_confirm(s)), None)
    if first_fix is None:
        out.append((("fix",), "every step is kind: confirm: an entry needs at least one fix step (a step "
                              "without kind) that changes something"))
    for i, s in enumerate(steps):
        if not isinstance(s, dict):
            continue
        if is_confirm(s) and first_fix is not None and i > first_fix:
            out.append((("fix", i, "kind"), f"a confirm step after fix step {first_fix + 1}: confirm steps "
                                            "(the checks of the diagnosis) come before the fix"))
        for key in ("expect", "expect_zh"):
            if key in s and "kind" not in s:          # a wrong kind is the schema's finding, named once
                out.append((("fix", i, key), f"{key} belongs to a confirm step (kind: confirm): a fix step "
                                             "has no expected output of a check"))
    return out
