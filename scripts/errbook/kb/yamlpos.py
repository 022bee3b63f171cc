"""YAML loading that remembers where every value came from, so errors can name file:line and the field path.

Entries are plain data, so the loader refuses what plain data never needs and an attacker could use:
anchors and aliases (a "billion laughs" expands without bound, a self-referencing alias recurses forever),
nesting deeper than MAX_DEPTH and integer literals longer than MAX_INT_CHARS. All three are found on the
event or node stream, before anything is constructed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from errbook.errors import ErrbookError

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """Safe loader that keeps timestamps as strings (the schema validates their form)."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in _Base.yaml_implicit_resolvers.items()
}


MAX_DEPTH = 32          # an entry nests 5 levels at most
MAX_INT_CHARS = 64      # far beyond any priority or count; a 5000-digit integer cannot even be printed

_INT_TAG = "tag:yaml.org,2002:int"
# Where an anchor (&a) or alias (*a) token can start: line start, after indentation, '- ', '? ', ': ',
# or a flow indicator. Texts without such a spot skip the event scan (most entries).
_ANCHOR_HINT = re.compile(r"(?:^|[\s\[{,:?\-\ufeff])[&*][^\s\[\]{},]", re.M)


class YamlError(ErrbookError):
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


def _refuse_anchors(text: str, what: str) -> None:
    """Scan the event stream (nothing is composed or constructed) for anchors and aliases."""
    if not _ANCHOR_HINT.search(text):
        return
    loader = _Loader(text)
    try:
        while loader.check_event():
            ev = loader.get_event()
            mark = ev.start_mark
            if isinstance(ev, yaml.AliasEvent):
                raise YamlError(f"YAML alias '*{(ev.anchor or '')[:40]}' is not allowed in {what} "
                                "(write the value out)", mark.line + 1, mark.column + 1)
            if getattr(ev, "anchor", None):
                raise YamlError(f"YAML anchor '&{ev.anchor[:40]}' is not allowed in {what} (write the value out)",
                                mark.line + 1, mark.column + 1)
    finally:
        loader.dispose()


def _walk(node: yaml.Node, path: tuple, lines: dict, visited: set) -> None:
    line = node.start_mark.line + 1
    if id(node) in visited:   # a shared node is an alias the event scan did not see: never expand it
        raise YamlError("YAML alias is not allowed", line, node.start_mark.column + 1)
    visited.add(id(node))
    if len(path) > MAX_DEPTH:
        raise YamlError(f"nested deeper than {MAX_DEPTH} levels", line, node.start_mark.column + 1)
    lines.setdefault(path, line)
    if isinstance(node, yaml.MappingNode):
        seen: dict = {}
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                raise YamlError("a mapping key must be a plain name, not a list or mapping", k.start_mark.line + 1,
                                k.start_mark.column + 1)
            key = k.value
            if key in seen:
                raise YamlError(f"duplicate key '{key}' (first at line {seen[key]})", k.start_mark.line + 1,
                                k.start_mark.column + 1)
            seen[key] = k.start_mark.line + 1
            lines[path + (key,)] = k.start_mark.line + 1
            _walk(v, path + (key,), lines, visited)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _walk(v, path + (i,), lines, visited)
    elif node.tag == _INT_TAG and len(node.value) > MAX_INT_CHARS:
        raise YamlError(f"integer literal of {len(node.value)} characters (at most {MAX_INT_CHARS})", line,
                        node.start_mark.column + 1)


def _bad_scalar_line(root: yaml.Node) -> int:
    """Line of the first scalar that cannot be constructed (only called after construction failed)."""
    stack = [root]
    while stack:
        n = stack.pop()
        if isinstance(n, yaml.ScalarNode):
            fresh = _Loader("")
            try:
                fresh.construct_object(n, deep=True)
            except Exception:
                return n.start_mark.line + 1
            finally:
                fresh.dispose()
        elif isinstance(n, yaml.MappingNode):
            stack += [v for _, v in reversed(n.value)]
        else:
            stack += list(reversed(n.value))
    return 1


def load(text: str, what: str = "an entry") -> Located:
    """Every YAML file errbook reads goes through here (entries, the fleet file, releases, labels); `what`
    names the kind of file in messages."""
    loader = _Loader(text)
    try:
        _refuse_anchors(text, what)
        node = loader.get_single_node()
        if node is None:
            return Located(None, {(): 1})
        lines: dict = {}
        _walk(node, (), lines, set())
        try:
            data = loader.construct_document(node)
        except (ValueError, TypeError, OverflowError) as e:   # e.g. `!!int abc`: name the value's line
            raise YamlError(f"YAML value cannot be read: {str(e)[:200]}", _bad_scalar_line(node)) from None
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
