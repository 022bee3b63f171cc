"""Files that something other than this run may have put in place: caches, a machine's /opt/rocm/.info/version.

read_regular opens without blocking and reads only a regular file: a FIFO at the path would otherwise hang the
command (open() waits for a writer), and a device could be read forever. write_atomic writes a new file beside
the target and renames it into place, so a reader sees the old file or the whole new one, and whatever was at the
path (a FIFO, a symlink) is replaced rather than written through.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path


class NotRegularFile(OSError):
    pass


def read_regular(path, limit: int, *, nofollow: bool = False, max_size: int | None = None) -> bytes:
    """Up to `limit` bytes of the regular file at path. nofollow: a symlink at path is refused (ELOOP). max_size:
    a larger file is refused (EFBIG) instead of being read in part. Raises OSError (NotRegularFile for a FIFO,
    a device, a directory)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (os.O_NOFOLLOW if nofollow else 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
        if max_size is not None and st.st_size > max_size:
            raise OSError(errno.EFBIG, f"larger than {max_size} bytes", str(path))
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
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
