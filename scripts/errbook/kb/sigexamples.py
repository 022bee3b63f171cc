"""A pattern's examples must match it and its counter-examples must not: the one rule for entries' signatures and
message pages' signatures and evidence. Pure: the caller passes its own matcher (kb sits below triage)."""
from __future__ import annotations

from collections.abc import Callable

from errbook.kb.usable import Finding, as_list, field_name


def example_findings(rel: str, line_of: Callable[[tuple], int], base: tuple, label: str, item: dict,
                     match: Callable[[str], object],
                     matched: Callable[[tuple, str], list[Finding]] | None = None) -> list[Finding]:
    """Findings for item's `examples` that `match` misses and its `counter_examples` that it hits (match's result
    taken as true or false), each at file:line:field. label names the pattern ("signature 'x'"); matched(path, text)
    is given every example that did match and returns its own findings (entries try it as other machines print it)."""
    out = []
    for key, must in (("examples", True), ("counter_examples", False)):
        for j, ex in enumerate(as_list(item.get(key))):
            if not isinstance(ex, dict) or not isinstance(ex.get("text"), str):
                continue                                # the schema finding names it
            fpath = base + (key, j, "text")
            if bool(match(ex["text"])) != must:
                what = "does not match this example" if must else "matches this counter-example"
                out.append(Finding(rel, line_of(fpath), field_name(fpath), f"{label} {what}"))
            elif must and matched is not None:
                out += matched(fpath, ex["text"])
    return out
