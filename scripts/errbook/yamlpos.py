"""YAML loading that remembers where every value came from, so errors can name file:line and the field path."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """Safe loader that keeps timestamps as strings (the schema validates their form)."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in _Base.yaml_implicit_resolvers.items()
}


class YamlError(Exception):
    def __init__(self, message: str, line: int, column: int = 0):
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


Path = tuple  # a field path: ("signatures", 0, "pattern")


@dataclass
class Located:
    data: Any
    lines: dict = field(default_factory=dict)  # Path -> 1-based line of the value (or key, for mappings)

    def line_of(self, path: Path) -> int:
        """Line of the deepest known prefix of path (a missing field points at its parent)."""
        p = tuple(path)
        while p not in self.lines and p:
            p = p[:-1]
        return self.lines.get(p, 1)


def _walk(node: yaml.Node, path: tuple, lines: dict) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict = {}
        for k, v in node.value:
            key = k.value
            if key in seen:
                raise YamlError(f"duplicate key '{key}' (first at line {seen[key]})", k.start_mark.line + 1,
                                k.start_mark.column + 1)
            seen[key] = k.start_mark.line + 1
            lines[path + (key,)] = k.start_mark.line + 1
            _walk(v, path + (key,), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _walk(v, path + (i,), lines)


def load(text: str) -> Located:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Located(None, {(): 1})
        lines: dict = {}
        _walk(node, (), lines)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        col = mark.column + 1 if mark else 0
        raise YamlError(f"YAML syntax: {e.problem or e}", line, col) from None
    except yaml.YAMLError as e:
        raise YamlError(f"YAML: {e}", 1) from None
    finally:
        loader.dispose()
    return Located(data, lines)
