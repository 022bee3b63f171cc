"""The contract between a probe and the collector: where a probe puts facts, how it says it does not apply, and
the declaration of what it produces."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


class ProbeSkipped(Exception):
    """A probe that does not apply here (its tool is not installed): recorded as skipped, not failed."""


class Sink:
    """Where a probe puts facts (collect.Collector, or a view of it that checks the probe's declaration)."""

    def put(self, name: str, value, source: str) -> None:
        raise NotImplementedError

    def has(self, name: str) -> bool:
        raise NotImplementedError

    def get(self, name: str, default=None):
        raise NotImplementedError


@dataclass(frozen=True)
class Options:
    timeout: float              # seconds for the slowest probe
    python: str                 # the Python whose PyTorch and Triton are probed
    do_import: bool             # import torch in it (device facts)


@dataclass(frozen=True)
class Probe:
    name: str
    run: Callable[[Sink, Options], None]
    produces: frozenset[str]


def declare(name: str, run: Callable[[Sink, Options], None], *produces: str) -> Probe:
    return Probe(name, run, frozenset(produces))
