"""Algorithm registry: name -> problem kinds, backends, declared options and a lazily imported runner.

The modules in ``DECLARING_MODULES`` define ``ALGORITHMS = [Algorithm(...), ...]``; they import
neither numba nor scipy.sparse, so listing algorithms is quick and compiles nothing. A runner is
"module:function" with the signature ``run(problem, backend, tel, **options) -> Solution``; it is
imported only when the algorithm runs.

An ``Algorithm`` declares what front ends need to know about it, so they never guess: the problem
kinds and backends, its options, whether it runs compiled code (``compiled``: warm it up before a
timed run), whether Stop can interrupt it mid-run (``interruptible``; one scipy call cannot be),
the iteration phases its telemetry reports (``phases``), and the backends on which it checks
integer costs while uploading them (``checks_on_upload``).
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Any

from .errors import InputError

FAMILIES = ("matching", "flow", "assignment")
UNBOUNDED = 1e300  # a declared bound this large is a guard against overflow, not a limit to show
DECLARING_MODULES = (
    "solvers.matching.gpr", "solvers.matching.pr_seq", "solvers.matching.reference",
    "solvers.flow.wbpr", "solvers.flow.reference",
    "solvers.assignment.hungarian", "solvers.assignment.auction", "solvers.assignment.reference",
    "solvers.assignment.sparse_sap", "solvers.points_knn",
)


@dataclass(frozen=True)
class Option:
    """A declared algorithm option: the CLI, the explorer's forms and ``matchscope algos`` read it.

    Numbers are checked against ``low`` / ``high`` (inclusive; ``low_open`` excludes ``low``), so a
    bad value is refused when it is given, not deep inside a kernel. ``inf`` passes only where
    ``high`` is inf."""

    name: str
    default: Any
    choices: tuple | None = None
    help: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False

    @property
    def kind(self) -> str:
        """"choice", "bool", "int", "float" or "text": what a form shows for it."""
        if self.choices is not None:
            return "choice"
        return {bool: "bool", int: "int", float: "float"}.get(type(self.default), "text")

    def range_text(self) -> str:
        """In words: ``more than 1``, ``0 to 1000000``, ``at least 0``, ``at most 5`` or "" (no bound);
        an integer option's bounds print as whole numbers (``0 to 2147483647``, never ``2.14748e+09``),
        and a bound past 1e300 is no bound to a reader."""
        def number(bound) -> str:
            if self.kind == "int" and float(bound).is_integer():
                return f"{int(bound)}"
            return f"{bound:g}"

        high = None if self.high is None or abs(self.high) >= UNBOUNDED else self.high
        low = "" if self.low is None else f"{'more than' if self.low_open else 'at least'} {number(self.low)}"
        if high is None:
            return low
        if self.low is None:
            return f"at most {number(high)}"
        if self.low_open:
            return f"{low} and at most {number(high)}"
        return f"{number(self.low)} to {number(high)}"

    def parse(self, value) -> Any:
        """Convert a CLI/GUI value to the default's type and check it against the choices and range."""
        kind = self.kind
        parsed = value
        try:
            if kind == "bool":
                if isinstance(value, str):
                    if value.strip().lower() not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                        raise ValueError(value)
                    parsed = value.strip().lower() in ("1", "true", "yes", "on")
                elif not _is_bool(value):
                    raise ValueError(value)
                parsed = bool(parsed)
            elif kind in ("int", "float"):
                if _is_bool(value):  # True is not the number 1 to a user
                    raise ValueError(value)
                number = float(value) if isinstance(value, str) else value
                if kind == "int":
                    if isinstance(number, float) and not number.is_integer():
                        raise ValueError(value)
                    parsed = int(number)
                else:
                    parsed = float(number)
                    if math.isnan(parsed):
                        raise ValueError(value)
            elif kind == "text" and self.default is not None:
                parsed = str(value)
        except (TypeError, ValueError, OverflowError):
            what = {"bool": "true or false", "int": "a whole number", "float": "a number"}[kind]
            raise InputError(f"option {self.name} must be {what}, not {_shown(value)}") from None
        if kind == "choice" and parsed not in self.choices:
            raise InputError(f"option {self.name} must be one of {', '.join(map(str, self.choices))}, "
                             f"not {_shown(value)}")
        if kind in ("int", "float") and not self._in_range(parsed):
            wanted = self.range_text()
            if math.isinf(parsed) and (self.high is None or abs(self.high) >= UNBOUNDED):
                # "at least 0" alone reads as if inf should pass
                wanted = "a finite number" + (f", {wanted}" if wanted else "")
            raise InputError(f"option {self.name} must be {wanted}, not {_shown(value)}")
        return parsed

    def _in_range(self, value) -> bool:
        if math.isinf(value) and not (self.high is not None and math.isinf(self.high) and value > 0):
            return False
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        return self.high is None or value <= self.high


def _is_bool(value) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"  # numpy's, without importing numpy


def _shown(value) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class Algorithm:
    name: str
    problem_kinds: tuple[str, ...]  # kinds it solves: "matching", "flow", "assignment", "points" (point sets)
    accepts: tuple[type, ...]        # problem classes it takes directly (others are converted if possible)
    backends: tuple[str, ...]
    runner: str                      # "module:function"
    options: tuple[Option, ...] = ()
    label: str = ""                  # what its "labels" snapshots hold
    summary: str = ""
    reference: str = ""              # paper or library it implements
    compiled: bool = True            # runs numba-compiled code: front ends warm it up before a timed run
    interruptible: bool = True       # Stop is answered during the run (not so for one call into scipy)
    phases: tuple[str, ...] = ()     # the iteration phases its telemetry reports (empty: start and end only)
    # backends on which it checks a large integer matrix in the pass that uploads it, so solvers.solve
    # hands that matrix over unchecked (CostMatrix.check_pending) instead of reading it twice
    checks_on_upload: tuple[str, ...] = ()
    # sizes at which its compiled steps change (the auction: where its tails start, on the cpu and on
    # a GPU): a cost problem or point series with more rows than one of them warms up on one row
    # more than the largest such size, so the steps beyond it compile in the warm-up too
    warmup_rows: tuple[int, ...] = ()
    # options (name, value) added to that larger warm-up, so that it takes the steps its data might
    # not reach (the auction: no tail, Jacobi rounds to the end, forward and reverse)
    warmup_past_options: tuple[tuple[str, object], ...] = ()

    @property
    def tracks_points(self) -> bool:
        """Whether it can link the frames of a point series (an assignment or point-set solver)."""
        return "assignment" in self.problem_kinds or "points" in self.problem_kinds

    def run_function(self):
        module, _, func = self.runner.partition(":")
        return getattr(importlib.import_module(module), func)

    def parse_options(self, given: dict) -> dict:
        known = {o.name: o for o in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            names = ", ".join(known) or "none"
            raise InputError(f"{self.name} has no option {unknown[0]} (its options: {names})")
        return {name: opt.parse(given[name]) if name in given else opt.default for name, opt in known.items()}


_REGISTRY: dict[str, Algorithm] | None = None


def _discover() -> dict[str, Algorithm]:
    found: dict[str, Algorithm] = {}
    for name in DECLARING_MODULES:
        for algo in importlib.import_module(name).ALGORITHMS:
            if algo.name in found:
                raise RuntimeError(f"algorithm {algo.name} is registered twice")
            found[algo.name] = algo
    return dict(sorted(found.items()))


def algorithms() -> dict[str, Algorithm]:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _discover()
    return _REGISTRY


def get(name: str) -> Algorithm:
    algos = algorithms()
    if name not in algos:
        raise InputError(f"there is no algorithm called {name}; choose from {', '.join(algos)}")
    return algos[name]


def for_problem(problem) -> list[Algorithm]:
    """Algorithms that can take this problem (directly or by conversion)."""
    return [a for a in algorithms().values() if problem.kind in a.problem_kinds or isinstance(problem, a.accepts)]
