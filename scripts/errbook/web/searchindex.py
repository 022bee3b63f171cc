"""The site's search over the entries, in Python (`errbook search`): the same index semantics as the page.

What the site does, and where this takes it from (one source of truth each):
- lunr (Material's search) with the separator, fields and field boosts of mkdocs.yml's `search` plugin, and the
  index pipeline Material uses for the configured language (its translation file's `search.config.pipeline`;
  for English only the stop-word filter: no stemmer);
- Chinese segmented with jieba at index time, with the plugin's extra words (web/plugin.py ZH_WORDS), as Material's
  search plugin does; a Chinese query segmented against the index's vocabulary (Material's worker, ported);
- lunr's b = 0 (no field-length normalisation), as Material's worker sets it;
- entry pages boosted by web/entrypage.py's search_boost (ENTRY_SEARCH_BOOST, less for a cosmetic entry); a page
  is indexed in sections (its top, then each heading), a top section scoring (1 + (1 + f)^2) and a subsection
  (1 + f^2) times lunr's score, f being the share of query words it holds (Material's worker); a page ranks by its
  best section;
- the query rewriting of web/assets/search-query.js (fix_query: exact words, contractions, operators as spaces,
  a last word being typed as a prefix) and Material's worker (words that stay prefixes get a trailing *);
- the proximity and phrase signals of web/assets/errbook-search.js (PROXIMITY, window twice the query's length, at
  least 40; PHRASE, the query's words as adjacent as the query writes them).

Deliberate differences: only entries are indexed (hand-written pages are not results of `errbook search`); an
entry's sections hold its fields' text (what its page renders, less the parts the page keeps out of the index)
rather than the rendered HTML, so a field is one block (Material counts a position as the word's ordinal in an
HTML block) and `<`, `>`, `&` are plain separators rather than markup and entities. tests/test_cli_terminal.py runs
Material's own worker (Node.js) on the same documents and queries and compares the rankings.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import pickle
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from errbook.common import paths
from errbook.kb import fixsteps
from errbook.web import entrypage, phrases
from errbook.web.entrypage import ENTRY_SEARCH_BOOST, search_boost

PROXIMITY = 2                # errbook-search.js
PHRASE = 2                   # errbook-search.js
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def site_config(root: Path) -> dict:
    """The search plugin's settings in mkdocs.yml: separator, fields with boosts, language, pipeline
    (mkdocs.yml's !!python/name tags are read as nothing: only plain data is needed here)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    cfg = yaml.load((root / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader) or {}
    search: dict = {}
    for p in cfg.get("plugins") or []:
        if isinstance(p, dict) and "search" in p:
            search = p["search"] or {}
    lang = search.get("lang", "en")
    lang = lang[0] if isinstance(lang, list) else lang
    return {"separator": search.get("separator", r"[\s\-]+"),
            "fields": {k: float((v or {}).get("boost", 1)) for k, v in (search.get("fields") or
                                                                        {"title": {}, "text": {}, "tags": {}}).items()},
            "lang": lang, "pipeline": search.get("pipeline") or _material_pipeline(lang)}


def _material_pipeline(lang: str) -> list[str]:
    """Material's default index pipeline for a language (its translation file says it)."""
    try:
        import material
        text = (Path(material.__file__).parent / "templates" / "partials" / "languages" / f"{lang}.html").read_text(
            encoding="utf-8")
        m = re.search(r'"search\.config\.pipeline":\s*"([^"]*)"', text)
        if m:
            return [x.strip() for x in m.group(1).split(",") if x.strip()]
    except (ImportError, OSError):
        pass
    return ["stopWordFilter"]


# --- the query: search-query.js's fixQuery, then Material's worker ------------------------------------------------

def fix_query(q: str) -> str:
    """search-query.js fixQuery, line for line."""
    s = str(q)
    typing = bool(re.search(r"[^\W]$", s))          # a letter, digit or _ last: the last word may be incomplete
    s = re.sub(r"\b(can|won)['’]t\b", lambda m: "can" if m.group(1).lower() == "can" else "will", s, flags=re.I)
    s = re.sub(r"\b([A-Za-z]+)n['’]t\b", r"\1", s)
    s = re.sub(r"""[:^~*"'‘’“”`()\[\]{}<>,;|=!]""", " ", s)
    s = re.sub(r"[-+]+(?![^\W])|(?<![^\W])[-+]+", " ", s)
    s = _HAN_RUN.sub(lambda m: m.group() + m.group()[-1] if len(m.group()) >= 2 else m.group(), s)
    words = [w for w in s.split() if w]

    def prefix(w: str, i: int) -> bool:
        return typing and i == len(words) - 1 and (len(words) == 1 or (len(w) >= 3 and len(words) <= 4))

    return " ".join(w if prefix(w, i) or _HAN.search(w) else f"{w}~0" for i, w in enumerate(words))


def _segment_han(run: str, vocabulary) -> list[str]:
    """Material's worker: the words of the index vocabulary that a Chinese run holds (never one ending at its last
    character, hence fix_query's repeated last character), else the run itself."""
    n = len(run)
    longest = [0] * (n + 1)
    for s in range(n):
        for o in range(s + 1, n):
            if run[s:o] in vocabulary:
                longest[s] = o - s
    found: list[str] = []
    stack = [0]
    while stack:
        o = stack.pop()
        for u in range(1, longest[o]):
            if longest[o + u] > longest[o] - u:
                found.append(run[o:o + u])
                stack.append(o + u)
        a = o + longest[o]
        if a < n and longest[a] and a < n - 1:
            stack.append(a)
        found.append(run[o:a])
    return [run] if "" in found else list(dict.fromkeys(found))


def worker_query(q: str, separator: str, vocabulary) -> str:
    """Material's worker on a query: Chinese runs segmented; each word split at the separator; a word that is not
    exact (~N) nor required/prohibited (+/-) becomes a prefix (word*)."""
    q = _HAN_RUN.sub(lambda m: "* ".join(_segment_han(m.group(), vocabulary)), q)
    sep = re.compile(separator)
    out = []
    for word in q.strip().split():
        m = re.match(r"^(.*?)((?:~\d*|\^\d*|\*)?)$", word)
        body, suffix = (m.group(1), m.group(2)) if m else (word, "")
        for piece in (p for p in sep.split(body) if p):
            out.append(piece + suffix)
    out = [w + "1" if re.search(r"[~^]$", w) else w for w in out]
    return " ".join(w if re.search(r"(^[+-]|[~^]\d+$|\*$)", w) else f"{w}*" for w in out)


# --- the index ----------------------------------------------------------------------------------------------------

def sections(d: dict) -> list[dict]:
    """An entry's page as the site indexes it: its top (title, cause, first fix, names, summaries; tags) and one
    section per heading, each with the text the page shows there (parts marked data-search-exclude left out)."""
    fix = d["fix"]
    names = [a for a in phrases.public_aliases(d) if phrases.identifier_like(a)] + phrases.error_texts(d)
    confirm, fixes = fixsteps.split(fix)
    box = []                        # the fix box: the first check with its expected output, the first fix step
    for st in confirm[:1] + fixes[:1]:
        code = phrases.fix_code(st)
        box += [phrases.first_sentences(st["step"], 260), code[1] if code else "", st.get("expect", "")]
    top = [phrases.cause_line(d), *box,
           d["id"], phrases.CLASSES.get(d["class"], ("",))[0], " ".join(names), d["summary"], d.get("title_zh", ""),
           phrases.cause_line_zh(d) if d.get("cause_zh") else "", d.get("summary_zh", "")]
    t = d.get("triggers") or {}
    steps = []
    for st in fix:
        c = st.get("code") or {}
        steps += [st["step"], c.get("before", ""), c.get("after", "") or c.get("snippet", ""), st.get("step_zh", ""),
                  st.get("expect", ""), st.get("expect_zh", "")]
    out = [{"title": d["title"], "text": top, "tags": list(d.get("tags") or []), "top": True},
           {"title": "Symptoms", "text": list(d["symptoms"]) + list(d.get("symptoms_zh") or [])},
           {"title": "What the log says", "text": [str(s["examples"][0]["text"]) for s in d["signatures"]
                                                   if s.get("examples")]},
           {"title": "Triggers", "text": [t.get("explanation", "")] + [c.get("says", "") for c in t.get("checks") or []]
            + [t.get("not_checkable", "")] + [f"{v['name']} {v['condition']}" for v in t.get("env") or []]},
           {"title": "Root cause", "text": [d["root_cause"]]},
           {"title": "Fix", "text": steps}]
    if d.get("corrects"):
        out.append({"title": "Common advice this corrects", "text": [
            x for c in d["corrects"] for x in (c["belief"], c.get("circulates", ""), c["truth"], c["evidence"])]})
    out.append({"title": "References", "text": [f"{r['title']} {r['kind']} {r.get('note', '')}"
                                                for r in d.get("references") or []]})
    for s in out:
        s["text"] = "\n".join(x for x in s["text"] if x)
    return out


def _segmenter():
    """jieba as Material's search plugin uses it, with the site's extra words; None when jieba is missing."""
    try:
        import jieba
    except ImportError:
        return None
    jieba.setLogLevel(logging.WARNING)      # its start-up lines
    from errbook.web.plugin import ZH_WORDS
    for w in ZH_WORDS:
        jieba.add_word(w)
    return jieba


def segment_zh(text: str, jieba) -> str:
    """Chinese runs cut into jieba's words with \u200b around each, as Material's search plugin does at build time."""
    if jieba is None or not _HAN.search(text):
        return text
    return _HAN_RUN.sub(lambda m: "\u200b" + "\u200b".join(jieba.cut(m.group())) + "\u200b", text)


def _spaced(text: str, separator: re.Pattern, jieba) -> str:
    """text segmented (segment_zh) with every separator match replaced by as many spaces, so lunr's whitespace
    tokenizer cuts the same words at the same offsets as Material's tokenizer with the separator."""
    return separator.sub(lambda m: " " * len(m.group()), segment_zh(text, jieba))


def entry_docs(entries: list) -> list[dict]:
    """The index's documents: one per section of each entry's page; ref is ID#k, k = 0 the page's top."""
    return [{"ref": f"{e.id}#{k}", "title": s["title"], "text": s["text"], "tags": list(s.get("tags", [])),
             "top": bool(s.get("top")), "boost": search_boost(e.data)}
            for e in entries for k, s in enumerate(sections(e.data))]


def _tokens(obj, metadata=None):
    """Material's tokenizer on text already cut at the separator (_spaced): lower-cased words, each with its
    position as Material packs it, (block, the word's ordinal in its block). Plain text is one block; each element
    of a list (tags) is a block of its own. Replaces lunr.py's tokenizer, a loop over characters."""
    from lunr.token import Token
    if obj is None:
        return []
    blocks = obj if isinstance(obj, (list, tuple)) else [obj]
    return [Token(m.group(), {"position": [b, i], "index": i, **(metadata or {})})
            for b, text in enumerate(blocks) for i, m in enumerate(_LUNR_WORD.finditer(str(text).lower()))]


_LUNR_WORD = re.compile("[^ \t\n\r\f\v\xa0-]+")


def _token_set_key(self) -> str:
    """errbook-search.js's fix of lunr's TokenSet key, which lunr.py shares: each edge written as label + node id
    + ';', so that the edges '1'->234 and '1'->2, '3'->4 no longer give the same key and merge into a set that holds
    words the index lacks (a prefix query then fails inside lunr)."""
    cached = getattr(self, "_string", None)
    if cached is not None:
        return cached
    key = "1" if self.final else "0"
    for label in sorted(self.edges):
        key += f"{label}{getattr(self.edges[label], 'id', '')};"
    self._string = key
    return key


def _fix_lunr() -> None:
    from lunr.token_set import TokenSet
    TokenSet.__str__ = _token_set_key


class SiteSearch:
    """The index of every active entry, searched as the site searches. docs: other documents to index instead
    (entry_docs' shape, a "boost" each may carry; the tests compare the ranking with Material's own worker)."""

    def __init__(self, entries: list, config: dict, docs: list[dict] | None = None):
        from lunr import builder as builder_mod
        _fix_lunr()
        self.config = config
        self.entries = {e.id: e for e in entries}
        saved, builder_mod.Tokenizer = builder_mod.Tokenizer, _tokens
        try:
            self._build(entry_docs(entries) if docs is None else docs)
        finally:
            builder_mod.Tokenizer = saved

    def _build(self, docs: list[dict]) -> None:
        from lunr.builder import Builder
        from lunr.stop_word_filter import stop_word_filter
        from lunr.trimmer import trimmer
        separator = re.compile(self.config["separator"])
        jieba = _segmenter()
        builder = Builder()
        fns = {"stopWordFilter": stop_word_filter, "trimmer": trimmer}
        for name in self.config["pipeline"]:
            if name == "stemmer":
                from lunr.stemmer import stemmer
                builder.pipeline.add(stemmer)
            elif name in fns:
                builder.pipeline.add(fns[name])
        builder.ref("ref")
        for field, boost in self.config["fields"].items():
            builder.field(field, boost=boost)
        builder.metadata_whitelist = ["position"]
        builder.b(0)                  # Material's worker: no field-length normalisation
        self.top_refs = {d["ref"] for d in docs if d.get("top")}
        for d in docs:
            # tags are a list: each is cut at the separator too, and is a block of its own
            builder.add({"ref": d["ref"], "title": _spaced(d["title"], separator, jieba),
                         "text": _spaced(d["text"], separator, jieba),
                         "tags": [_spaced(t, separator, jieba) for t in d.get("tags") or []]},
                        attributes={"boost": d.get("boost", ENTRY_SEARCH_BOOST)})
        self.index = builder.build()

    def search(self, query: str, top: int | None = None) -> list[dict]:
        """[{id, score, words}] best first: `words` are the index words the entry matched."""
        from lunr.exceptions import QueryParseError
        _fix_lunr()
        q = worker_query(fix_query(query), self.config["separator"], self.index.inverted_index)
        if not q:
            return []
        try:
            results = self.index.search(q)
        except (QueryParseError, KeyError, ValueError):
            return []
        words = _query_words(q)
        # the words lunr searches: its pipeline drops stop words, except from a prefix (lunr: no pipeline for those)
        stop = _stop_words(self.config["pipeline"])
        searched = [(w, p) for w, p in words if p or w not in stop]
        span = max(40, 2 * len(re.sub(r"~\d+", "", q)))
        written = sum(1 for w in q.split() if not w.startswith("-"))      # the query's words, stop words counted
        best: dict[str, dict] = {}
        for r in results:
            meta = r["match_data"].metadata
            score = r["score"] * self._section_factor(r["ref"], words, meta)
            if len(searched) >= 2:
                k = _nearest(searched, meta, span)
                if k >= 2:
                    score *= 1 + PROXIMITY * (k / len(searched)) ** 2
                if k == len(searched) and _nearest(searched, meta, written - 1) == k:
                    score *= PHRASE
            eid = r["ref"].split("#")[0]
            cur = best.setdefault(eid, {"id": eid, "score": 0.0, "words": set()})
            cur["score"] = max(cur["score"], score)
            cur["words"] |= set(meta)
        ranked = sorted(best.values(), key=lambda x: -x["score"])[:top]
        return [dict(r, words=sorted(r["words"])) for r in ranked]

    def _section_factor(self, ref: str, words: list[tuple[str, bool]], meta: dict) -> float:
        """Material's worker: (1 + g^2), g = 1 for a page's top section + the share of query words found (a word
        counts as found when a matched index word starts with it; a stop word not found does not count at all)."""
        from lunr.stop_word_filter import WORDS
        found = sum(1 for w, _prefix in words if any(t.startswith(w) for t in meta))
        missing = sum(1 for w, _prefix in words if w not in WORDS and not any(t.startswith(w) for t in meta))
        g = (1 if ref in self.top_refs else 0) + (found / (found + missing) if found + missing else 0)
        return 1 + g * g


def _stop_words(pipeline: list[str]) -> frozenset[str]:
    """The words the index pipeline drops (lunr's English stop words when the pipeline has the filter)."""
    from lunr.stop_word_filter import WORDS
    return frozenset(WORDS) if "stopWordFilter" in pipeline else frozenset()


def _query_words(q: str) -> list[tuple[str, bool]]:
    """The query's words as lunr searches them, each with whether it is a prefix (errbook-search.js queryWords)."""
    out: list[tuple[str, bool]] = []
    for w in q.split():
        if w.startswith("-"):
            continue
        prefix = w.endswith("*")
        term = re.sub(r"(~\d+|\^\d+|\*)$", "", w.lstrip("+")).lower()
        if term and term not in [t for t, _ in out]:
            out.append((term, prefix))
    return out


def _nearest(words: list[tuple[str, bool]], metadata: dict, span: int) -> int:
    """errbook-search.js nearest(): the most query words one window of `span` holds in one block of one field.
    (The window is counted in what Material's positions count, words of the block, though the script's comment
    speaks of characters.)"""
    by_field: dict[tuple, list[tuple[int, int]]] = {}
    for term, fields in metadata.items():
        k = next((i for i, (w, prefix) in enumerate(words) if term == w or (prefix and term.startswith(w))), -1)
        if k < 0:
            continue
        for field, data in fields.items():
            for block, start in (data or {}).get("position") or []:
                by_field.setdefault((field, block), []).append((start, k))
    best = 0
    for hits in by_field.values():
        hits.sort()
        for i in range(len(hits)):
            seen = set()
            for j in range(i, len(hits)):
                if hits[j][0] - hits[i][0] > span:
                    break
                seen.add(hits[j][1])
            best = max(best, len(seen))
    return best


MAX_CACHE_BYTES = 256 << 20


def _fingerprint(root: Path, files: list[Path]) -> str:
    """What the index depends on: the entry files, mkdocs.yml, the code that builds it, lunr's version."""
    import lunr
    h = hashlib.sha1(str(getattr(lunr, "__version__", "")).encode())
    for p in files:
        st = p.stat()
        h.update(f"{p.relative_to(root)}:{st.st_mtime_ns}:{st.st_size}".encode())
    for f in (root / "mkdocs.yml", Path(__file__), Path(phrases.__file__), Path(entrypage.__file__)):   # boosts too
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def for_checkout(root: Path) -> SiteSearch:
    """The index of a checkout's active entries. Building it takes seconds, so it is kept in the checkout's
    .cache/ (like the second stage's index) and rebuilt when an entry, mkdocs.yml or this code changes. The file
    is a pickle, read only when it is a regular file of this checkout's own .cache/ (whoever can write there can
    already change the code being run); anything unreadable is rebuilt over."""
    from errbook.common import regfile
    from errbook.kb import entries as entries_mod
    from errbook.kb import usable
    fp = _fingerprint(root, entries_mod.entry_files(root))
    cache = paths.cache_dir(root) / f"search-{fp}.pickle"
    try:
        with _deep_enough():
            site = pickle.loads(regfile.read_regular(cache, MAX_CACHE_BYTES, follow=False))
        if isinstance(site, SiteSearch):
            return site
    except (OSError, ValueError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError, TypeError,
            RecursionError):
        pass
    good, _ = usable.usable_entries(root)
    site = SiteSearch(list(entries_mod.active(good)), site_config(root))
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        for old in cache.parent.glob("search-*.pickle"):
            if old != cache:
                old.unlink()
        with _deep_enough():
            data = pickle.dumps(site, protocol=pickle.HIGHEST_PROTOCOL)
        regfile.write_atomic(cache, data, mode=0o644)
    except (OSError, RecursionError):
        pass                 # a read-only checkout (or an index too deep to pickle) still searches, only slower
    return site


@contextlib.contextmanager
def _deep_enough() -> Iterator[None]:
    """lunr's token set is a trie as deep as the index's longest word (a Tensile kernel name of an entry's example
    is 600 characters), and pickle recurses along it: the recursion limit is raised for the pickling only."""
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(max(saved, 20000))
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)
