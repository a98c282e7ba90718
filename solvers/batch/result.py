"""BatchResult: the answers of a batch, each item in its own orientation, with its certificate."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .certify_batch import INFEASIBLE_PROVEN, PROVEN, explain


@dataclass(eq=False)
class BatchResult:
    """Per item b: ``values[b]`` (the assignment's cost; nan when infeasible), ``assignments[b]``
    (the column of each row, -1 for a row left unassigned when the item has more rows than
    columns), duals ``u[b]`` (rows) and ``v[b]`` (columns), ``iterations[b]``, ``certified[b]`` and
    ``status[b]`` (plain words: "certified optimal", "infeasible: ...", or "not certified: why").

    A regular batch (one (B, n, m) array) gives (B, n) / (B, m) arrays, a ragged batch lists of
    arrays. ``infeasible[b]``: the allowed pairs cannot assign every row (nor every column, for a
    tall item), confirmed by the certificate; its assignment is then -1 in every row. ``gaps``: the
    proven bound on value - optimum (nan where none was computed), ``tolerances`` the allowance it
    was held to. ``seconds``: ``pack``
    (validation and packing; on the cuda backend the upload of host costs too, made by the same
    pass), ``solve``, ``certify`` and ``total``; when a regular batch from host costs started solving
    on the GPU while it went up, ``solve`` runs from its first launch and ``overlap`` is the part of it
    inside ``pack``; ``backend`` where it ran;
    ``item_seconds[b]``: item b's own solve time, where the backend measures it (NaN where not)."""
    values: np.ndarray
    assignments: object
    u: object
    v: object
    iterations: np.ndarray
    certified: np.ndarray
    infeasible: np.ndarray
    status: list
    gaps: np.ndarray
    tolerances: np.ndarray
    backend: str
    seconds: dict = field(default_factory=dict)
    item_seconds: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.values.size)

    @property
    def all_certified(self) -> bool:
        """Every item proven: optimal, or infeasible."""
        return bool(np.all(self.certified | self.infeasible))

    def summary(self) -> dict:
        """A short plain-language account: counts, total cost, times."""
        count = len(self)
        optimal = int(self.certified.sum())
        infeasible = int(self.infeasible.sum())
        failed = count - optimal - infeasible
        parts = [f"{count} problems: {optimal} certified optimal"]
        if infeasible:
            parts.append(f"{infeasible} infeasible")
        if failed:
            first = int(np.flatnonzero(~(self.certified | self.infeasible))[0])
            parts.append(f"{failed} not certified (first: item {first}, {self.status[first]})")
        text = ", ".join(parts) + f"; solved on {self.backend} in {self.seconds.get('solve', 0.0):.3g} s, " \
                                  f"certified in {self.seconds.get('certify', 0.0):.3g} s"
        finite = self.values[np.isfinite(self.values)]
        return {"problems": count, "certified": optimal, "infeasible": infeasible, "not_certified": failed,
                "total_cost": float(finite.sum()) if finite.size else 0.0, "backend": self.backend,
                "seconds": dict(self.seconds), "text": text}

    def __str__(self) -> str:
        return self.summary()["text"]


def _split(flat: np.ndarray, offsets: np.ndarray) -> list:
    return np.split(flat, offsets[1:-1]) if offsets.size > 1 else []


def unpack(batch, solution, checked, backend: str, seconds: dict) -> BatchResult:
    """The BatchResult of a PackedSolution and its certificate (certify_batch.certify_packed), each
    item turned back to its own orientation."""
    packed = batch.packed
    count = packed.size
    row_to_col = np.asarray(solution.row_to_col, dtype=np.int64)
    u_flat = np.asarray(solution.u, dtype=np.float64)
    v_flat = np.asarray(solution.v, dtype=np.float64)
    shapes = batch.shapes
    n_orig = shapes[:, 0] if count else np.zeros(0, dtype=np.int64)
    m_orig = shapes[:, 1] if count else np.zeros(0, dtype=np.int64)
    if not packed.transposed.any():  # every item as given: the packed answer is already in place
        orig_row_off, orig_col_off = packed.row_offsets, packed.col_offsets
        assign, u_out, v_out = row_to_col, u_flat, v_flat
    elif batch.regular and count:  # every item tall, stored transposed: its duals swap, its answer inverts
        n, m = batch.item_shape
        orig_row_off, orig_col_off = packed.col_offsets, packed.row_offsets
        u_out, v_out = v_flat, u_flat
        oriented = row_to_col.reshape(count, m)
        inverse = np.full((count, n + 1), -1, dtype=np.int64)  # column n takes the -1s of infeasible items
        np.put_along_axis(inverse, np.where(oriented >= 0, oriented, n),
                          np.broadcast_to(np.arange(m, dtype=np.int64), (count, m)), axis=1)
        inverse[:, n] = -1
        assign = np.ascontiguousarray(inverse[:, :n]).reshape(-1)
    else:
        orig_row_off, orig_col_off, assign, u_out, v_out = _turned_back(packed, row_to_col, u_flat, v_flat,
                                                                        n_orig, m_orig)

    reason = checked["reason"]
    certified = reason == PROVEN
    infeasible = reason == INFEASIBLE_PROVEN
    values = checked["value"].copy()  # recomputed by the certificate; nan where no assignment was checked
    values[infeasible] = np.nan
    if infeasible.any():  # the search stopped partway: its pairs are no answer, so none is given
        assign = assign.copy()
        for b in np.flatnonzero(infeasible):
            assign[orig_row_off[b]:orig_row_off[b + 1]] = -1
    status = ["certified optimal"] * count
    for b in np.flatnonzero(~certified):
        code = int(reason[b])
        i, j = int(checked["at_row"][b]), int(checked["at_col"][b])
        if packed.transposed[b] and code != INFEASIBLE_PROVEN:
            i, j = j, i
        text = explain(code, i, j, float(checked["gap"][b]), float(checked["tol"][b]))
        if code == INFEASIBLE_PROVEN and packed.transposed[b]:
            text = text.replace("of the rows", "of the columns")
        status[b] = text if code == INFEASIBLE_PROVEN else f"not certified: {text}"
    if batch.regular:
        n, m = batch.item_shape
        assignments = assign.reshape(count, n)
        u_items, v_items = u_out.reshape(count, n), v_out.reshape(count, m)
    else:
        assignments = _split(assign, orig_row_off)
        u_items, v_items = _split(u_out, orig_row_off), _split(v_out, orig_col_off)
    return BatchResult(values, assignments, u_items, v_items, np.asarray(solution.iterations, dtype=np.int64),
                       certified, infeasible, status, checked["gap"], checked["tol"], backend, seconds,
                       _item_seconds(solution, count))


def _turned_back(packed, row_to_col, u_flat, v_flat, n_orig, m_orig):
    """Original row and column offsets, assignments and duals of a batch with transposed items: a
    transposed item's oriented rows are its columns, and oriented column c of oriented row r means
    original row c -> column r."""
    count = packed.size
    orig_row_off = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(n_orig, out=orig_row_off[1:])
    orig_col_off = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(m_orig, out=orig_col_off[1:])
    assign = np.full(int(orig_row_off[-1]), -1, dtype=np.int64)
    u_out = np.empty(int(orig_row_off[-1]))
    v_out = np.empty(int(orig_col_off[-1]))
    item_of_row = np.repeat(np.arange(count), packed.rows)
    local_row = np.arange(row_to_col.size) - packed.row_offsets[item_of_row]
    flipped = packed.transposed[item_of_row]
    plain = ~flipped
    assign[(orig_row_off[item_of_row] + local_row)[plain]] = row_to_col[plain]
    ok = flipped & (row_to_col >= 0)
    assign[(orig_row_off[item_of_row] + row_to_col)[ok]] = local_row[ok]
    item_of_col = np.repeat(np.arange(count), packed.cols)
    is_t_row = packed.transposed[item_of_row]
    is_t_col = packed.transposed[item_of_col]
    # u: original rows = oriented rows (plain) or oriented columns (transposed); likewise v
    u_out_pos_plain = orig_row_off[item_of_row] + local_row
    local_col = np.arange(v_flat.size) - packed.col_offsets[item_of_col]
    u_out[u_out_pos_plain[~is_t_row]] = u_flat[~is_t_row]
    u_out[(orig_row_off[item_of_col] + local_col)[is_t_col]] = v_flat[is_t_col]
    v_out[(orig_col_off[item_of_col] + local_col)[~is_t_col]] = v_flat[~is_t_col]
    v_out[(orig_col_off[item_of_row] + local_row)[is_t_row]] = u_flat[is_t_row]
    return orig_row_off, orig_col_off, assign, u_out, v_out


def _item_seconds(solution, count: int) -> np.ndarray:
    measured = getattr(solution, "seconds", None)
    if measured is None:
        return np.full(count, np.nan)
    return np.asarray(measured, dtype=np.float64).reshape(count)
