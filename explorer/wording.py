"""Plain words for what the explorer tells people: problems, options, outcomes and certificates.

Every log line, status message and panel line about a dataset or a run is phrased here, so the
log, the Solver panel, the status bar and the report say the same thing the same way (never a
Python dict, repr or class name). Counts and durations go through solvers.text."""
from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from solvers.text import duration, plural

__all__ = ["duration", "plural", "value_words", "settings_words", "problem_words", "problem_size",
           "certificate_short", "run_iterations_words", "time_words", "field_words"]


def value_words(value) -> str:
    """One setting's value as a person writes it: 0.5, 1e-20, inf, true, shrink."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:g}" if value != int(value) or abs(value) >= 1e15 else f"{int(value)}"
    if isinstance(value, (list, tuple)):
        return ", ".join(value_words(v) for v in value)
    return str(value)


def settings_words(settings: Mapping | None, empty: str = "default options") -> str:
    """``variant=shrink, k=0.5`` (algorithm options, generator parameters)."""
    if not settings:
        return empty
    return ", ".join(f"{k}={value_words(v)}" for k, v in settings.items())


def _count(n, noun: str, plural_form: str | None = None) -> str:
    try:
        return plural(int(n), noun, plural_form)
    except (TypeError, ValueError):
        return f"{n} {plural_form or noun + 's'}"


def problem_size(info: Mapping) -> str:
    """The size of a problem in a few words: ``512 × 512``, ``66 vertices``, ``10 frames``."""
    if "rows" in info and "cols" in info:
        return f"{int(info['rows']):,} × {int(info['cols']):,}"
    if "vertices" in info:
        return _count(info["vertices"], "vertex", "vertices")
    if "frames" in info:
        return _count(info["frames"], "frame")
    return ""


def problem_words(info: Mapping | None) -> str:
    """``matching: 512 rows, 512 cols, 9,627 edges`` from a problem's describe() (or a run record's copy)."""
    if not info:
        return "unknown problem"
    info = dict(info)
    kind = info.pop("kind", "problem")
    parts = []
    if kind == "points":
        parts.append(_count(info.get("frames", 0), "frame"))
        sizes = info.get("points")
        if isinstance(sizes, (list, tuple)) and sizes:
            lo, hi = min(sizes), max(sizes)
            parts.append(f"{lo:,} points per frame" if lo == hi else f"{lo:,} to {hi:,} points per frame")
        if "ground_truth" in info:
            parts.append("with ground-truth ids" if info["ground_truth"] else "no ground-truth ids")
        return f"{kind}: " + ", ".join(parts)
    for key in ("rows", "cols", "vertices", "edges"):
        if key in info and info[key] is not None:
            noun = {"rows": "row", "cols": "col", "vertices": "vertex", "edges": "edge"}[key]
            parts.append(_count(info[key], noun, "vertices" if key == "vertices" else None))
    if "source" in info and "sink" in info:
        parts.append(f"source {info['source']}, sink {info['sink']}")
    if info.get("total_capacity") is not None:
        parts.append(f"total capacity {int(info['total_capacity']):,}")
    lo, hi = info.get("min_cost"), info.get("max_cost")
    if lo is not None and hi is not None:
        whole = " (whole numbers)" if info.get("integer") else ""
        parts.append(f"costs {value_words(float(lo))} to {value_words(float(hi))}{whole}")
    if info.get("forbidden"):
        parts.append(_count(info["forbidden"], "forbidden pair"))
    known = {"rows", "cols", "vertices", "edges", "source", "sink", "total_capacity", "min_cost", "max_cost",
             "integer", "forbidden"}
    parts += [f"{k.replace('_', ' ')} {value_words(v)}" for k, v in info.items() if k not in known and v is not None]
    return f"{kind}: " + ", ".join(parts)


LABEL_WORDS = {  # what each solver's "labels" snapshots hold, in a few words (the Labels view says it)
    "psi": "distance to a free column",
    "height": "push-relabel height",
    "dual": "dual potential",
    "price": "auction price",
}


def label_words(name: str) -> str:
    """ "psi (distance to a free column)": a label's name with what it measures, where known."""
    words = LABEL_WORDS.get(name)
    return f"{name} ({words})" if words else name


def certificate_short(status: str | None, gap: float = 0.0) -> str:
    """What the status bar says of a certificate: ``certified optimal``, ``NOT certified``...

    ``status`` is Certificate.status ("optimal", "within-gap", "not-proven", "invalid") or None
    when unknown (an old run record)."""
    if status == "optimal":
        return "certified optimal"
    if status == "within-gap":
        return f"certified within gap {value_words(float(gap))} of optimal"
    if status == "proven-infeasible":  # a batch: each problem optimal or proven infeasible
        return "certified (each problem optimal or proven infeasible)"
    if status == "not-proven":
        return "NOT certified (not proven optimal)"
    if status == "invalid":
        return "NOT certified (invalid answer)"
    return "certificate unknown"


def summary_status(summary: Mapping) -> str | None:
    """Certificate.status from a result summary (a run record's), for records written before it was stored."""
    if "certified" not in summary:
        return None
    if not summary.get("certified"):
        return "not-proven"
    return "optimal" if summary.get("optimal", True) else "within-gap"


def run_iterations_words(n: int | None) -> str:
    return "iterations unknown" if n is None else plural(int(n), "iteration")


def time_words(solver_seconds: float | None, wall_seconds: float | None, warmup_seconds: float = 0.0) -> str:
    """``solver 10.4 ms (wall 31 ms; warm-up 8.94 s before it, not counted)``: the wall time runs
    from the timed start to the certified answer; the warm-up (compiling) is its own figure."""
    text = f"solver {duration(solver_seconds)}" if solver_seconds is not None else ""
    if wall_seconds is not None and wall_seconds > 0:
        wall = f"wall {duration(wall_seconds)}"
        if warmup_seconds and warmup_seconds > 0.001:
            wall += f"; warm-up {duration(warmup_seconds)} before it, not counted"
        text = f"{text} ({wall})" if text else wall
    return text


def bytes_words(n: float) -> str:
    """``512 B``, ``12.3 KiB``, ``1.5 GiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def plain_text(text: str) -> str:
    """Help written for a terminal (``degree``, **bold**) as plain words for a form or tooltip."""
    return text.replace("`", "").replace("**", "")


def dataset_name(path: str | None, generator: tuple[str, Mapping] | None, info: Mapping | None,
                 read_as: str | None = None) -> str:
    """A short name for a dataset in run labels: ``rmat_s9.mtx``, ``graph.mtx as flow``,
    ``random-bipartite 300 × 300``."""
    if path:
        name = Path(path).name
        return f"{name} as {read_as}" if read_as else name
    if generator is not None:
        size = problem_size(info or {})
        return f"{generator[0]} {size}".strip()
    return "unnamed dataset"


FIELD_WORDS = {
    "max_level": "highest label", "unreachable": "unreachable vertices", "stranded": "stranded excess",
    "excess_total": "total excess", "dual_objective": "dual objective", "epsilon": "epsilon (ε)",
    "eps": "epsilon (ε)", "delta": "dual change (δ)", "paths": "augmenting paths",
    "global_relabels": "global relabels", "unassigned": "unassigned rows", "round": "round",
    "scipy_calls": "library calls", "active": "active vertices", "value": "objective",
}


def field_words(key: str) -> str:
    """A telemetry field's name in plain words (``max_level`` -> ``highest label``); an unknown one
    with its underscores as spaces."""
    return FIELD_WORDS.get(key, key.replace("_", " "))

