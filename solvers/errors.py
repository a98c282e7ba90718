"""Error types shared by every part of matchscope.

`InputError` is the one error a user sees for bad input: it names the file and line so the CLI can
print `error: PATH:LINE: message` and exit 2, and the GUI can show the same line in a dialog.
"""
from __future__ import annotations


MASKED_COSTS = "fill the masked entries first (numpy.ma.filled(costs, numpy.inf) makes them forbidden pairs)"
MASKED_EDGES = "leave the masked edges out first"
MASKED_POINTS = "drop the masked points first (points[~points.mask.any(axis=1)])"


class InputError(ValueError):
    """Malformed file, invalid array, impossible size. `str()` is the one line users see."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.message = message
        self.path = path
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.path is None:  # about an option or a parameter, not a file
            return self.message if self.line is None else f"line {self.line}: {self.message}"
        path = printable(str(self.path))  # a newline in a file name must not make two lines
        where = path if self.line is None else f"{path}:{self.line}"
        return f"{where}: {self.message}"


def refuse_masked(data, what: str, fill: str, source: str | None = None) -> None:
    """A numpy masked array with masked entries (or a list of such rows) is refused in one line:
    np.asarray reads the values under the mask and drops the mask, so masked entries would silently
    count. One with nothing masked is read as its values. ``fill``: what the masked entries should be."""
    import numpy as np
    parts = data if isinstance(data, (list, tuple)) else (data,)  # a list of masked rows, one level deep
    if any(isinstance(part, np.ma.MaskedArray) and np.ma.is_masked(part) for part in parts):
        raise InputError(f"{what} came as a masked array; its mask would be ignored, so {fill}", source)


def unmasked_array(data, what: str, fill: str, source: str | None = None, dtype=None):
    """np.asarray(data, dtype), refusing masked data in one line (see refuse_masked), including a
    masked element deep inside nested lists (np.ma.masked), which numpy reads as NaN with a warning."""
    import warnings
    import numpy as np
    refuse_masked(data, what, fill, source)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        array = np.asarray(data)  # no dtype yet: a masked element read as bool would pass unseen
    for warning in caught:
        if "masked element" in str(warning.message):
            raise InputError(f"{what} holds masked elements; their mask would be ignored, so {fill}", source)
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return array if dtype is None else array.astype(dtype, copy=False)


def printable(text: str) -> str:
    """``text`` with every unprintable character (newline, tab, escape...) shown as '?'."""
    return text if text.isprintable() else "".join(c if c.isprintable() else "?" for c in text)


class InfeasibleError(ValueError):
    """The problem is valid but has no solution of the required kind (e.g. no complete assignment)."""


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run in this process (no GPU, simulator not enabled...)."""


class DeviceOutOfMemory(BackendUnavailable):
    """The GPU's memory cannot hold this problem for this algorithm (said in one line, with what
    to do instead, where the driver's error would have been a traceback)."""


def is_device_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is the CUDA driver's out-of-memory error (numba's CudaAPIError), told by its
    name and text so that a cpu run never imports numba.cuda to ask."""
    return type(exc).__name__ == "CudaAPIError" and "OUT_OF_MEMORY" in str(exc)


class Cancelled(RuntimeError):
    """The observer asked the solver to stop."""
