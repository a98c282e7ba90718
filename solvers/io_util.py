"""Small I/O helpers: atomic writes (exports never leave a half-written file), size guards and
JSON-able values."""
from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Mapping
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


def jsonable(value):
    """``value`` with what JSON cannot hold mapped to what it can: numpy scalars and arrays to
    numbers and lists, NaN / inf to null, dict keys to strings, anything else unknown to its str."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy arrays and scalars
        try:
            return jsonable(value.tolist())
        except (ValueError, TypeError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
