"""Plain-language numbers for people: durations in the unit that reads best, counts with the right
plural. The command line and the explorer both print through these, so they say the same thing."""
from __future__ import annotations

import math


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``1 iteration``, ``2 iterations``, ``1,204 frame pairs`` (thousands separated)."""
    word = noun if count == 1 else (plural_form or noun + "s")
    return f"{count:,} {word}"


def duration(seconds: float) -> str:
    """``0.5 µs``, ``0.42 ms``, ``276 ms``, ``3.20 s``, ``3 min 30 s``, ``2 h 05 min``; ``—`` when
    unknown. Below 10 µs the count is in microseconds, so a tiny time never reads as ``0.00 ms``."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "—"
    if seconds == 0:
        return "0 ms"
    if seconds < 1e-5:
        return f"{seconds * 1e6:.2g} µs"
    if seconds < 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms" if seconds < 0.1 else f"{seconds * 1e3:.0f} ms"
    if seconds < 60:
        return f"{seconds:.2f} s"
    if seconds < 3600:
        minutes, rest = divmod(int(round(seconds)), 60)
        return f"{minutes} min {rest:02d} s"
    hours, rest = divmod(int(round(seconds)), 3600)
    return f"{hours} h {rest // 60:02d} min"


def number(value: float | int) -> str:
    """A whole number as one (an exact Python int in full); any other float in full (repr: the
    shortest text that reads back as the same float), so a summary shows the value the JSON holds."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    value = float(value)
    if math.isfinite(value) and value == int(value) and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def dtype_words(dtype) -> str:
    """An array's element type in words (never numpy's name for it): complex numbers, text, dates..."""
    kinds = {"c": "complex numbers", "U": "text", "S": "bytes", "O": "Python objects", "M": "dates",
             "m": "time spans", "V": "records", "b": "true/false values"}
    return kinds.get(getattr(dtype, "kind", ""), f"values of type {getattr(dtype, 'name', dtype)}")
