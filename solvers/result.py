"""What a solve returns: the solution, its value, how it ran, and an independent certificate."""
from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .text import duration, number  # the command line's words for the same values

if TYPE_CHECKING:
    from .problems import PointSeries


class Witness(Mapping):
    """A certificate's witness whose large listings are made when first read: ``fixed`` entries as
    given, and each ``listed`` entry (a function of nothing) called once, on the first read of its
    key (a König cover's row and column indices: a pass over each side of a graph that the check
    itself does not need, 7 ms on a 3M-row graph). Pickled (to another process) with every entry
    made."""

    def __init__(self, fixed: dict, listed: dict[str, Callable[[], object]]):
        self._values = dict(fixed)
        self._pending = {k: v for k, v in listed.items() if k not in self._values}
        self._lock = threading.Lock()

    def __getitem__(self, key):
        with self._lock:
            make = self._pending.pop(key, None)
            if make is not None:
                self._values[key] = make()
        return self._values[key]

    def __iter__(self):
        with self._lock:
            return iter([*self._values, *self._pending])

    def __len__(self) -> int:
        with self._lock:
            return len(self._values) + len(self._pending)

    def __reduce__(self):
        return Witness, ({key: self[key] for key in self}, {})

    def __repr__(self) -> str:
        return f"Witness({sorted(self)})"


@dataclass(frozen=True)
class Certificate:
    """Proof (or refutation) of a result, computed by solvers.certify independently of the solver.

    ``valid``: the solution is feasible (a matching, a flow, an assignment of the required size).
    ``optimal``: the witness proves optimality within ``tolerance``; ``gap`` is the proven bound
    on (value - optimum) for minimisation, (optimum - value) for maximisation; 0 for exact.
    ``bound``: the gap the run itself claims: 0 for a run that claims an optimum, n * epsilon for an
    epsilon-optimal auction run (epsilon-complementary slackness leaves at most that).
    ``witness`` holds the proof's arrays (König cover, cut side, dual potentials).
    ``reason``: what proves it (or why it is not proven), in a few plain words for people;
    ``details`` keeps the technical notes (which duals were tried, and why they failed).

    Certified (``certified``): valid, and either proven optimal, or, for a run that claims only a
    gap (bound > 0), proven within that claim: gap <= bound + tolerance. ``status`` names which:
    "optimal", "within-gap", "not-proven" or "invalid".
    """

    kind: str  # "konig-cover" | "min-cut" | "dual-potentials"
    valid: bool
    optimal: bool
    gap: float = 0.0
    tolerance: float = 0.0
    details: str = ""
    witness: Mapping = field(default_factory=dict)
    bound: float = 0.0
    reason: str = ""

    @property
    def within_bound(self) -> bool:
        """Valid and proven within the gap the run claims (an epsilon-run), though not optimal."""
        return (self.valid and not self.optimal and self.bound > 0
                and self.gap <= self.bound + self.tolerance)

    @property
    def certified(self) -> bool:
        return self.valid and (self.optimal or self.within_bound)

    @property
    def status(self) -> str:
        if not self.valid:
            return "invalid"
        if self.optimal:
            return "optimal"
        return "within-gap" if self.within_bound else "not-proven"

    def summary(self) -> str:
        status = self.status
        if status == "optimal":
            state = "certified optimal" + (f", gap {self.gap:g}" if self.gap else "")
        elif status == "within-gap":
            state = (f"certified within gap {self.gap:g} of optimal; "
                     f"the run claims at most {self.bound:g}")
        elif status == "not-proven":
            state = "valid, not proven optimal" + (f", gap {self.gap:g}" if self.gap else "")
            if self.bound > 0:
                state += f", more than the {self.bound:g} the run claims"
        else:
            state = "INVALID"
        why = self.reason or self.details
        return f"{self.kind}: {state}" + (f" ({why})" if why else "")

    def __str__(self) -> str:
        return self.summary()


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

    @property
    def exact_value(self) -> float | int:
        """The value, as the exact integer the certificate recomputed when a float would round it
        (flow values past 2^53); a matching's size and a flow's value, counts, as integers (189,
        not 189.0, in the JSON); an assignment's cost as a float."""
        value = self.certificate.witness.get("value")
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2 ** 53:
            return value
        if self.problem_kind in ("matching", "flow") and float(self.value).is_integer():
            return int(self.value)
        return float(self.value)

    def pairs(self) -> np.ndarray:
        """(k, 2) array of matched (row, col) pairs, sorted by row."""
        if self.row_match is None:
            raise ValueError("this result has no matching")
        rows = np.flatnonzero(self.row_match >= 0)
        return np.column_stack([rows, self.row_match[rows]]).astype(np.int64)

    def __str__(self) -> str:
        """One plain line (``print(result)``): what was solved and how, the value, the proof."""
        return (f"{self.problem_kind} solved by {self.algorithm} on {self.backend} in {duration(self.seconds)}: "
                f"value {number(self.exact_value)}; {self.certificate.summary()}")

    def summary(self) -> dict:
        """The JSON-able record the CLI prints and the compare table shows."""
        return {"problem": self.problem_kind, "algorithm": self.algorithm, "backend": self.backend,
                "value": self.exact_value, "certified": bool(self.certified),
                "seconds": float(self.seconds), "iterations": int(self.iterations),
                "gap": float(self.certificate.gap), "optimal": bool(self.certificate.optimal),
                "bound": float(self.certificate.bound), "certificate": self.certificate.summary(),
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
    # a GPU assignment solver's device copy of the costs (the problem's layout or its transpose;
    # float64, or float32 holding them exactly): the certificate checks the duals there, after
    # checking that it still holds the problem's costs (solvers.certify_device)
    device_costs: object = None
    # a GPU matching solver's device copy (row_ptr, col_ind) of the graph's rows' lists: the
    # certificate's passes run there, after checking that it still holds the graph (solvers.konig_device)
    device_graph: object = None
    # and its device copy (row_match, col_match) of the matching it handed back: the certificate's
    # passes read it there, after checking that it still holds the host's answer
    device_matching: object = None
    # the solve ran on a GPU: checks that can run there do (the point certificate's pair scan
    # uploads its own copy of the points; nothing of the solver's is read there)
    on_gpu: bool = False


@dataclass
class TrackResult:
    """``links[t]``: (k, 2) array of (index in frame t, index in frame t+1). ``tracks``: each a
    list of (frame, index), in frame order. ``frame_stats[t]``: per frame pair: frame, points,
    next_points, matched, unmatched, cost (sum of link distances), gated, max_distance (gate of
    the problem solved, None for the plain assignment), objective (value of the problem solved:
    cost + max_distance * unmatched when gated), certified, status (the worst of its solves:
    optimal, within-gap, not-proven, invalid), gap (proven bound on objective - optimum, summed
    over its solves), bound (the gap its solves claim, n * eps for auction eps-runs), certificate
    (a summary), blocks (solves the links come from), solves (all made for the pair, the plain
    one included), seconds (the algorithm's time in all of them, as Result.seconds: certifying
    not counted), solve_seconds (that of the solves the links come from), algorithm, backend, and
    with ground truth correct, true_links, accuracy (correct / matched) and recall (correct /
    true_links).
    ``accuracy``: correct links / links over the whole series (None without ground truth).
    ``max_distance``: the gate used (None: none); ``gating``: "auto", "fixed" or "off".
    ``series``: the tracked PointSeries (for exports)."""

    tracks: list = field(repr=False)  # printed, a result shows its accuracy, gate and summary, not its arrays
    links: list = field(repr=False)
    frame_stats: list = field(repr=False)
    accuracy: float | None = None
    summary: dict = field(default_factory=dict)
    max_distance: float | None = None
    gating: str = "off"
    series: PointSeries | None = field(default=None, repr=False)

    @property
    def certified(self) -> bool:
        return all(s["certified"] for s in self.frame_stats)

    @property
    def seconds(self) -> float:
        """The algorithm's time over every frame pair's solves (as Result.seconds: no compiling,
        no certifying)."""
        return float(sum(s["seconds"] for s in self.frame_stats))

    def __str__(self) -> str:
        """One plain line (``print(tracks)``): frames, links, tracks, the proof of every pair."""
        pairs = len(self.frame_stats)
        proven = sum(bool(s["certified"]) for s in self.frame_stats)
        algorithms = sorted({str(s.get("algorithm")) for s in self.frame_stats if s.get("algorithm")})
        text = (f"{self.summary.get('frames', pairs + 1)} frames, {self.summary.get('links', 0)} links in "
                f"{self.summary.get('tracks', len(self.tracks))} tracks; {proven} of {pairs} frame pairs certified")
        if algorithms:
            text += f" ({', '.join(algorithms)})"
        if self.accuracy is not None:
            text += f"; accuracy {self.accuracy:.4g}"
        return text

    def track_through(self, frame: int, index: int) -> list:
        """The track through point ``index`` of ``frame``: (frame, index) in frame order."""
        return self.tracks[int(self.point_tracks()[frame][index])]

    def point_tracks(self) -> list:
        """The track id of every point, frame by frame (numbered as ``tracks``), made once."""
        cached = self.__dict__.get("_point_tracks")
        if cached is None:
            from .tracking import point_tracks
            if self.series is not None:
                sizes = self.series.sizes
            else:  # every point is on one track: the tracks count each frame's points
                frames = [frame for track in self.tracks for frame, _ in track]
                sizes = np.bincount(frames, minlength=len(self.links) + 1).tolist() if frames else []
            cached = self.__dict__["_point_tracks"] = point_tracks(sizes, self.links)
        return cached
