"""The facts file: its format, its limits, and the one reader of it (`errbook doctor --facts`, `errbook triage
--facts`; the paste page's engine reads the same format through JS_SPEC).

A facts document is {"format": FORMAT, "version": FORMAT_VERSION, "facts": {name: {"value", "source"}}, ...}.
Every fact has a dotted name from the vocabulary, a value of the declared type (None: known to be absent) and
the source it came from. parse() refuses a file beyond the limits; collect() never writes one (fit()).
"""
from __future__ import annotations

import json
import re
import sys

from errbook.errors import ErrbookError
from errbook.kb import versions
from errbook.machine.facts.derive import derive
from errbook.machine.facts.vocab import VOCAB

FORMAT, FORMAT_VERSION = "errbook-facts", 1
# The limits of a facts file. parse() refuses a file beyond them, collect() never writes one (it cuts a list or a
# string to fit and says so in the fact's source), and the paste page's engine applies the same ones: bundle.py
# ships JS_SPEC and engine.js's readFacts reads it.
MAX_FILE_BYTES = 4 << 20         # a facts file larger than this is refused
MAX_STR, MAX_LIST = 8192, 512    # longest string / list a facts file may hold
MAX_INT = 2 ** 53                # an int fact is below this in magnitude (exact in JavaScript too)
MAX_SECONDS = 10 ** 6            # "seconds" (how long the collection took) is a number from 0 to this
MAX_DIGITS = versions.MAX_DIGITS  # a version fact whose leading number has a longer part is refused
_LEADING_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)*")


class FactsError(ErrbookError, ValueError):
    """A facts file that cannot be used (not JSON, wrong shape, a value of the wrong type)."""


def fit(facts: dict) -> list[str]:
    """Make collected facts what parse() accepts, in place: a list longer than MAX_LIST keeps its first
    MAX_LIST items and a string its first MAX_STR characters (the source says so); a value still refused is
    dropped (the fact is then missing: "could not check"), and so are the largest facts while the whole would
    exceed MAX_FILE_BYTES. Returns what was changed, one line each."""
    changed = []
    for name in list(facts):
        rec = facts[name]
        v = rec["value"]
        if isinstance(v, list) and len(v) > MAX_LIST:
            rec["source"] += f" (first {MAX_LIST} of {len(v)} items: a facts file holds no more)"
            changed.append(f"{name}: first {MAX_LIST} of {len(v)} items")
            v = v[:MAX_LIST]
        if isinstance(v, list) and any(isinstance(x, str) and len(x) > MAX_STR for x in v):
            v = [x[:MAX_STR] if isinstance(x, str) else x for x in v]
            rec["source"] += f" (items cut to {MAX_STR} characters)"
            changed.append(f"{name}: items cut to {MAX_STR} characters")
        if isinstance(v, str) and len(v) > MAX_STR:
            v = v[:MAX_STR]
            rec["source"] += f" (first {MAX_STR} characters)"
            changed.append(f"{name}: first {MAX_STR} characters")
        rec["value"] = v
        why = check_value(name, VOCAB[name].type, v) if name in VOCAB else None
        if why:
            del facts[name]
            changed.append(f"{name}: dropped, its value {why}")
    # Sizes as `errbook doctor --collect` prints them (indent=1), with room for the header and the probes.
    size = lambda x: len(json.dumps(x, indent=1, ensure_ascii=False).encode())  # noqa: E731
    while facts and size(facts) > MAX_FILE_BYTES - (64 << 10):
        name = max(facts, key=lambda n: size(facts[n]))
        del facts[name]
        changed.append(f"{name}: dropped, the facts file would exceed {MAX_FILE_BYTES >> 20} MiB")
    return changed


# What a reader of facts files needs to accept exactly what parse() accepts: the format, the limits and each
# fact's type. assets/engine.js's readFacts reads it (web/bundle.py ships it as the bundle's `facts_format`).
JS_SPEC = {"format": FORMAT, "version": FORMAT_VERSION, "max_file_bytes": MAX_FILE_BYTES, "max_str": MAX_STR,
           "max_list": MAX_LIST, "max_int": MAX_INT, "max_seconds": MAX_SECONDS, "max_digits": MAX_DIGITS,
           "types": {n: d.type for n, d in sorted(VOCAB.items())}}


def check_value(name: str, typ: str, v) -> str | None:
    if v is None:
        return None
    if typ == "bool":
        return None if isinstance(v, bool) else "must be true, false or null"
    if typ == "int":
        ok = isinstance(v, int) and not isinstance(v, bool) and abs(v) < MAX_INT
        return None if ok else "must be an integer or null"
    if typ in ("str", "version"):
        if not isinstance(v, str):
            return "must be a string or null"
        if len(v) > MAX_STR:
            return f"is longer than {MAX_STR} characters"
        m = _LEADING_NUMBER.match(v.strip().lstrip("v")) if typ == "version" else None
        if m and any(len(x) > MAX_DIGITS for x in m.group(0).split(".")):
            return f"is not a version: a number in it has more than {MAX_DIGITS} digits"
        return None
    if typ == "list":
        if not isinstance(v, list):
            return "must be a list of strings or null"
        if len(v) > MAX_LIST:
            return f"has more than {MAX_LIST} items"
        if not all(isinstance(x, str) and len(x) <= MAX_STR for x in v):
            return "must hold only strings"
        return None
    return "has an unknown type"


def parse(text: str | bytes, where: str = "facts file") -> dict:
    """Validate a facts document; returns it with derived facts filled in and unknown facts dropped
    (listed in doc['ignored']). Raises FactsError with a message that names the problem."""
    doc = _document(_decoded(text, where), where)
    clean, ignored = _clean_facts(doc["facts"], where)
    values = {k: v["value"] for k, v in clean.items()}
    sources = {k: v["source"] for k, v in clean.items()}
    derive(values, sources)
    out = {"format": FORMAT, "version": FORMAT_VERSION,
           "facts": {k: {"value": values[k], "source": sources[k]} for k in sorted(values)},
           "ignored": ignored}
    _copy_header(doc, out, where)
    return out


def _decoded(text: str | bytes, where: str) -> str:
    if isinstance(text, bytes):
        if len(text) > MAX_FILE_BYTES:
            raise FactsError(f"{where}: larger than {MAX_FILE_BYTES // (1 << 20)} MiB; not a facts file")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FactsError(f"{where}: not UTF-8 (byte {e.start})") from None
    if len(text) > MAX_FILE_BYTES:
        raise FactsError(f"{where}: larger than {MAX_FILE_BYTES // (1 << 20)} MiB; not a facts file")
    return text


def _document(text: str, where: str) -> dict:
    """The JSON object of a facts file of this format and version, with a "facts" object."""
    try:
        doc = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"{c} is not JSON")))
    except (json.JSONDecodeError, ValueError) as e:
        raise FactsError(f"{where}: not valid JSON ({e})") from None
    except RecursionError:
        raise FactsError(f"{where}: nested too deeply to be a facts file") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise FactsError(f"{where}: not an errbook facts file (expected an object with \"format\": \"{FORMAT}\"; "
                         "make one with `errbook doctor --collect > facts.json`)")
    if isinstance(doc.get("version"), bool) or doc.get("version") != FORMAT_VERSION:   # true == 1 in Python
        raise FactsError(f"{where}: facts format version {doc.get('version')!r} is not supported (this errbook reads "
                         f"{FORMAT_VERSION})")
    if not isinstance(doc.get("facts"), dict):
        raise FactsError(f"{where}: \"facts\" must be an object of fact name -> {{\"value\", \"source\"}}")
    return doc


def _clean_facts(facts: dict, where: str) -> tuple[dict, list[str]]:
    """(the known facts, checked against their types; the names of unknown facts, which are dropped)."""
    clean, ignored = {}, []
    for name, rec in facts.items():
        if name not in VOCAB:
            ignored.append(str(name)[:80])
            continue
        if not isinstance(rec, dict) or "value" not in rec:
            raise FactsError(f"{where}: fact {name}: expected an object with \"value\"")
        why = check_value(name, VOCAB[name].type, rec["value"])
        if why:
            raise FactsError(f"{where}: fact {name} ({VOCAB[name].type}) {why}")
        src = rec.get("source")
        clean[name] = {"value": rec["value"], "source": src[:300] if isinstance(src, str) else "facts file"}
    return clean, ignored


def _copy_header(doc: dict, out: dict, where: str) -> None:
    """The collection time, errbook version and probe records of the file, within their limits."""
    sec = doc.get("seconds")
    if sec is not None:
        if isinstance(sec, bool) or not isinstance(sec, (int, float)) or not 0 <= sec <= MAX_SECONDS:
            raise FactsError(f'{where}: "seconds" must be a number from 0 to {MAX_SECONDS}')
        out["seconds"] = sec
    for k in ("collected", "errbook"):
        if isinstance(doc.get(k), str):
            out[k] = doc[k][:64]
    probes = doc.get("probes")
    if isinstance(probes, list):
        out["probes"] = [p for p in probes[:64] if isinstance(p, dict)]


def load(path: str) -> dict:
    """Read and validate a facts file ('-' = stdin)."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise FactsError(f"cannot read facts file {path}: {e.strerror or e}") from None
    return parse(data, path)


def values_of(doc: dict) -> dict:
    """name -> value, the form the evaluator reads."""
    return {k: v["value"] for k, v in doc["facts"].items()}
