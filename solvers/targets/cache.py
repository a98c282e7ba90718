"""Where compiled kernels are kept between processes, so that they compile once per machine.

Every cpu loop is ``@njit(cache=True)`` and every cuda kernel ``@cuda.jit(cache=True)``: numba saves
what it compiles and later processes load it. numba checks a cached function only against the file
that holds it, so a kernel whose bodies or constants live elsewhere could load stale code. We
close that gap by keeping the cache in a directory named after a hash of every source file that
holds compiled code or what it uses (the ``solvers`` files that mention numba's decorators or
``register_jitable``, and the launch geometry): an edit anywhere in them starts a fresh cache.

The directory is ``$XDG_CACHE_HOME/matchscope/kernels/<hash>`` (``~/.cache/...`` by default).
A ``NUMBA_CACHE_DIR`` set by the user wins. It must be decided before numba is imported, which is
why ``solvers`` configures it on import (importing solvers imports no numba).
"""
from __future__ import annotations

import hashlib
import os
import sys
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
MARKERS = (b"cache=True", b"register_jitable", b"njit", b"cuda.jit")
KEY_LENGTH = 16


@lru_cache(maxsize=1)
def source_key() -> str:
    """A hash of the compiled code's sources (paths and contents)."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        data = path.read_bytes()
        if path.parent.name == "targets" or any(marker in data for marker in MARKERS):
            digest.update(str(path.relative_to(PACKAGE)).encode())
            digest.update(b"\0")
            digest.update(data)
    return digest.hexdigest()[:KEY_LENGTH]


def default_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "matchscope" / "kernels"


def cache_dir() -> Path | None:
    """Where this process keeps compiled kernels (None: numba's own default, next to the sources)."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    return Path(chosen) if chosen else None


def configure() -> Path | None:
    """Point numba's cache at our directory unless the user chose one or numba is already imported
    (then numba has read its settings; whatever it uses stays). Returns the directory in use."""
    if "NUMBA_CACHE_DIR" not in os.environ and "numba" not in sys.modules:
        directory = default_root() / source_key()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError:  # not writable: numba falls back to its own default
            return None
        os.environ["NUMBA_CACHE_DIR"] = str(directory)
    return cache_dir()
