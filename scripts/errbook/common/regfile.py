"""Files that someone else may have planted: regular files only, an open that never blocks, writes that replace.

The one module for reading and writing files errbook did not just make itself: caches, a machine's /proc, /sys
and /opt/rocm/.info/version, the tally, the fleet file and the spool.

A FIFO opened for reading blocks until a writer comes (forever, if none does); a device can be endless; a
symlink can point anywhere. Every open here passes O_NONBLOCK (a FIFO or device never blocks the open) and
checks with fstat that what was opened is a regular file, so the check and the read are of the same file.
- read_regular: the whole file, refused (EFBIG) when larger than the limit;
- read_head: at most the first `limit` bytes (machine files whose size the kernel does not report);
- open_beneath / read_beneath also refuse symlinks on every component of a relative path, for folders such as
  the fleet spool that compute jobs can write;
- write_atomic writes a new file beside the target and renames it into place, so a reader sees the old file or
  the whole new one, and whatever was at the path (a FIFO, a symlink) is replaced rather than written through.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from pathlib import Path

from errbook.errors import ErrbookError

_SAFE_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+()-]*")


class Refused(ErrbookError, OSError):
    """The path is there but must not be read (not a regular file, a symlink, a path that leaves its folder)."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}" if self.filename else str(self.strerror)


def _why(e: OSError) -> str:
    # O_NOFOLLOW on a symlink fails with ELOOP ("Too many levels of symbolic links"): say what it means.
    if e.errno in (errno.ELOOP, errno.EMLINK):
        return "is a symlink (not followed)"
    if e.errno == errno.ENXIO:
        return "not a regular file"
    return e.strerror or str(e)


def open_regular(path, flags: int = os.O_RDONLY, *, follow: bool = True, dir_fd: int | None = None,
                 mode: int = 0o644) -> int:
    """A file descriptor of the regular file at path. follow=False refuses a symlink as the last component."""
    extra = os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags | extra, mode, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise
        raise Refused(e.errno, _why(e), str(path)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(errno.EINVAL, "not a regular file", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_fd(fd: int, limit: int, name: str) -> bytes:
    """At most limit bytes of an open file; a larger file is refused unread."""
    size = os.fstat(fd).st_size
    if size > limit:
        raise Refused(errno.EFBIG, f"file of {size} bytes is larger than the {limit} byte limit", name)
    with os.fdopen(os.dup(fd), "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:             # it grew while we read
        raise Refused(errno.EFBIG, f"larger than the {limit} byte limit", name)
    return data


def read_regular(path, limit: int, *, follow: bool = True) -> bytes:
    fd = open_regular(path, follow=follow)
    try:
        return read_fd(fd, limit, str(path))
    finally:
        os.close(fd)


def read_head(path, limit: int, *, follow: bool = True) -> bytes:
    """At most the first `limit` bytes of the regular file at path (files in /proc and /sys report no true size)."""
    fd = open_regular(path, follow=follow)
    try:
        chunks, left = [], limit
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def open_beneath(base: Path, rel: str) -> int:
    """Open base/rel for reading. rel is relative, names no '..' and no hidden part, and no component of it
    (folders included) may be a symlink: what is opened lies inside base whatever else changes meanwhile."""
    parts = rel.split("/")
    if rel.startswith("/") or not all(_SAFE_PART.fullmatch(p) and p != ".." for p in parts):
        raise Refused(errno.EINVAL, "not a plain relative path inside the folder", rel)
    dfd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, p in enumerate(parts[:-1]):
            try:
                nfd = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
            except OSError as e:
                if e.errno == errno.ENOENT:
                    raise
                try:
                    link = stat.S_ISLNK(os.lstat(p, dir_fd=dfd).st_mode)
                except OSError:
                    link = False
                why = "is a symlink (not followed)" if link else _why(e)
                raise Refused(e.errno, why, "/".join(parts[:i + 1])) from None
            os.close(dfd)
            dfd = nfd
        try:
            return open_regular(parts[-1], follow=False, dir_fd=dfd)
        except Refused as e:
            raise Refused(e.errno, e.strerror, rel) from None
    finally:
        os.close(dfd)


def read_beneath(base: Path, rel: str, limit: int) -> bytes:
    fd = open_beneath(base, rel)
    try:
        return read_fd(fd, limit, rel)
    finally:
        os.close(fd)


def is_regular(path) -> bool:
    """True for a regular file that is not a symlink (lstat: never opens, never blocks)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def write_atomic(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write data to path through a uniquely named temporary file in the same folder, renamed into place.
    Raises OSError; no temporary file is left behind."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
