"""Run by test_pattern_cache.py in a subprocess (a crash of the Hyperscan library must not take pytest down):
mutates the compiled-pattern cache in $ERRBOOK_CACHE case by case and prints one JSON line per case,
"start" before it (so a death by signal or a hang names its case) and the verdict after it.

    python cache_fuzz_worker.py SEED CASES

errbook is imported as the test imports it (PYTHONPATH or the installed package). A verdict compares the
prefilter's answer (which lines may match, and which patterns) after the mutation with its
answer from a freshly compiled database. Works against any errbook version: it finds the cache files by name
(hs*-*.db) and Hyperscan's database inside them by its magic number.
"""
import json
import os
import random
import shutil
import stat
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HS_MAGIC = b"\xdb\xdb\xdb\xdb"
N_PATTERNS = 120                    # enough for every kind of pattern; compiles in a fraction of a second

_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _T.append(_c)


def crc32c_raw(data: bytes) -> int:
    """Hyperscan's database checksum: CRC-32C with initial value 0 and no final xor, over the bytecode."""
    c = 0
    for x in data:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c


def bytecode_edit(blob: bytes, rng: random.Random) -> bytes:
    """Three bytecode bytes changed and the database's CRC recomputed: Hyperscan's own check passes."""
    off = blob.find(HS_MAGIC)
    if off < 0:
        return blob
    length = struct.unpack_from("<I", blob, off + 8)[0]
    b = bytearray(blob)
    for _ in range(3):
        i = off + 32 + rng.randrange(length)
        b[i] ^= rng.randrange(1, 256)
    struct.pack_into("<I", b, off + 20, crc32c_raw(bytes(b[off + 32:off + 32 + length])))
    return bytes(b)


def say(**kw):
    print(json.dumps(kw), flush=True)


def main(seed: int, n_cases: int) -> None:
    from errbook.kb import entries as entries_mod
    from errbook.kb import validate
    from errbook.triage import normalize, pipeline, prefilter
    cache = Path(os.environ["ERRBOOK_CACHE"])
    usable, _ = validate.usable_entries(REPO)
    pats = pipeline.build_matcher(list(entries_mod.active(usable))).patterns
    set_a, set_b = pats[:N_PATTERNS], pats[N_PATTERNS:2 * N_PATTERNS]
    logs = sorted((REPO / "errata" / "corpus" / "real").glob("*.log"))
    probe = normalize.probe(b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in logs))

    def answer():
        return {k: [sorted(v[0]) if v[0] is not None else None, v[1], v[2]]
                for k, v in prefilter.Prefilter(set_a, "hyperscan").lines(probe).items()}

    ref = answer()                                   # compiled: the cache holds set A's database now
    (path,) = cache.glob("hs*-*.db")
    pristine = path.read_bytes()
    prefilter.Prefilter(set_b, "hyperscan")           # another pattern set's database, made the same way
    other_path = next(p for p in cache.glob("hs*-*.db") if p != path)
    other = other_path.read_bytes()
    key_path = cache / "key"
    key = key_path.read_bytes() if key_path.is_file() else None
    say(ready=True, lines=len(ref), file=path.name)

    def restore():
        for p in (path, key_path):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            elif p.exists() or p.is_symlink():
                p.unlink()
        path.write_bytes(pristine)
        if key is not None:
            key_path.write_bytes(key)
            key_path.chmod(0o600)

    def flip(b, k):
        b = bytearray(b)
        for _ in range(k):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b)

    def fifo(p):
        p.unlink()
        os.mkfifo(p)

    def link(p, target):
        p.unlink()
        p.symlink_to(target)

    def directory(p):
        p.unlink()
        p.mkdir()
        (p / "x").write_bytes(b"x")

    rng = random.Random(seed)
    kinds = {
        "bit flips": lambda: path.write_bytes(flip(pristine, rng.randint(1, 8))),
        "bytecode edit with its CRC recomputed": lambda: path.write_bytes(bytecode_edit(pristine, rng)),
        "truncated": lambda: path.write_bytes(pristine[:rng.randrange(len(pristine))]),
        "garbage appended": lambda: path.write_bytes(pristine + rng.randbytes(rng.randint(1, 4096))),
        "empty": lambda: path.write_bytes(b""),
        "another pattern set's file under this name": lambda: path.write_bytes(other),
        "another pattern set's bare database": lambda: path.write_bytes(other[other.find(HS_MAGIC):]),
        "fifo": lambda: fifo(path),
        "symlink to another pattern set's file": lambda: link(path, other_path),
        "symlink to /dev/zero": lambda: link(path, "/dev/zero"),
        "dangling symlink": lambda: link(path, path.parent / "nowhere"),
        "directory": lambda: directory(path),
    }
    if key is not None:
        kinds.update({
            "key bit flip": lambda: key_path.write_bytes(flip(key, 1)),
            "key readable by others": lambda: key_path.chmod(0o644),
            "key is a fifo": lambda: fifo(key_path),
            "key is a symlink": lambda: link(key_path, other_path),
            "key removed": lambda: key_path.unlink(),
        })
    names = sorted(kinds)
    # Every kind once, the rest bit flips and bytecode edits (the edits crashed Hyperscan: 1 in ~15), shuffled.
    order = names + [rng.choice(["bit flips"] + ["bytecode edit with its CRC recomputed"] * 3)
                     for _ in range(max(0, n_cases - len(names)))]
    rng.shuffle(order)
    for i, kind in enumerate(order):
        restore()
        kinds[kind]()
        say(start=i, kind=kind)
        got = answer()
        mode = os.lstat(path).st_mode
        say(done=i, kind=kind, same=got == ref, regular=stat.S_ISREG(mode))
    restore()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
