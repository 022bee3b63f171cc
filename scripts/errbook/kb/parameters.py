"""verification.parameters: the values `errbook run` hands a runbook.

papermill injects each parameter into the notebook as the Python line `name = value`: the name is written as
is, so a name is code. A name must therefore be an ASCII identifier that is not a keyword, and a value plain
data that papermill writes as a literal (a string, number, boolean, null, or a list of those). The schema says
the same (entry.schema.json); validate reports each problem here with its line, and the runner refuses an
entry with any, since it may be handed one that was never validated.
"""
from __future__ import annotations

import keyword
import re

from errbook.errors import ErrbookError

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCALARS = (str, int, float, bool, type(None))


class ParameterError(ErrbookError, ValueError):
    """verification.parameters that must not reach papermill."""


def _plain(v) -> bool:
    return isinstance(v, _SCALARS) or (isinstance(v, list) and all(isinstance(x, _SCALARS) for x in v))


def problems(params) -> list[tuple[tuple, str]]:
    """(field path below verification.parameters, message) for each problem; [] when papermill may get them."""
    if params is None:
        return []
    if not isinstance(params, dict):
        return [((), f"must be a mapping of name: value, not {type(params).__name__}")]
    out = []
    for k, v in params.items():
        if not isinstance(k, str) or not NAME.fullmatch(k):
            out.append(((k,), f"parameter name {str(k)[:80]!r} is not a Python identifier (letters, digits and _; "
                              "papermill writes it into the runbook as code)"))
        elif keyword.iskeyword(k):
            out.append(((k,), f"parameter name {k!r} is a Python keyword"))
        elif not _plain(v):
            out.append(((k,), f"parameter {k} must be a string, number, boolean, null or a list of those, "
                              f"not {type(v).__name__}"))
    return out


def checked(params) -> dict:
    """params as a dict for papermill; raises ParameterError naming the first problem."""
    bad = problems(params)
    if bad:
        raise ParameterError(f"verification.parameters: {bad[0][1]}")
    return dict(params or {})
