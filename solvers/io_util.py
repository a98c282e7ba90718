"""Small I/O helpers: atomic writes (exports never leave a half-written file) and size guards."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import InputError


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and an atomic rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would (0666 minus the umask)
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def physical_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 16 << 30


def check_allocation(n_bytes: int, what: str, path=None, line: int | None = None) -> None:
    """Refuse, before allocating, a declared size that needs more than half of physical memory."""
    limit = physical_memory_bytes() // 2
    if n_bytes < 0 or n_bytes > limit:
        raise InputError(f"{what} would need {n_bytes / 2**30:.1f} GiB, more than this machine allows "
                         f"({limit / 2**30:.1f} GiB)", None if path is None else str(path), line)
