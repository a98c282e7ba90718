"""Algorithm registry: name -> problem kinds, backends, declared options and a lazily imported runner.

Each module under solvers/matching, solvers/flow and solvers/assignment (other than *_kernels)
may define ``ALGORITHMS = [Algorithm(...), ...]``; the registry discovers them. A runner is
"module:function" with the signature ``run(problem, backend, tel, **options) -> Solution``; it is
imported only when the algorithm runs, so listing algorithms compiles nothing.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any

from .errors import InputError

FAMILIES = ("matching", "flow", "assignment")


@dataclass(frozen=True)
class Option:
    name: str
    default: Any
    choices: tuple | None = None
    help: str = ""

    def parse(self, value) -> Any:
        """Convert a CLI/GUI value to the default's type and check it against the choices."""
        kind = type(self.default)
        try:
            if isinstance(value, str) and kind is bool:
                if value.lower() not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError(value)
                parsed = value.lower() in ("1", "true", "yes", "on")
            elif self.default is None or isinstance(value, kind):
                parsed = value
            else:
                parsed = kind(value)
        except (TypeError, ValueError):
            raise InputError(f"option {self.name}={value!r} is not a {kind.__name__}", "<options>") from None
        if self.choices is not None and parsed not in self.choices:
            raise InputError(f"option {self.name}={parsed!r}: choose from {', '.join(map(str, self.choices))}",
                             "<options>")
        return parsed


@dataclass(frozen=True)
class Algorithm:
    name: str
    problem_kinds: tuple[str, ...]  # result kinds it solves: "matching", "flow", "assignment"
    accepts: tuple[type, ...]        # problem classes it takes directly (others are converted if possible)
    backends: tuple[str, ...]
    runner: str                      # "module:function"
    options: tuple[Option, ...] = ()
    label: str = ""                  # what its "labels" snapshots hold
    summary: str = ""
    reference: str = ""              # paper or library it implements

    def run_function(self):
        module, _, func = self.runner.partition(":")
        return getattr(importlib.import_module(module), func)

    def parse_options(self, given: dict) -> dict:
        known = {o.name: o for o in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            names = ", ".join(known) or "none"
            raise InputError(f"{self.name} has no option {unknown[0]!r} (options: {names})", "<options>")
        return {name: opt.parse(given[name]) if name in given else opt.default for name, opt in known.items()}


_REGISTRY: dict[str, Algorithm] | None = None


def _discover() -> dict[str, Algorithm]:
    found: dict[str, Algorithm] = {}
    for family in FAMILIES:
        package = importlib.import_module(f"{__package__}.{family}")
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.endswith("_kernels") or info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for algo in getattr(module, "ALGORITHMS", ()):
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
        raise InputError(f"unknown algorithm {name!r}; known: {', '.join(algos)}", "<options>")
    return algos[name]


def for_problem(problem) -> list[Algorithm]:
    """Algorithms that can take this problem (directly or by conversion)."""
    return [a for a in algorithms().values() if problem.kind in a.problem_kinds or isinstance(problem, a.accepts)]
