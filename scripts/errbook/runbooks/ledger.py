"""The verification ledger: one JSON record per runbook run, appended to a JSONL file committed in the repo.

Appends are whole lines written with O_APPEND under an exclusive flock, so concurrent runs never interleave.
A write that fails part-way (disk full, file-size limit) is rolled back to the old size under the same lock
and raises LedgerWriteError: the file holds the whole line or nothing. Reading checks every record with
ledgerrec.problems and reports a corrupt or invalid line with its number instead of using or dropping it.
"""
from __future__ import annotations

import fcntl
import json
import os
import signal
import threading
from pathlib import Path

from errbook.common import paths
from errbook.errors import ErrbookError
from errbook.machine import fingerprint
from errbook.runbooks import ledgerrec

REQUIRED = ledgerrec.REQUIRED
MAX_LINE = 1 << 20     # a record is a few hundred bytes; a longer line is reported, never held in memory


class LedgerWriteError(ErrbookError, OSError):
    """The record was not written (the file was rolled back to its old size)."""

    def __str__(self) -> str:
        return str(self.strerror)


def default_path(root: Path) -> Path:
    return paths.ledger_path(root)


def _ignore_sigxfsz() -> None:
    # Past RLIMIT_FSIZE the kernel sends SIGXFSZ, which kills by default; ignored, write() fails with EFBIG.
    # (CPython already ignores it at start-up; an embedding host may not.)
    if hasattr(signal, "SIGXFSZ") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _line(record: dict) -> bytes:
    bad = ledgerrec.problems(record)
    if bad:
        raise ValueError("invalid ledger record: " + "; ".join(f"{f or 'record'}: {m}" for f, m in bad))
    return (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def _open_locked(path: Path) -> int:
    _ignore_sigxfsz()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as e:
        raise LedgerWriteError(e.errno, f"cannot open the ledger {path}: {e.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write(fd: int, path: Path, line: bytes) -> None:
    """Append one line to the locked ledger: the whole line, or the file as it was."""
    size = os.fstat(fd).st_size
    # A previous writer killed mid-line would leave no newline: start ours on a fresh line.
    if size and os.pread(fd, 1, size - 1) != b"\n":
        line = b"\n" + line
    try:
        view = memoryview(line)
        while view:                      # write() may write part of the line (a limit, a full disk)
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as e:
        try:
            os.ftruncate(fd, size)
            undone = "the ledger is unchanged"
        except OSError as e2:
            undone = f"rolling back failed too ({e2.strerror}): check its last line"
        raise LedgerWriteError(e.errno, f"could not append to {path}: {e.strerror}; {undone}") from None


def _close(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def append(path: Path, record: dict) -> None:
    line = _line(record)
    fd = _open_locked(path)
    try:
        _write(fd, path, line)
    finally:
        _close(fd)


def append_new(path: Path, records: list[dict], key, publish=None) -> tuple[list, list, list]:
    """Append each record whose key(record) no valid record of the ledger has, all under the ledger's lock:
    writers of the same records (merges of two copies of one spool, at once) add each exactly once.
    publish(record), if given, runs under the lock just before that record's line is written (a failure
    there, an OSError, skips the record). Returns (added, already present, [(record, why not written)])."""
    added, present, failed = [], [], []
    fd = _open_locked(path)
    try:
        have = {key(r) for r in read(path)[0]} - {None}
        for rec in records:
            k = key(rec)
            if k is not None and k in have:
                present.append(rec)
                continue
            try:
                line = _line(rec)
                if publish:
                    publish(rec)
                _write(fd, path, line)
            except (ValueError, OSError) as e:
                failed.append((rec, str(e)))
                continue
            have.add(k)
            added.append(rec)
    finally:
        _close(fd)
    return added, present, failed


def _lines(f):
    """(line number, text) of each line, a line longer than MAX_LINE as None without reading it whole."""
    n = 0
    while True:
        raw = f.readline(MAX_LINE + 1)
        if not raw:
            return
        n += 1
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            while (rest := f.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
            yield n, None
        else:
            yield n, raw


def read(path: Path) -> tuple[list[dict], list[str]]:
    """(valid records in file order, problems as 'ledger.jsonl:N: ...')."""
    if not path.is_file():
        return [], []
    with open(path, "rb") as f:
        return parse(f, path.name)


def parse(f, name: str) -> tuple[list[dict], list[str]]:
    """read() of an open binary file; problems name it `name`."""
    records, problems = [], []
    for n, raw in _lines(f):
        where = f"{name}:{n}"
        if raw is None:
            problems.append(f"{where}: record longer than {MAX_LINE} bytes")
            continue
        text = raw.decode("utf-8", errors="replace")
        if not text.strip():
            continue
        try:
            rec = json.loads(text)
        except RecursionError:
            problems.append(f"{where}: corrupt record (nested too deeply)")
            continue
        except ValueError as e:   # JSONDecodeError, or an integer too long to convert
            problems.append(f"{where}: corrupt record ({getattr(e, 'msg', None) or str(e)[:80]})")
            continue
        bad = ledgerrec.problems(rec)
        if bad:
            problems += [f"{where}: {field + ': ' if field else ''}{msg}" for field, msg in bad]
            continue
        records.append(rec)
    return records, problems


def latest_by_entry_platform(records: list[dict]) -> dict[str, dict[str, dict]]:
    """entry id -> platform key -> newest record (the ledger is append-only, so later lines win)."""
    out: dict[str, dict[str, dict]] = {}
    for r in records:
        out.setdefault(r["entry"], {})[fingerprint.entry_key(r["fingerprint"])] = r
    return out
