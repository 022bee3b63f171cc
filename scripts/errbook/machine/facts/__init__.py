"""Machine facts for `errbook doctor` (and for `errbook triage --facts`): what a machine is, as named, typed facts.

    vocab.py       the vocabulary: every fact a check may use, its type and meaning
    probes.py      probes that read this machine, each declaring the facts it produces (pythonprobe.py: PyTorch,
                   Triton; readers.py: small readers shared with tiers.py; probe.py: the probe contract)
    collect.py     runs the probes (read-only, quick, never root, never all-or-nothing) into a facts document
    derive.py      derived facts, pure: a saved file of another machine is evaluated without looking at this one
    fileformat.py  the facts file: format, limits, the one reader (parse/load), and JS_SPEC: what the paste
                   page's reader of facts files needs (web/bundle.py ships it)

This package's names below are the public interface; callers import `errbook.machine.facts` only.
"""
from errbook.machine.facts.collect import DEFAULT_TIMEOUT, collect
from errbook.machine.facts.derive import DERIVED, derive
from errbook.machine.facts.fileformat import (
    FORMAT,
    FORMAT_VERSION,
    JS_SPEC,
    MAX_DIGITS,
    MAX_FILE_BYTES,
    MAX_INT,
    MAX_LIST,
    MAX_SECONDS,
    MAX_STR,
    FactsError,
    check_value,
    fit,
    load,
    parse,
    values_of,
)
from errbook.machine.facts.gfx import gfx_from_target_version, gfx_name, override_target
from errbook.machine.facts.vocab import ENV_VARS, PACKAGES, VOCAB, FactDef

__all__ = ["DEFAULT_TIMEOUT", "DERIVED", "ENV_VARS", "FORMAT", "FORMAT_VERSION", "JS_SPEC", "MAX_DIGITS",
           "MAX_FILE_BYTES", "MAX_INT", "MAX_LIST", "MAX_SECONDS", "MAX_STR", "PACKAGES", "VOCAB", "FactDef",
           "FactsError", "check_value", "collect", "derive", "fit", "gfx_from_target_version", "gfx_name", "load",
           "override_target", "parse", "values_of"]
