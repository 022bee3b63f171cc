"""Opening files that someone else may have planted: regular files only, and an open that never blocks.

A FIFO opened for reading blocks until a writer comes (forever, if none does); a device can be endless; a
symlink can point anywhere. Every open here passes O_NONBLOCK (a FIFO or device never blocks the open) and
checks with fstat that what was opened is a regular file, so the check and the read are of the same file.
`open_beneath` also refuses symlinks on every component of a relative path, for folders such as the fleet
spool that compute jobs can write.
"""
from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

_SAFE_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+()-]*")


class Refused(OSError):
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
