"""The check that confirms an entry's diagnosis: its first fix step marked `kind: confirm`, else its first fix step.

The contract shared with the fix boxes (a step may carry `kind: confirm`, with its expected output in `expect:` /
`expect_zh:`; a step without `kind` is a fix step). Read only through `confirm_check`, so the finder and anything
else that shows "how to confirm it" agree, and work while no entry has a confirm step yet.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Check:
    kind: str                 # "confirm": a step written to confirm the diagnosis; "fix": the first fix step
    step: str
    step_zh: str
    code: str                 # the step's command (its snippet, or the code to write), "" when it has none
    expect: str               # what the check prints when the diagnosis is right, "" when not stated
    expect_zh: str

    def as_dict(self) -> dict:
        return asdict(self)


def _code(step: dict) -> str:
    code = step.get("code")
    if not isinstance(code, dict):
        return ""
    return str(code.get("snippet") or code.get("after") or "").strip()


def _text(v) -> str:
    return " ".join(str(v).split()) if v else ""


def confirm_check(data: dict) -> Check | None:
    """The entry's confirming check (first `kind: confirm` step, else its first step); None without fix steps."""
    steps = [s for s in (data.get("fix") or []) if isinstance(s, dict)]
    if not steps:
        return None
    confirm = next((s for s in steps if s.get("kind") == "confirm"), None)
    s = confirm or steps[0]
    return Check("confirm" if confirm else "fix", _text(s.get("step")), _text(s.get("step_zh") or s.get("step")),
                 _code(s), _text(s.get("expect")), _text(s.get("expect_zh") or s.get("expect")))
