"""What the paste page's engine (assets/engine.js) needs, as one JSON-able object: the first stage's patterns
and ranking data, the second stage's index and thresholds, the environment-evidence patterns and each entry's
trigger profile. The site plugin writes it; tests/test_engines.py feeds it to Node.js.

The contract with engine.js is explicit: every part of the bundle is either data built from the entries and the
corpus (DATA_KEYS) or the JS_SPEC of a module engine.js ports (SPECS: the patterns, constants and weights that
module's logic runs with). Nothing here reads a module's private names; tests/test_twins.py holds the bundle to
this and checks engine.js reads no key that neither provides."""
from __future__ import annotations

import copy
from pathlib import Path

from errbook.kb import facets as facets_mod
from errbook.machine import checks, facts
from errbook.triage import corpus, environment, finder, multicause, normalize, pageonly, pipeline, retrieval
from errbook.triage import messages as message_rules

# Where each ported module's JS_SPEC goes: a key path in the bundle (() merges it into the top level).
SPECS = (
    (("normalize",), normalize),       # line cleaning
    (("retrieval",), retrieval),       # the second stage's tokenizer and gate
    (("logfacts",), environment),      # environment evidence and its score points
    ((), checks),                      # the machine checks' bonus
    (("facts_format",), facts),        # the facts file's format and limits
    (("message_rules",), message_rules),   # one message, several causes: lines kept per evidence
    (("multicause",), multicause),     # ... and the level of an answer that only such a message names
    (("pageonly",), pageonly),         # ... and the causes of a message no entry's signature names
    (("finder",), finder),             # the guided finder's limits (assets/finder.js)
)
# Places whose JS_SPEC a page script other than engine.js ports (tests/test_twins_finder.py traces what it reads).
PORTED_ELSEWHERE = {("finder",): "finder.js"}
# Parts built from the knowledge base and the corpus, by place.
DATA_KEYS = {
    (): ("signatures", "patterns", "roles", "cosmetic", "vetoes", "note_caps",   # Matcher.bundle()
         "profiles", "checks", "messages"),
    ("retrieval",): ("index", "calibration", "related"),
    ("finder",): ("vocabulary", "entries"),      # finder.bundle_data: the questions and the entries' facets
}


def build(root: Path, active, index: retrieval.Index | None = None, cal: dict | None = None) -> dict:
    pages = pipeline.message_pages(root, active)
    m = pipeline.build_matcher(active, pages=pages)     # with the pages' evidence notes (triage/multicause.py)
    idx = index if index is not None else corpus.shipped_index(root, active)
    out = {
        "normalize": {},
        **m.bundle(),
        "retrieval": {"index": idx.export(), "calibration": cal or corpus.calibration(),
                      "related": retrieval.related_map(active)},
        "logfacts": {},
        "profiles": {e.id: environment.profile(e) for e in active if not e.withdrawn},
        # Machine checks, so a facts file (errbook doctor --collect) can re-rank in the page as in the CLI.
        "checks": {e.id: (e.get("triggers") or {}).get("checks") for e in active
                   if not e.withdrawn and (e.get("triggers") or {}).get("checks")},
        # The facts file format and its limits, so the page accepts exactly the files `errbook doctor --facts` does.
        "facts_format": {},
        # Message pages whose causes are all among these entries (errata/messages/, triage/messages.py).
        "messages": pages,
        "message_rules": {},
        "multicause": {},
        "pageonly": {},
        # The guided finder's questions and the entries' facets (errata/facets.yaml; none without it).
        "finder": _finder_data(root, active),
    }
    for place, mod in SPECS:
        part = out
        for k in place:
            part = part[k]
        part.update(copy.deepcopy(mod.JS_SPEC))     # a copy: a caller may change its bundle, never the module
    return out


def _finder_data(root: Path, active) -> dict:
    vocab = facets_mod.load(root)
    if vocab is None:
        return {"vocabulary": {}, "entries": []}
    return finder.bundle_data(finder.from_entries(active, vocab), vocab)
