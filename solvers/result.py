"""What a solve returns: the solution, its value, how it ran, and an independent certificate."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Certificate:
    """Proof (or refutation) of a result, computed by solvers.certify independently of the solver.

    ``valid``: the solution is feasible (a matching, a flow, an assignment of the required size).
    ``optimal``: the witness proves optimality within ``tolerance``; ``gap`` is the proven bound
    on (value - optimum) for minimisation, (optimum - value) for maximisation; 0 for exact.
    ``witness`` holds the proof's arrays (König cover, cut side, dual potentials).
    """

    kind: str  # "konig-cover" | "min-cut" | "dual-potentials"
    valid: bool
    optimal: bool
    gap: float = 0.0
    tolerance: float = 0.0
    details: str = ""
    witness: dict = field(default_factory=dict)

    @property
    def certified(self) -> bool:
        return self.valid and self.optimal

    def summary(self) -> str:
        state = "certified" if self.certified else ("valid, not proven optimal" if self.valid else "INVALID")
        gap = f", gap {self.gap:g}" if self.gap else ""
        return f"{self.kind}: {state}{gap}" + (f" ({self.details})" if self.details else "")


@dataclass(frozen=True)
class Result:
    """A solver's answer.

    matching / assignment: ``row_match[r]`` is the column matched to row r (-1 if none) and
    ``col_match[c]`` the row matched to column c. flow: ``flow[e]`` is the flow on edge e of the
    FlowNetwork (input order). ``duals`` (assignment) maps "u"/"v" to row/column potentials when
    the solver has them. ``stats`` holds algorithm counters (loops, global relabels, ...).
    """

    problem_kind: str
    algorithm: str
    backend: str
    value: float
    iterations: int
    seconds: float
    certificate: Certificate
    row_match: np.ndarray | None = None
    col_match: np.ndarray | None = None
    flow: np.ndarray | None = None
    duals: dict | None = None
    stats: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)

    @property
    def certified(self) -> bool:
        return self.certificate.certified

    def pairs(self) -> np.ndarray:
        """(k, 2) array of matched (row, col) pairs, sorted by row."""
        if self.row_match is None:
            raise ValueError("this result has no matching")
        rows = np.flatnonzero(self.row_match >= 0)
        return np.column_stack([rows, self.row_match[rows]]).astype(np.int64)

    def summary(self) -> dict:
        """The JSON-able record the CLI prints and the compare table shows."""
        return {"problem": self.problem_kind, "algorithm": self.algorithm, "backend": self.backend,
                "value": float(self.value), "certified": bool(self.certified),
                "seconds": float(self.seconds), "iterations": int(self.iterations),
                "gap": float(self.certificate.gap), "certificate": self.certificate.summary(),
                "options": {k: v for k, v in self.options.items()},
                "stats": {k: (v.item() if isinstance(v, np.generic) else v) for k, v in self.stats.items()
                          if isinstance(v, (int, float, str, bool, np.generic))}}


@dataclass(frozen=True)
class Solution:
    """What a runner hands back to solvers.solve before certification and timing are attached."""

    value: float
    iterations: int
    row_match: np.ndarray | None = None
    col_match: np.ndarray | None = None
    flow: np.ndarray | None = None
    duals: dict | None = None
    epsilon: float = 0.0  # for epsilon-optimal assignment solvers: the epsilon of complementary slackness
    stats: dict = field(default_factory=dict)
