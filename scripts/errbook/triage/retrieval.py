"""The second stage: when no signature matches, rank entries by lexical similarity (BM25) and say "likely".

Documents are the entries' whole text (titles, causes, summaries, symptoms, root cause, trigger explanation,
aliases, tags, Chinese text, the real log examples of their signatures, and the labelled evaluation logs
of the corpus (corpus.py, errata/corpus/) as more examples) plus benign logs indexed as "not a problem".
The query is the log's lines that report trouble (errors, failures, warnings, or a person's
complaint: "slow", "does not work", "instead of"); a log without a line that reports a failure or that a person
wrote (reports_trouble) gets no second-stage answer.
The answer abstains when a benign document ranks first, when the best score is low, or when the margin to the
runner-up is small;
the thresholds are data (data/calibration.json, read by corpus.calibration), calibrated by `errbook eval
--calibrate` on the dev split.

Pure: this module reads no file. The corpus and the shipped index (cached) are corpus.py's.

The tokenizer is plain ASCII rules plus CJK bigrams, and idf and length norms are precomputed here, so
assets/engine.js computes bit-identical scores from the exported index.
"""
from __future__ import annotations

import math
import re
from collections import Counter

from errbook.triage import normalize

K1, B = 1.2, 0.75
SAMPLE_NAME = "s2"
SAMPLE_CAP = 300            # lines reporting trouble used as the query
EXAMPLE_CHARS = 4000        # characters of one example indexed
BENIGN_CHARS = 32 << 10     # characters of one benign log indexed
# Lines worth querying with: the words a failure report or a complaint uses. An extra prefilter pattern
# (notes "s2").
SAMPLE_PATTERN = (r"error|fail|fatal|abort|panic|exception|unable|cannot|can't|could not|invalid|"
                  r"illegal|denied|refused|missing|not found|no such|undefined|unsupported|not supported|"
                  r"unavailable|not available|"
                  r"timeout|timed out|\bhang|stuck|killed|segmentation|core dumped|out of memory|warning|"
                  r"\bslow|mismatch|incorrect|wrong|crash|broken|problem|\bissue|doesn't|does not|not work|"
                  r"instead of|expected|degrad|regress|"
                  # a person describing trouble in prose: a question, first-person attempts, asking for help
                  r"\?[ \t]*$|any idea|\bhow (?:to|can|do)\b|is there a|\bi (?:get|got|tried|see)\b|"
                  r"i'm trying|i am trying|won't|very low|too low|much lower|poor perf|"
                  # a sentence of plain words (a person writing, not a tool printing)
                  r"\b[A-Za-z][a-z']{0,15} [a-z][a-z',]{0,15} [a-z][a-z',]{0,15} [a-z][a-z',]{0,15} "
                  r"[a-z][a-z',]{0,15} [a-z][a-z']{0,15}\b")
SAMPLE_EXTRA = (SAMPLE_NAME, r"(?:" + SAMPLE_PATTERN + r")", True, SAMPLE_CAP)

# The second stage answers only a log where a query line reports a failure or a person wrote it; a tool's INFO or
# WARNING sentence alone is normal output (vLLM, ComfyUI and HIP-sample start-up logs were answered on such lines).
FAILURE_PATTERN = (r"error|fail|fatal|abort|panic|exception|\bunable|cannot|can't|could not|invalid|illegal|denied|"
                   r"refused|missing|not found|no such|undefined|unsupported|not supported|unavailable|not available|"
                   r"timeout|timed out|\bhang|"
                   r"stuck|killed|segmentation|core dumped|out of memory|crash|broken|mismatch|incorrect|wrong")
# a person: first person, a question, a complaint (not on a line a logger marked INFO/DEBUG)
PERSON_PATTERN = (r"\?[ \t]*$|any idea|\bhow (?:to|can|do)\b|is there a|\bi (?:get|got|tried|see|have|am|was|would|"
                  r"need|want|can't|cannot|don't)\b|\bi'm\b|\bmy\b|\bwe\b|won't|not work|\bslow|"
                  r"very low|too low|much lower|poor perf|instead of|expected|degrad|regress|\bissue|problem")
# A line a logger marked INFO/DEBUG reports neither a failure nor a person (NCCL/RCCL INFO lines say "Failed to
# find ncclNetPlugin" on every healthy start).
LOGGER_INFO = r"\b(?:INFO|DEBUG|TRACE|NOTICE)\b"
# Failure words in known normal output: PyTorch's collect_env report (which PyTorch's issue template asks for)
# fills absent fields with "Could not collect"; a component the tool itself calls optional is not there (amdgpu's
# "RAS: optional ras ta ucode is not available" on every APU boot), unless the line also reports an error.
NORMAL_PATTERN = (r":[ \t]*Could not collect[ \t]*$|"
                  r"^(?!.*(?:Error|Exception|[Ff]atal|FATAL|[Ff]ailed|FAILED)).*"
                  r"\b[Oo]ptional\b[^.;]*\b(?:not available|unavailable|not found|missing)\b")
# A zero count of failures is not a failure ("0 errors", "nothing failed", pytest's "0 failed", "errors found: 0",
# "failed=0"): taken out of a line before FAILURE_PATTERN looks at it.
NEGATED_PATTERN = (r"\b(?:0|no|zero|nothing|without)[ \t]+(?:errors?|failures?|failed|fails?)(?:\(s\))?|"
                   r"\b(?:errors?|failures?|failed|fails?)(?:[ \t]+found)?[ \t]*[:=][ \t]*0(?![0-9.])")
# A lowercase snake_case name holding a failure word names a thing, not a failure: a CSV column ("norm_error_1" in
# hipBLASLt's tuning table), a CPU flag (/proc/cpuinfo's "fpu_exception"), a test or function name. Taken out of a
# line before FAILURE_PATTERN looks at it; CUDA_ERROR_* constants and CamelCase names (RuntimeError) still count.
IDENTIFIER_PATTERN = r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b"
# A tool addressing its reader is not a person reporting trouble: a yes/no prompt (pip's "Proceed (Y/n)?") or
# conditional advice (ComfyUI's "if you have memory or speed issues try using: ..."). The person and prose tests
# ignore such a line; a failure word on it still counts.
ADDRESSED_PATTERN = (r"[(\[][Yy]/[Nn][)\]]|\bif you (?:have|see|get|experience|encounter|run into|want|need|are)\b")
# or a long sentence of plain words on a line no logger marked (any level, Python's warnings module:
# "file:line: RuntimeWarning: ...", or a tool's "Note: ..." such as NumExpr's thread-count notice) and that does
# not open with a bracket
LOGGER_ANY = r"\b(?:INFO|DEBUG|TRACE|NOTICE|WARNING|WARN)\b|\b[A-Z][A-Za-z]*Warning: |^[ \t]*[\[(]|^[ \t]*[Nn]ote: "
PLAIN_WORD = r"^[A-Za-z][a-z']+$"
PROSE_PUNCT = ".,;:!?\"`()"
PROSE_MIN_WORDS, PROSE_SHARE = 12, 0.7
_FAILURE = re.compile(FAILURE_PATTERN, re.IGNORECASE | re.ASCII)
_PERSON = re.compile(PERSON_PATTERN, re.IGNORECASE | re.ASCII)
_LOGGER_INFO = re.compile(LOGGER_INFO, re.ASCII)
_NORMAL = re.compile(NORMAL_PATTERN, re.ASCII)
_NEGATED = re.compile(NEGATED_PATTERN, re.IGNORECASE | re.ASCII)
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN, re.ASCII)
_ADDRESSED = re.compile(ADDRESSED_PATTERN, re.IGNORECASE | re.ASCII)
_LOGGER_ANY = re.compile(LOGGER_ANY, re.ASCII)
_PLAIN_WORD = re.compile(PLAIN_WORD, re.ASCII)
_SPACES = re.compile(r"[ \t]+")


def _prose(line: str) -> bool:
    if _LOGGER_ANY.search(line) or _ADDRESSED.search(line):
        return False
    words = [w for w in _SPACES.split(line) if w]
    if len(words) < PROSE_MIN_WORDS:
        return False
    return sum(bool(_PLAIN_WORD.match(w.strip(PROSE_PUNCT))) for w in words) / len(words) >= PROSE_SHARE


def _failure(line: str) -> bool:
    return bool(_FAILURE.search(_IDENTIFIER.sub(" ", _NEGATED.sub(" ", line)))) and not _NORMAL.search(line)


def _person(line: str) -> bool:
    return bool(_PERSON.search(line)) and not _ADDRESSED.search(line)


def reports_trouble(lines) -> bool:
    """Whether the query lines give the second stage something to answer (see FAILURE_PATTERN)."""
    return any((not _LOGGER_INFO.search(ln) and (_failure(ln) or _person(ln))) or _prose(ln) for ln in lines)


FIRST_LINE_CAP = 300   # characters of it that are shown (the page's engine caps it the same)


def first_failure_line(lines) -> str | None:
    """The first query line that reports a failure (not a logger's INFO line): what to search for when no entry
    matched."""
    line = next((ln for ln in lines if not _LOGGER_INFO.search(ln) and _failure(ln)), None)
    return line[:FIRST_LINE_CAP] if line else None


_STOP = frozenset(["a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does",
                   "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "may", "me",
                   "my", "no", "not", "of", "on", "or", "our", "so", "such", "than", "that", "the", "their", "then",
                   "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "where", "which",
                   "while", "who", "will", "with", "you", "your"])
_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_DIRS = re.compile(r"(?:[A-Za-z]:)?(?:/[^ \t/:'\"()<>,;\[\]]+)+/", re.ASCII)
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-fA-F]{8,}\b", re.ASCII)
_WORD = re.compile(r"[A-Za-z0-9_]+", re.ASCII)
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", re.ASCII)
_CJK = re.compile("[\u3400-\u9fff\uf900-\ufaff]+")

# What assets/engine.js ports this module with (web/bundle.py ships it as the bundle's `retrieval` part, beside the
# index): the tokenizer, the query sample's name, and the second stage's gate (reports_trouble,
# first_failure_line). engine.js adds the flags compiled above (IGNORECASE where used here).
JS_SPEC = {
    "tokenizer": {"dirs": _DIRS.pattern, "hex": _HEX.pattern, "word": _WORD.pattern, "parts": _PARTS.pattern,
                  "cjk": _CJK.pattern},
    "stop": sorted(_STOP),
    "sample_name": SAMPLE_NAME,
    "first_line_cap": FIRST_LINE_CAP,
    "trouble": {"failure": FAILURE_PATTERN, "person": PERSON_PATTERN, "logger_info": LOGGER_INFO,
                "normal": NORMAL_PATTERN, "negated": NEGATED_PATTERN,
                "identifier": IDENTIFIER_PATTERN, "addressed": ADDRESSED_PATTERN,
                "logger_any": LOGGER_ANY, "plain_word": PLAIN_WORD, "punct": PROSE_PUNCT,
                "min_words": PROSE_MIN_WORDS, "share": PROSE_SHARE},
}


def tokens(text: str) -> list[str]:
    """Words of a text: identifiers whole and split (camelCase, snake_case, letters|digits), no numbers,
    no stop words, directories and hex dropped; CJK as character bigrams."""
    text = _HEX.sub(" ", _DIRS.sub(" ", text))
    out: list[str] = []
    for w in _WORD.findall(text):
        lw = w.translate(_UPPER)
        if len(lw) >= 2 and not lw.isdigit() and lw not in _STOP:
            out.append(lw)
        parts = _PARTS.findall(w.replace("_", " "))
        if len(parts) > 1:
            for p in parts:
                lp = p.translate(_UPPER)
                if len(lp) >= 2 and not lp.isdigit() and lp not in _STOP:
                    out.append(lp)
    for run in _CJK.findall(text):
        if len(run) == 1:
            out.append(run)
        out += [run[i:i + 2] for i in range(len(run) - 1)]
    return out


def thread_of(url: str) -> str:
    """A thread's canonical address: github.com/OWNER/REPO/issues/N (pull/N is the same thread; the ROCm issue
    tracker's two names are one repository); other URLs without fragment and query."""
    u = str(url).split("#")[0].split("?")[0].rstrip("/")
    m = re.match(r"https?://github\.com/([^/]+)/([^/]+)/(?:issues|pull|discussions)/(\d+)", u)
    if m:
        owner, repo = m.group(1).lower(), m.group(2).lower()
        if (owner, repo) == ("rocm", "rocm"):
            repo = "legacy-rocm-build"
        return f"github.com/{owner}/{repo}/{m.group(3)}"
    return re.sub(r"^https?://", "", u).lower()


# --- documents ----------------------------------------------------------------------------------------------

def _entry_base_text(e) -> str:
    d = e.data
    parts = [d.get("title", ""), d.get("title_zh", ""), d.get("cause", ""), d.get("cause_zh", ""),
             " ".join(d.get("aliases") or []), " ".join(d.get("tags") or []), d.get("summary", ""),
             d.get("summary_zh", ""), " ".join(d.get("symptoms") or []), " ".join(d.get("symptoms_zh") or []),
             d.get("root_cause", ""), (d.get("triggers") or {}).get("explanation", "")]
    parts.append(d.get("title", ""))          # the title counts twice: it names the problem
    return "\n".join(str(p) for p in parts if p)


def entry_docs(entries) -> dict[str, dict]:
    """Per active entry: base token counts and its examples' token counts with their threads."""
    docs = {}
    for e in entries:
        if e.withdrawn:
            continue
        ex = []
        for s in e.get("signatures") or []:
            for x in s.get("examples") or []:
                text = "\n".join(sub for raw in normalize.split_lines(str(x.get("text", ""))[:EXAMPLE_CHARS])
                                 for sub in normalize.clean(normalize.cap_raw(raw)))
                ex.append((thread_of(x.get("source", "")), Counter(tokens(text))))
        docs[e.id] = {"base": Counter(tokens(_entry_base_text(e))), "examples": ex}
    return docs


def labelled_doc(text: str) -> Counter:
    """A labelled log (errata/corpus/real, unseen) as one more example of its entry: the lines a query would
    use, so real users' wording of a failure is in the entry's document."""
    return benign_doc(text)


def benign_doc(text: str) -> Counter:
    """A benign log as a document: the lines a query would use (so a normal log pasted as a query meets its
    like on equal terms), or its whole text when it has none."""
    text = text[:BENIGN_CHARS]
    return Counter(tokens(query_text(text) or text))


def query_text(text: str) -> str:
    """The lines of an in-memory text that a query uses (the stream path collects the same lines as notes)."""
    rx = re.compile(SAMPLE_PATTERN, re.IGNORECASE | re.ASCII)
    subs = (s for raw in normalize.split_lines(text) for s in normalize.clean(normalize.cap_raw(raw)))
    out = []
    for s in subs:
        if rx.search(s):
            out.append(s)
            if len(out) == SAMPLE_CAP:
                break
    return "\n".join(out)


# --- the index ----------------------------------------------------------------------------------------------

class Index:
    """BM25 over entry documents and benign documents. ids: 'RMN-NNNN' or 'benign:<name>'."""

    def __init__(self, docs: dict[str, Counter]):
        self.ids = sorted(docs)
        n = len(self.ids)
        df: Counter = Counter()
        for c in docs.values():
            df.update(c.keys())
        lens = [sum(docs[i].values()) for i in self.ids]
        avg = (sum(lens) / n) if n else 1.0
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.norm = [K1 * (1 - B + B * (dl / avg if avg else 0)) for dl in lens]
        self.post: dict[str, list[tuple[int, int]]] = {}
        for k, i in enumerate(self.ids):
            for t, tf in sorted(docs[i].items()):
                self.post.setdefault(t, []).append((k, tf))

    def scores(self, query_tokens) -> tuple[list[tuple[float, str]], float, dict[str, int]]:
        """(documents by score, best first; the query's weight: the sum of idf of its known terms; per document
        the number of its matched terms that no benign document holds: evidence normal output never shows)."""
        acc = [0.0] * len(self.ids)
        distinct = [0] * len(self.ids)
        qnorm = 0.0
        for t in sorted(set(query_tokens)):
            p = self.post.get(t)
            if not p:
                continue
            w = self.idf[t]
            qnorm += w
            clean = not any(self.ids[k].startswith("benign:") for k, _ in p)
            for k, tf in p:
                acc[k] += w * (tf * (K1 + 1)) / (tf + self.norm[k])
                distinct[k] += clean
        ranked = [(s, self.ids[k]) for k, s in enumerate(acc) if s > 0]
        ranked.sort(key=lambda x: (-x[0], x[1]))
        return ranked, qnorm, {self.ids[k]: d for k, d in enumerate(distinct) if d}

    def export(self) -> dict:
        return {"ids": self.ids, "idf": self.idf, "norm": self.norm, "post": self.post, "k1": K1}


def build(entry_docs_: dict, benign: dict[str, Counter], exclude_threads: frozenset = frozenset()) -> Index:
    docs: dict[str, Counter] = {}
    for eid, d in entry_docs_.items():
        c = Counter(d["base"])
        for thread, ex in d["examples"]:
            if thread not in exclude_threads:
                c.update(ex)
        docs[eid] = c
    for name, c in benign.items():
        docs[f"benign:{name}"] = c
    return Index(docs)


# --- deciding --------------------------------------------------------------------------------------------------


def related_map(entries) -> dict[str, list[str]]:
    """Each entry's `related` entries, both ways (an entry and its declared neighbour share words by design)."""
    out: dict[str, set] = {}
    for e in entries:
        if e.withdrawn:
            continue
        for r in e.get("related") or []:
            out.setdefault(e.id, set()).add(str(r))
            out.setdefault(str(r), set()).add(e.id)
    return {k: sorted(v) for k, v in sorted(out.items())}


def decide(ranked: list[tuple[float, str]], qnorm: float, distinct: dict[str, int], cal: dict,
           top: int = 3, related: dict | None = None) -> list[dict]:
    """Likely entries (best first), or [] to abstain: when the best entry explains too little of the query
    (score / query weight below min_score), shares fewer than min_distinct terms with it that no benign
    document holds, does not beat the best benign document by benign_margin, or when the runner-up entry is
    within min_margin of it. The runner-up is the best entry not declared related to the best one: two
    neighbours scoring alike (the CMake and the hipcc side of one failure) are both listed, not a reason to
    stay silent."""
    entries = [(s, i) for s, i in ranked if not i.startswith("benign:")]
    if not entries or qnorm <= 0:
        return []
    benign = next((s for s, i in ranked if i.startswith("benign:")), 0.0)
    best = entries[0][0]
    if best / qnorm < cal["min_score"] or best <= benign * (1 + cal["benign_margin"]) \
            or distinct.get(entries[0][1], 0) < cal["min_distinct"]:
        return []
    near = set((related or {}).get(entries[0][1], ()))
    runner = next((sc for sc, i in entries[1:] if i not in near), 0.0)
    if (best - runner) / best < cal["min_margin"]:
        return []
    return [{"id": i, "score": s, "confidence": "likely"} for s, i in entries[:top] if s > benign]
