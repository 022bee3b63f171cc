"""Entry facets: the guided finder's vocabulary (errata/facets.yaml) and each entry's `facets:` field.

One reader for `errbook validate` (values from the vocabulary; component and happened on every active entry), the
finder (triage/finder.py) and anything that shows the questions. The vocabulary is data of the knowledge base, not
code, so a team's fork can file its own entries its own way. Facets say how an entry is found, not what a runbook
verifies: they are not part of the verification digest (kb/verified.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from errbook.common import paths
from errbook.errors import ErrbookError
from errbook.kb import yamlpos

FACETS = ("component", "happened", "gpu")      # every facet, in the order a tie between questions is broken
REQUIRED = ("component", "happened")           # what every active entry must name
MAX_BYTES = 256 * 1024


class VocabularyError(ErrbookError, ValueError):
    """errata/facets.yaml cannot be used: its path, line and what is wrong."""


@dataclass(frozen=True)
class Value:
    id: str
    label: str
    label_zh: str
    log: tuple[re.Pattern, ...] = ()      # lines of a log that answer the question with this value
    gfx: re.Pattern | None = None          # gfx targets (from a facts file) that belong to this value


@dataclass(frozen=True)
class Facet:
    name: str
    question: str
    question_zh: str
    values: tuple[Value, ...]
    wildcard: str | None = None            # an entry with this value fits every answer; never offered as a choice

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(v.id for v in self.values)

    def value(self, vid: str) -> Value | None:
        return next((v for v in self.values if v.id == vid), None)


@dataclass(frozen=True)
class Vocabulary:
    facets: dict[str, Facet]

    def default(self, name: str) -> tuple[str, ...]:
        """What an entry that does not name this facet is filed under: the wildcard (gpu: any), else nothing."""
        w = self.facets[name].wildcard
        return (w,) if w else ()

    def family_of_gfx(self, gfx: str) -> str | None:
        """The gpu value a gfx target belongs to (the first whose pattern matches), or None."""
        for v in self.facets["gpu"].values:
            if v.gfx is not None and v.gfx.search(gfx):
                return v.id
        return None


def vocabulary_path(root: Path) -> Path:
    return paths.errata_dir(root) / "facets.yaml"


def load(root: Path) -> Vocabulary | None:
    """The root's vocabulary, or None when it has none (a knowledge base without a finder)."""
    p = vocabulary_path(root)
    if not p.is_file():
        return None
    if p.stat().st_size > MAX_BYTES:
        raise VocabularyError(f"{p}: larger than {MAX_BYTES} bytes")
    text = p.read_text(encoding="utf-8")
    try:
        doc = yamlpos.load(text, "the facets vocabulary")
    except yamlpos.YamlError as e:
        raise VocabularyError(f"{p}:{e.line}: {e.message}") from None
    return parse(doc, str(p))


def _compile(pattern: object, where: str) -> re.Pattern:
    if not isinstance(pattern, str):
        raise VocabularyError(f"{where}: a pattern is a string")
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as e:
        raise VocabularyError(f"{where}: bad pattern: {e}") from None


def _value(raw: object, where: str) -> Value:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not isinstance(raw.get("label"), str):
        raise VocabularyError(f"{where}: a value is a mapping with id and label")
    logs = raw.get("log") or []
    if not isinstance(logs, list):
        raise VocabularyError(f"{where}.log: a list of patterns")
    gfx = raw.get("gfx")
    return Value(raw["id"], raw["label"], str(raw.get("label_zh") or raw["label"]),
                 tuple(_compile(x, f"{where}.log") for x in logs),
                 _compile(gfx, f"{where}.gfx") if gfx is not None else None)


def parse(doc: yamlpos.Located, where: str) -> Vocabulary:
    data = doc.data
    if not isinstance(data, dict):
        raise VocabularyError(f"{where}:1: a mapping of facets ({', '.join(FACETS)})")
    out: dict[str, Facet] = {}
    for name in FACETS:
        raw = data.get(name)
        at = f"{where}:{doc.line_of((name,))}: {name}"
        if not isinstance(raw, dict) or not isinstance(raw.get("values"), list) or not raw["values"]:
            raise VocabularyError(f"{at}: a mapping with question and a list of values")
        values = tuple(_value(v, f"{where}:{doc.line_of((name, 'values', i))}: {name}.values[{i}]")
                       for i, v in enumerate(raw["values"]))
        ids = [v.id for v in values]
        if len(set(ids)) != len(ids) or "unknown" in ids:
            raise VocabularyError(f"{at}: value ids must be unique and not 'unknown' (the don't-know answer)")
        wildcard = raw.get("wildcard")
        if wildcard is not None and wildcard not in ids:
            raise VocabularyError(f"{at}.wildcard: '{wildcard}' is not one of its values")
        out[name] = Facet(name, str(raw.get("question") or name), str(raw.get("question_zh") or raw.get("question")
                                                                      or name), values, wildcard)
    extra = sorted(set(data) - set(FACETS))
    if extra:
        raise VocabularyError(f"{where}:{doc.line_of((extra[0],))}: unknown facet '{extra[0]}'")
    return Vocabulary(out)


def of_entry(data: dict, vocab: Vocabulary) -> dict[str, tuple[str, ...]]:
    """The entry's facets, every facet present (a missing one: the vocabulary's default, e.g. gpu: any)."""
    raw = data.get("facets")
    raw = raw if isinstance(raw, dict) else {}
    out = {}
    for name in FACETS:
        vals = raw.get(name)
        out[name] = tuple(str(v) for v in vals) if isinstance(vals, list) and vals else vocab.default(name)
    return out


def entry_findings(data: dict, vocab: Vocabulary) -> list[tuple[tuple, str]]:
    """(field path, message) for each facet problem of an active entry: a value the vocabulary lacks, a required
    facet missing. The schema checks the shape; this checks the words."""
    raw = data.get("facets")
    if not isinstance(raw, dict):
        return [(("facets",), f"every entry names its facets ({', '.join(REQUIRED)}; gpu defaults to "
                              f"{vocab.default('gpu')[0] if vocab.default('gpu') else 'none'}) for errbook find: "
                              "see errata/facets.yaml")]
    out: list[tuple[tuple, str]] = []
    for name in REQUIRED:
        if not raw.get(name):
            out.append((("facets", name), f"facets.{name} is required (one or more of: "
                                          f"{', '.join(vocab.facets[name].ids)})"))
    for name in FACETS:
        vals = raw.get(name)
        if not isinstance(vals, list):
            continue
        for i, v in enumerate(vals):
            if v not in vocab.facets[name].ids:
                out.append((("facets", name, i), f"'{v}' is not a {name} of errata/facets.yaml (one of: "
                                                 f"{', '.join(vocab.facets[name].ids)})"))
    return out
