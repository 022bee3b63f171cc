"""The multi-pattern prefilter: one pass over a chunk of raw log lines finds the lines that may match.

Two engines give the same answers (tests/test_prefilter.py):
  hyperscan  Intel Hyperscan (the `hyperscan` wheel ships the library) compiles every pattern in prefilter mode
             and reports, per line, which patterns may match there; only those are verified.
  re2        one RE2 alternation of all patterns finds candidate lines (as `grep -E -f` does); the ids are
             unknown, and Matcher.verify asks an RE2 set. Used where the Hyperscan wheel is missing or
             ERRBOOK_PREFILTER=re2.
The candidates are verified on the cleaned sub-lines by Matcher.verify.

Both are supersets: a pattern that matches a cleaned sub-line also matches the probe of its raw line
(normalize.probe), because cleaning only keeps substrings of the probe. A pattern is searched with its ^/$
anchors dropped (a superset of what it matches).
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from pathlib import Path

import re2

from errbook.common import paths, regfile

ID_SPACE = 1 << 16          # a hit is encoded as end offset * ID_SPACE + pattern id (plain ints sort fast)
UNKNOWN = ID_SPACE - 1      # the engine found a candidate line but not which pattern


def loose(pattern: str) -> str:
    """The pattern with every ^ and $ anchor dropped (outside character classes and escapes): it matches
    wherever the pattern matches, also inside a raw line whose cleaned form starts later."""
    out, esc, in_class = [], False, False
    for i, ch in enumerate(pattern):
        if esc:
            esc = False
        elif ch == "\\":
            esc = True
        elif in_class:
            if ch == "]" and pattern[i - 1] != "[" and pattern[max(0, i - 2):i] != "[^":
                in_class = False
        elif ch == "[":
            in_class = True
        elif ch in "^$":
            continue
        out.append(ch)
    return "".join(out)


def _search_forms(pattern: str, ignore_case: bool, anchors: list[str]) -> list[tuple[str, bool]]:
    return [(loose(pattern), ignore_case)]


class _Hyperscan:
    name = "hyperscan"
    aligned = True          # every hit ends just past its line's newline

    def __init__(self, forms: list[tuple[str, bool, int]]):
        import hyperscan
        # Each pattern is followed by the rest of its line: every possible match then ends at the line's
        # newline, and Hyperscan reports one (pattern, end) once, so a line costs one callback per pattern
        # instead of one per candidate end (a dense log had ~17 per line). Chunks are whole lines (each ends
        # with \n), so no line is lost.
        exprs = [(f"(?:{f})[^\n]*\n").encode() for f, _, _ in forms]
        base = hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_UTF8
        flags = [base | (hyperscan.HS_FLAG_CASELESS if ic else 0) for _, ic, _ in forms]
        ids = [i for _, _, i in forms]
        self.db = _cached_db(hyperscan, exprs, ids, flags)

    def hits(self, probe: bytes) -> list[int]:
        """end offset * ID_SPACE + pattern id of every possible match (the end is just past a newline)."""
        found: list[int] = []
        add = found.append
        self.db.scan(probe, match_event_handler=lambda i, f, t, fl, c: add(t * ID_SPACE + i))
        return found


def _cache_dir() -> Path:
    return paths.user_cache_dir()


# The cache file: MAGIC, the pattern set's SHA-256, HMAC-SHA256(key, MAGIC + that hash + database), the database.
# Hyperscan's loadb trusts its input (a database with changed bytecode and a recomputed CRC crashes the scan), so
# nothing reaches it unless the MAC made with this user's secret key holds: only a database this user's errbook
# wrote for this very pattern set is loaded. Anything else (corrupt, cut, another pattern set's database under
# this name, a FIFO, a symlink) is recompiled and the file rewritten.
MAGIC = b"errbook hyperscan cache 2\n"
KEY_NAME = "key"
KEY_BYTES = 32
MAX_DB_BYTES = 256 << 20


def _key(d: Path) -> bytes | None:
    """This user's secret for the cache MACs: d/key, 32 random bytes, a regular file owned by this user and
    readable by nobody else. Created when absent, replaced when it is anything else; None when d is unusable."""
    path = d / KEY_NAME
    key = _valid_key(path)
    if key is not None:
        return key
    key = secrets.token_bytes(KEY_BYTES)
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".key.", suffix=".tmp")      # mode 0600
        try:
            os.write(fd, key)
            os.close(fd)
            try:
                os.link(tmp, path)          # atomic, and never over a key another run made meanwhile
            except FileExistsError:
                other = _valid_key(path)
                if other is not None:
                    return other
                os.replace(tmp, path)       # an unusable key file (wrong owner, mode, size or type)
            return key
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    except OSError:
        return None


def _valid_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        key = os.read(fd, KEY_BYTES + 1)
        return key if len(key) == KEY_BYTES else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _sealed(key: bytes, pattern_hash: bytes, db: bytes) -> bytes:
    return hmac.new(key, MAGIC + pattern_hash + db, hashlib.sha256).digest()


def _load(hyperscan, path: Path, key: bytes, pattern_hash: bytes):
    """The database at path when its pattern hash and MAC hold, else None. Opened only as a regular file (no
    symlink followed, no FIFO waited on)."""
    try:
        data = regfile.read_regular(path, MAX_DB_BYTES, follow=False)
    except OSError:
        return None
    head = len(MAGIC) + 64
    if len(data) <= head or not data.startswith(MAGIC) or data[len(MAGIC):len(MAGIC) + 32] != pattern_hash:
        return None
    db = data[head:]
    if not hmac.compare_digest(data[len(MAGIC) + 32:head], _sealed(key, pattern_hash, db)):
        return None
    try:
        loaded = hyperscan.loadb(db, hyperscan.HS_MODE_BLOCK)
        loaded.scratch = hyperscan.Scratch(loaded)      # a loaded database comes without scratch space
        return loaded
    except Exception:           # written by another build of the library
        return None


def _cached_db(hyperscan, exprs: list[bytes], ids: list[int], flags: list[int]):
    """A compiled database, from the user's cache when the same patterns were compiled before (compiling all
    signatures takes about a second; loading takes milliseconds). A cache that cannot be read, written or
    trusted is ignored: the database is compiled instead."""
    h = hashlib.sha256(repr((getattr(hyperscan, "__version__", ""), exprs, ids, flags)).encode()).digest()
    try:
        d = _cache_dir()
    except (KeyError, RuntimeError):        # no home directory to find: compile every time
        d = None
    key = _key(d) if d is not None else None
    path = d / f"hs2-{h.hex()[:24]}.db" if d is not None and key is not None else None
    if path is not None and key is not None:
        db = _load(hyperscan, path, key, h)
        if db is not None:
            return db
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=exprs, ids=ids, flags=flags)
    if path is not None and key is not None:
        blob = hyperscan.dumpb(db)
        # read-only, full, or a directory in the way: compile next time too
        with contextlib.suppress(OSError):
            regfile.write_atomic(path, MAGIC + h + _sealed(key, h, blob) + blob)
    return db


class _RE2:
    name = "re2"
    aligned = False

    def __init__(self, forms: list[tuple[str, bool, int]]):
        opts = re2.Options()
        opts.max_mem = 256 << 20
        alt = b"|".join((("(?i:" if ic else "(?:") + f + ")").encode() for f, ic, _ in forms)
        self.rx = re2.compile(alt, opts) if forms else None

    def hits(self, probe: bytes) -> list[int]:
        """(offset + 1) * ID_SPACE + UNKNOWN per candidate line: the ids are found later by the exact set."""
        found: list[int] = []
        if self.rx is None:
            return found
        pos = 0
        while True:
            m = self.rx.search(probe, pos)
            if m is None:
                return found
            # A hit may span lines (\s matches a newline): every line it touches is a candidate.
            s = m.start()
            e = max(s, m.end() - 1)
            nl = probe.find(b"\n", s)
            while 0 <= nl < e:
                found.append((nl + 1) * ID_SPACE + UNKNOWN)
                nl = probe.find(b"\n", nl + 1)
            found.append((e + 1) * ID_SPACE + UNKNOWN)
            nxt = probe.find(b"\n", e)
            if nxt < 0:
                return found
            pos = nxt + 1


class Prefilter:
    """patterns: (pattern, ignore_case, anchors) per id. lines(probe) -> {line index: ids or None}."""

    def __init__(self, patterns: list[tuple[str, bool, list[str]]], engine: str | None = None,
                 exclude: set[int] | frozenset[int] = frozenset()):
        forms = [(f, ic, i) for i, (p, ic, anchors) in enumerate(patterns) if i not in exclude
                 for f, ic in _search_forms(p, ic, anchors)]
        engine = engine or "auto"
        self.engine: _Hyperscan | _RE2 | None = None
        if engine in ("auto", "hyperscan") and forms:
            try:
                self.engine = _Hyperscan(forms)
            except Exception:       # no wheel for this platform, or a pattern it cannot take
                if engine == "hyperscan":
                    raise
        if self.engine is None:
            self.engine = _RE2(forms)
        self.name = self.engine.name
        self._engine: _Hyperscan | _RE2 = self.engine

    def lines(self, probe: bytes) -> dict[int, tuple]:
        """Line index within the chunk (0-based) -> (pattern ids that may match there, or None when the engine
        cannot tell; the line's start and end offsets in the probe)."""
        out: dict[int, tuple] = {}
        hits = self._engine.hits(probe)
        if not hits:
            return out
        hits.sort()
        if self._engine.aligned:
            return _aligned_lines(probe, hits)
        idx, line_end = -1, -1
        cur: set | None = None
        for h in hits:
            end, pid = divmod(h, ID_SPACE)
            last = end - 1 if end > 0 else 0          # the match's last character (end is one past it)
            if last > line_end:                       # a new line: count the newlines skipped to reach it
                idx += 1 + probe.count(b"\n", line_end + 1, last)
                start = probe.rfind(b"\n", 0, last) + 1
                line_end = probe.find(b"\n", last)
                if line_end < 0:
                    line_end = len(probe)
                cur = None if pid == UNKNOWN else set()
                out[idx] = (cur, start, line_end)
            if cur is not None:
                if pid == UNKNOWN:
                    cur = None
                    out[idx] = (None,) + out[idx][1:]
                else:
                    cur.add(pid)
        return out


def _aligned_lines(probe: bytes, hits: list[int]) -> dict[int, tuple]:
    """Prefilter.lines for sorted hits that each end just past a newline (a dense chunk has a hit on nearly
    every line, so this loop is kept to a few operations per hit)."""
    out: dict[int, tuple] = {}
    idx, prev, last = -1, 0, -1
    cur: set = set()
    mask = ID_SPACE - 1
    for h in hits:
        end = h >> 16                              # ID_SPACE is 1 << 16
        if end != last:
            n = probe.count(b"\n", prev, end)      # this line's newline and those of lines skipped
            idx += n
            cur = set()
            out[idx] = (cur, prev if n == 1 else probe.rfind(b"\n", prev, end - 1) + 1, end - 1)
            prev = last = end
        cur.add(h & mask)
    return out
