"""Small I/O helpers: atomic writes (exports never leave a half-written file), size guards and
JSON-able values.

Two guards keep a file's memory in proportion to its bytes: check_allocation refuses a declared
size beyond half of physical memory before anything is allocated, and check_declared_beyond_data
refuses sizes far beyond what the data present can fill (a 75-byte matrix that declares
100000000 x 100000000).
"""
from __future__ import annotations

import errno
import math
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .errors import InputError


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and an atomic rename.

    Replacing a file behaves like writing into it, which a bare rename would not: a file the user
    may not write, or one marked read-only (no write bit for anyone, which even root respects, as
    ``rm`` asks before removing one), is refused with PermissionError; a replaced file keeps its
    permission bits (and, for root, its owner); a symbolic link is followed, so its target is
    replaced rather than the link. A new file gets the mode a plain open() would (0666 minus the
    umask). Every OSError (a name too long, no such folder, a full disk) reaches the caller.
    """
    path = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    try:
        existing = os.stat(path)
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISREG(existing.st_mode) and (
            not existing.st_mode & 0o222 or not os.access(path, os.W_OK)):
        raise PermissionError(errno.EACCES, "the file is read-only", str(path))
    # a short temporary name: the target's own name may already be as long as the system allows
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:32]}.", suffix=".tmp", dir=path.parent)
    try:
        if existing is not None and stat.S_ISREG(existing.st_mode):
            os.fchmod(fd, stat.S_IMODE(existing.st_mode))
            if os.geteuid() == 0 and (existing.st_uid, existing.st_gid) != (0, 0):
                os.fchown(fd, existing.st_uid, existing.st_gid)
        else:
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


def check_output_name(path) -> None:
    """Refuse, before any long work, an output name that cannot be written: its folder missing or
    not a folder, the name itself a folder, a name too long for the file system, a NUL in it. (Path.is_dir() would raise
    OSError on a name too long instead of answering.) One InputError line, like the write's own."""
    name = str(path)
    folder = Path(path).parent
    try:
        is_folder = stat.S_ISDIR(os.stat(folder).st_mode)
        limit = os.pathconf(folder, "PC_NAME_MAX") if is_folder else 0
    except FileNotFoundError:
        raise InputError(f"cannot write file: no such folder {folder}", name) from None
    except OSError as e:
        raise InputError(f"cannot write file: {e.strerror or e}", name) from None
    except ValueError:
        raise InputError("cannot write file: the name holds a NUL character", name) from None
    if not is_folder:
        raise InputError(f"cannot write file: {folder} is not a folder", name)
    if os.path.isdir(path):
        raise InputError("cannot write file: it is a folder", name)
    if len(os.fsencode(Path(path).name)) > limit:
        raise InputError(f"cannot write file: the name is longer than the {limit} bytes this file system allows",
                         name)


def write_refused(exc: OSError, path) -> InputError:
    """The one line for a write the system refused: check_output_name's words where they apply (a
    missing folder is named as such, whoever writes), else the system's own reason."""
    try:
        check_output_name(path)
    except InputError as precise:
        return precise
    return InputError(f"cannot write file: {exc.strerror or exc}", str(path))


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
    if n_bytes < 0:  # a caller's arithmetic on a malformed size, never a real request
        raise InputError(f"{what} has a malformed (negative) size", None if path is None else str(path), line)
    if n_bytes > limit:
        raise InputError(f"{what} would need {gib(n_bytes)}, more than this machine allows ({gib(limit)})",
                         None if path is None else str(path), line)


def gib(n_bytes: int) -> str:
    """A size in GiB for people: one decimal below 10 GiB, whole numbers with separators above."""
    size = n_bytes / 2**30
    return f"{size:.1f} GiB" if size < 10 else f"{size:,.0f} GiB"


EMPTY_ALLOWANCE = 1 << 22  # 4,194,304 rows, columns or vertices that no entry of a file touches


def check_declared_beyond_data(declared: int, reachable: int, what: str, unit: str, path=None,
                               line: int | None = None, allowance: int | None = None) -> None:
    """Refuse a declared count (``what`` declares ``declared`` ``unit``) that exceeds what the data
    present can fill (``reachable``: rows and columns the entries can touch, frames the points can
    be in) by more than ``allowance`` (default EMPTY_ALLOWANCE) empty ones: they would cost memory
    and time without holding data.

    This is the rule by which memory follows the bytes present rather than a header: an empty row,
    vertex or frame is legal, but only a bounded number of them beyond the data.
    """
    allowance = EMPTY_ALLOWANCE if allowance is None else allowance
    empty = declared - reachable
    if empty > allowance:
        raise InputError(f"{what}; the data can fill at most {reachable:,} {unit}, and more than "
                         f"{allowance:,} empty ones are refused (they would take memory without holding "
                         "anything: is the size right?)", None if path is None else str(path), line)


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
