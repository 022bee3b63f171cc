"""The corpus the shipped tool reads, and the second stage's shipped index built from it (cached by content).

The corpus lives in errata/corpus/ (product data, not test data: adding a log there changes what triage and the
site answer): real/ and unseen/ hold labelled logs ({name}.log with {name}.yaml: expect, thread, source, ...),
each one more example of the entry it is labelled with; benign/ holds normal output, indexed as "not a problem"
and matched by `errbook validate` against every signature. `errbook eval` scores triage on the same logs
(triage/evaluate.py). The calibrated thresholds are package data (data/calibration.json).
"""
from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from pathlib import Path

from errbook.common import paths, regfile
from errbook.kb import yamlpos
from errbook.triage import retrieval

CALIBRATION_PATH = Path(__file__).resolve().parent / "data" / "calibration.json"


def calibration() -> dict:
    return json.loads(CALIBRATION_PATH.read_text(encoding="utf-8"))


def benign_dir(root: Path) -> Path:
    return paths.corpus_dir(root) / "benign"


def split_of(key: str, declared: str | None = None) -> str:
    """dev or test by a hash of the key (a labelled log's thread, a benign log's name), unless the log's metadata
    declares `split: dev`: a log someone studied (a collection round scored once and then examined, a test-half
    benign log a failing test printed) can never again be a test log."""
    if declared == "dev":
        return "dev"
    return "dev" if int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 2 == 0 else "test"


def benign_logs(root: Path, split: str | None = None) -> list[Path]:
    """The benign logs, or one half of them: `errbook validate` checks signatures against the dev (tuning) half
    only, so the test half stays a measure of false positives (`errbook eval`)."""
    out = []
    for p in sorted(benign_dir(root).glob("*.log")):
        if split is not None:
            try:
                meta = yamlpos.load(p.with_suffix(".yaml").read_text(encoding="utf-8"), "a label").data
            except (OSError, UnicodeDecodeError, yamlpos.YamlError):
                meta = None
            declared = meta.get("split") if isinstance(meta, dict) else None
            if split_of(f"benign/{p.name}", declared) != split:
                continue
        out.append(p)
    return out


def benign_docs(root: Path, names: set[str] | None = None) -> dict[str, Counter]:
    out = {}
    for p in sorted(benign_dir(root).glob("*.log")):
        if names is None or p.name in names:
            out[p.name] = retrieval.benign_doc(p.read_text(encoding="utf-8", errors="replace"))
    return out


def labelled_dir(root: Path) -> Path:
    return paths.corpus_dir(root)


LABELLED_FOLDERS = ("real", "unseen")


def labelled_logs(root: Path, folders=LABELLED_FOLDERS) -> list[dict]:
    """Labelled logs with their entry and thread: {path, expect, thread, folder, split (declared, or None)}."""
    out = []
    for folder in folders:
        for p in sorted((labelled_dir(root) / folder).glob("*.log")):
            try:                  # a broken label costs that log its place in the index, never a triage
                meta = yamlpos.load(p.with_suffix(".yaml").read_text(encoding="utf-8"), "a label").data
            except (OSError, UnicodeDecodeError, yamlpos.YamlError):
                meta = None
            meta = meta if isinstance(meta, dict) else {}
            out.append({"path": p, "folder": folder, "expect": str(meta.get("expect", "none")),
                        "thread": retrieval.thread_of(meta.get("thread") or meta.get("source", "")),
                        "split": meta.get("split")})
    return out


def add_labelled(entry_docs_: dict, logs: list[dict]) -> dict:
    """entry_docs with each labelled log added as an example of the entry it is labelled with (logs labelled
    `none` or with a withdrawn entry add nothing)."""
    out = {k: {"base": v["base"], "examples": list(v["examples"])} for k, v in entry_docs_.items()}
    for c in logs:
        if c["expect"] in out:
            text = c["path"].read_text(encoding="utf-8", errors="replace")
            out[c["expect"]]["examples"].append((c["thread"], retrieval.labelled_doc(text)))
    return out


def _fingerprint(root: Path, entries) -> str:
    h = hashlib.sha1()
    for e in entries:
        h.update(e.rel.encode())
        h.update(str(e.path.stat().st_mtime_ns).encode())
    labelled = [labelled_dir(root) / f for f in LABELLED_FOLDERS]
    for p in sorted(benign_dir(root).glob("*.log")) + [p for d in labelled for p in sorted(d.glob("*.log"))]:
        h.update(p.name.encode())
        h.update(str(p.stat().st_size).encode())
    for p in (p for d in labelled for p in sorted(d.glob("*.yaml"))):   # a relabelled log moves to another entry
        h.update(p.read_bytes())
    for code in (retrieval.__file__, __file__):          # the code that builds the index
        h.update(Path(code).read_bytes())
    return h.hexdigest()[:16]


MAX_CACHE_BYTES = 256 << 20


def shipped_index(root: Path, entries) -> retrieval.Index:
    """The index the CLI and the site use: entries with their examples and every labelled log, and every benign
    log (cached under .cache/, rebuilt when entries or logs change). The cache is read only as a regular file and
    only when its shape is an index's (any other file there is rebuilt over, atomically)."""
    fp = _fingerprint(root, entries)
    cache = paths.cache_dir(root) / f"retrieval-{fp}.json"
    try:
        data = json.loads(regfile.read_regular(cache, MAX_CACHE_BYTES, follow=False))
        if not isinstance(data, dict) or data.get("fingerprint") != fp:    # another checkout state's index
            raise ValueError("fingerprint")
        return _from_export(data)
    except (OSError, ValueError, RecursionError):      # absent, not a file, not JSON, not an index
        pass
    idx = retrieval.build(add_labelled(retrieval.entry_docs(entries), labelled_logs(root)), benign_docs(root))
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        for old in cache.parent.glob("retrieval-*.json"):
            if old != cache:
                old.unlink()
        regfile.write_atomic(cache, json.dumps(dict(idx.export(), fingerprint=fp)).encode("utf-8"), mode=0o644)
    except OSError:
        pass                 # a read-only checkout still triages, only slower
    return idx


def _from_export(data) -> retrieval.Index:
    """An Index from its export; ValueError unless every part has the type and range an index gives it (a
    wrong-typed cache must be rebuilt, not crash the second stage or change its scores)."""
    def number(x) -> bool:
        return type(x) in (int, float) and math.isfinite(x)
    if not isinstance(data, dict):
        raise ValueError("not an object")
    ids, idf, norm, post = data.get("ids"), data.get("idf"), data.get("norm"), data.get("post")
    if not (isinstance(ids, list) and all(isinstance(i, str) for i in ids) and ids == sorted(set(ids))):
        raise ValueError("ids")
    if not (isinstance(norm, list) and len(norm) == len(ids) and all(number(x) and x > 0 for x in norm)):
        raise ValueError("norm")
    if not (isinstance(idf, dict) and all(number(x) for x in idf.values())):
        raise ValueError("idf")
    if not (isinstance(post, dict) and post.keys() <= idf.keys()):
        raise ValueError("post")
    n = len(ids)
    out: dict[str, list[tuple[int, int]]] = {}
    for t, plist in post.items():
        if not isinstance(plist, list):
            raise ValueError("post")
        pairs = []
        for x in plist:
            if not (isinstance(x, list) and len(x) == 2 and type(x[0]) is int and type(x[1]) is int
                    and 0 <= x[0] < n and x[1] > 0):
                raise ValueError("post")
            pairs.append((x[0], x[1]))
        out[t] = pairs
    idx = retrieval.Index.__new__(retrieval.Index)
    idx.ids, idx.idf, idx.norm, idx.post = ids, idf, norm, out
    return idx
