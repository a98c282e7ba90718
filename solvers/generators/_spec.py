"""Declared generator parameters and their checking (types, ranges, unknown and missing names)."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Callable

from ._common import input_error

REQUIRED = ...  # the default of a parameter that must be given (the CLI reads Ellipsis as required)

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True)
class Param:
    """One generator parameter: its type (int, float or bool), default, help line and range."""

    name: str
    type: type
    default: object
    help: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    optional: bool = False  # None is allowed (and means "the documented fallback")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def convert(self, value, kind: str):
        """The checked value, or an InputError naming the kind, the parameter and what it needs."""
        where = f"{kind}: parameter {self.name}"
        if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
            if self.optional:
                return None
            raise input_error(f"{where} needs a value, got None")
        if self.type is bool:
            return self._to_bool(value, where)
        number = self._to_number(value, where)
        self._check_range(number, where)
        return number

    def _to_bool(self, value, where: str) -> bool:
        if isinstance(value, str):
            low = value.strip().lower()
            if low in _TRUE or low in _FALSE:
                return low in _TRUE
        elif isinstance(value, numbers.Integral) and int(value) in (0, 1):
            return bool(value)
        raise input_error(f"{where} must be true or false, got {value!r}")

    def _to_number(self, value, where: str):
        wanted = "an integer" if self.type is int else "a number"
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
            raise input_error(f"{where} must be {wanted}, got {value!r}")
        if isinstance(value, str):
            try:
                value = float(value) if self.type is float else _parse_int(value)
            except ValueError:
                raise input_error(f"{where} must be {wanted}, got {value!r}") from None
        if self.type is int:
            if isinstance(value, numbers.Integral):
                return int(value)
            if math.isfinite(value) and float(value).is_integer():
                return int(value)
            raise input_error(f"{where} must be {wanted}, got {value!r}")
        value = float(value)
        if not math.isfinite(value):
            raise input_error(f"{where} must be a finite number, got {value!r}")
        return value

    def _check_range(self, value, where: str) -> None:
        low, high = self.minimum, self.maximum
        if low is not None and (value <= low if self.exclusive_minimum else value < low):
            raise input_error(f"{where} must be {'>' if self.exclusive_minimum else '>='} {low:g}, got {value!r}")
        if high is not None and value > high:
            raise input_error(f"{where} must be <= {high:g}, got {value!r}")


def _parse_int(text: str) -> int:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        as_float = float(text)  # "1e6" or "3.0" are fine when integral
        if math.isfinite(as_float) and as_float.is_integer():
            return int(as_float)
        raise


@dataclass(frozen=True)
class GeneratorKind:
    """One entry of KINDS: what ``generate(name, ...)`` builds and from which family."""

    name: str
    function: Callable
    problem: str  # "matching", "flow", "assignment" or "points"
    summary: str
    family: str  # the source family it imitates, citing the paper / collection
    params: dict[str, Param] = field(default_factory=dict)

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params.values() if not p.required}

    def check(self, given: dict) -> dict:
        """The full, converted keyword set for ``function``; InputError on anything wrong."""
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            raise input_error(f"{self.name}: unknown parameter {', '.join(unknown)}; "
                              f"allowed: {', '.join(self.params)}")
        missing = [p.name for p in self.params.values() if p.required and p.name not in given]
        if missing:
            raise input_error(f"{self.name}: missing required parameter {', '.join(missing)}; "
                              f"allowed: {', '.join(self.params)}")
        return {name: p.convert(given[name], self.name) if name in given else p.default
                for name, p in self.params.items()}

    def __getitem__(self, key: str):
        """Mapping-style access (entry["params"]) for callers that treat entries as dicts."""
        return getattr(self, key)


SEED = Param("seed", int, 0, "random seed; the same seed gives the same instance", minimum=0)


@dataclass(frozen=True)
class BatchKind:
    """One entry of BATCH_KINDS: a kind that builds a batch of problems (an array, or a list of
    them, for solvers.solve_batch) rather than one Problem, so generate() does not make it."""

    name: str
    function: Callable
    summary: str
