"""What the paste page's engine (assets/engine.js) needs, as one JSON-able object: the first stage's patterns
and ranking data, the second stage's index and thresholds, the environment-evidence patterns and each entry's
trigger profile. The site plugin writes it; tests/test_engines.py feeds it to Node.js."""
from __future__ import annotations

from pathlib import Path

from errbook.machine import checks, facts
from errbook.triage import corpus, environment, pipeline, retrieval


def build(root: Path, active, index: retrieval.Index | None = None, cal: dict | None = None) -> dict:
    m = pipeline.build_matcher(active)
    out = m.bundle()
    idx = index if index is not None else corpus.shipped_index(root, active)
    out["retrieval"] = {
        "index": idx.export(),
        "calibration": cal or corpus.calibration(),
        "tokenizer": {"dirs": retrieval._DIRS.pattern, "hex": retrieval._HEX.pattern, "word": retrieval._WORD.pattern,
                      "parts": retrieval._PARTS.pattern, "cjk": retrieval._CJK.pattern},
        "stop": sorted(retrieval._STOP),
        "sample_name": retrieval.SAMPLE_NAME,
        "first_line_cap": retrieval.FIRST_LINE_CAP,
        "related": retrieval.related_map(active),
        "trouble": {"failure": retrieval.FAILURE_PATTERN, "person": retrieval.PERSON_PATTERN,
                    "logger_info": retrieval.LOGGER_INFO, "normal": retrieval.NORMAL_PATTERN,
                    "negated": retrieval.NEGATED_PATTERN, "addressed": retrieval.ADDRESSED_PATTERN,
                    "logger_any": retrieval.LOGGER_ANY,
                    "plain_word": retrieval.PLAIN_WORD, "punct": retrieval.PROSE_PUNCT,
                    "min_words": retrieval.PROSE_MIN_WORDS, "share": retrieval.PROSE_SHARE},
    }
    out["logfacts"] = {"gfx": environment._GFX.pattern, "rocm": environment._ROCM.pattern,
                       "torch": environment._TORCH.pattern,
                       "env": environment._ENV.pattern, "plus": environment.PLUS, "minus": environment.MINUS,
                       "low": environment.LOW, "high": environment.HIGH}
    out["profiles"] = {e.id: environment.profile(e) for e in active if not e.withdrawn}
    # Machine checks, so a facts file (errbook doctor --collect) can re-rank in the page as in the CLI.
    out["checks"] = {e.id: (e.get("triggers") or {}).get("checks") for e in active
                     if not e.withdrawn and (e.get("triggers") or {}).get("checks")}
    out["check_bonus"] = checks.BONUS
    # The facts file format and its limits, so the page accepts exactly the files `errbook doctor --facts` does.
    out["facts_format"] = facts.reader_spec()
    return out
