"""Triage: a log in, entries ranked out (`errbook triage`, the paste page's engine in web/assets/engine.js).

pipeline.py runs a log through both stages: textenc (encodings) -> linescan (streaming, memtrim) or parallel
(a big file, one process per core) -> normalize (clean lines) -> prefilter (Hyperscan / RE2 candidates) ->
matcher (signatures, stage 1) -> environment (gfx, ROCm, PyTorch, env vars in the log) -> ranking, with
retrieval (BM25, stage 2: likely entries when no signature matched) over the corpus (corpus.py). evaluate.py
measures it (`errbook eval`).
"""
