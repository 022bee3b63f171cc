"""Issue 28, M8: the compiled-pattern cache (a Hyperscan database in $ERRBOOK_CACHE) and the second stage's index
(.cache/retrieval-*.json) are untrusted input. A database is loaded only when its MAC (HMAC-SHA256 with a
per-user key) and its pattern-set hash hold, from a regular file; anything else is recompiled and rewritten.
Before: a bytecode edit with its CRC recomputed crashed triage with SIGSEGV, another pattern set's database
under the right name changed the answers silently, a FIFO hung it."""
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, make_root

pytest.importorskip("hyperscan")
HERE = Path(__file__).parent
HANG = 300                   # seconds: a ceiling that only catches a hang, never a measure of speed
LOG = b"".join(p.read_bytes().rstrip(b"\n") + b"\n"
               for p in sorted((REPO / "errata" / "corpus" / "real").glob("*.log"))[:40])


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))    # reading /dev/zero must fail, not eat the machine


def bounded(cmd, env, input=b""):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         start_new_session=True, preexec_fn=_limits)
    try:
        out, err = p.communicate(input, timeout=HANG)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out, err
    return p.returncode, out, err


def triage(cache: Path, root: Path = REPO, log: bytes = LOG):
    env = dict(os.environ, ERRBOOK_CACHE=str(cache))
    rc, out, err = bounded([sys.executable, "-m", "errbook.cli", "--root", str(root), "triage", "--json", "-"], env,
                           input=log)
    assert rc is not None, f"hang: triage ran past {HANG}s"
    assert rc >= 0, f"triage killed by {signal.Signals(-rc).name}: {err.decode()[-1500:]}"
    assert b"Traceback" not in err, err.decode()[-3000:]
    return rc, json.loads(out)["matches"]


def main_db(cache: Path) -> Path:
    return max(cache.glob("hs*-*.db"), key=lambda p: p.stat().st_size)     # the signatures' (notes' are small)


@pytest.mark.slow
def test_triage_answers_do_not_depend_on_a_hostile_cache(tmp_path):
    import random
    sys.path.insert(0, str(HERE))
    from cache_fuzz_worker import bytecode_edit
    cache = tmp_path / "cache"
    ref = triage(cache)
    assert ref[0] == 0 and len(ref[1]) >= 3, ref
    path = main_db(cache)
    pristine = path.read_bytes()
    other_cache = tmp_path / "other"                       # another pattern set's databases, made the same way
    triage(other_cache, make_root(tmp_path / "mini"))
    if (cache / "key").exists():                           # sealed with this user's key, as an attacker can't
        shutil.copy(cache / "key", other_cache / "key")
        (other_cache / "key").chmod(0o600)
        triage(other_cache, make_root(tmp_path / "mini2"))
    other = main_db(other_cache)
    rng = random.Random(28)

    def put(data=None, fifo=False, link=None):
        path.unlink()
        if fifo:
            os.mkfifo(path)
        elif link:
            path.symlink_to(link)
        else:
            path.write_bytes(data)

    cases = {f"bytecode edit {i} with its CRC recomputed": (lambda: put(bytecode_edit(pristine, rng)))
             for i in range(3)}
    cases.update({"another pattern set's database under this name": lambda: put(other.read_bytes()),
                  "fifo": lambda: put(fifo=True),
                  "symlink to another pattern set's database": lambda: put(link=other)})
    for name, make in cases.items():
        make()
        assert triage(cache) == ref, name
        assert stat.S_ISREG(os.lstat(path).st_mode), f"{name}: the cache was not rewritten"
        put(pristine)


@pytest.mark.slow
def test_fuzzed_cache_files_never_crash_hang_or_change_answers(tmp_path):
    """Fixed seed, bounded: bit flips, truncation, bytecode edits with a recomputed CRC, another pattern set's
    database, FIFOs, symlinks and a directory at the cache path, and the same for the key file."""
    env = dict(os.environ, ERRBOOK_CACHE=str(tmp_path / "cache"))
    rc, out, err = bounded([sys.executable, str(HERE / "cache_fuzz_worker.py"), "28", "40"], env)
    events = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    started = [e for e in events if "start" in e]
    where = started[-1]["kind"] if started else "setup"
    assert rc is not None, f"hang in case {where!r}"
    assert rc >= 0, f"killed by {signal.Signals(-rc).name} in case {where!r}"
    assert rc == 0 and b"Traceback" not in err, f"case {where!r}: {err.decode()[-3000:]}"
    done = [e for e in events if "done" in e]
    assert len(done) == len(started) >= 40
    assert [e["kind"] for e in done if not e["same"]] == []
    assert [e["kind"] for e in done if not e["regular"] and e["kind"] != "directory"] == []


# --- the second stage's index cache (.cache/retrieval-*.json) ----------------------------------------------------

UNMATCHED = b"step 4 of 7: fatal: hipMalloc returned out of memory while the quux did not zorb on gfx90a\n"


@pytest.mark.parametrize("content", [
    b'{"ids": 5, "idf": [], "norm": "x", "post": {"a": 5}}',
    b'{"ids": ["RMN-0001"], "idf": {"a": 1.0}, "norm": [1.0], "post": {"a": [[7, 1]]}}',     # an index out of range
    b'{"ids": ["RMN-0001"], "idf": {"a": "1"}, "norm": [1.0], "post": {"a": [[0, 1]]}}',
    b"[" * 100000,
    b"\xff\xfe garbage",
    None,                                                                                     # a FIFO
])
def test_a_wrong_retrieval_cache_is_rebuilt(content, tmp_path):
    root = make_root(tmp_path / "root")
    cache = tmp_path / "hs"
    ref = triage(cache, root, UNMATCHED)
    (idx,) = (root / ".cache").glob("retrieval-*.json")
    good = json.loads(idx.read_text())
    idx.unlink()
    if content is None:
        os.mkfifo(idx)
    else:
        idx.write_bytes(content)
    assert triage(cache, root, UNMATCHED) == ref
    assert stat.S_ISREG(os.lstat(idx).st_mode) and json.loads(idx.read_text()) == good      # rewritten
