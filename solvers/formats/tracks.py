"""Exporting a tracking result (solvers.result.TrackResult): Track CSV or Track JSON, by extension.

**Track CSV** (``*.csv``, ``*.csv.gz``): header ``track,frame,index,x,y,z`` (plus ``id`` when the
series has ground-truth ids), then one row per point of a track: the track number (0-based, in
the order of ``TrackResult.tracks``), the frame, the point's index within that frame, its
coordinates and its ground-truth id. Rows are ordered by track, then frame. A track with one row is
a point linked to nothing (it entered and left at once, or stayed unmatched).

**Track JSON** (``*.json``, ``*.json.gz``): one object: ``summary`` (TrackResult.summary: frames,
links, tracks, certified, accuracy, recall, gating, max_distance, gated_pairs, unmatched, cost,
gap, solves, seconds), ``frame_stats`` (one object per frame pair, see TrackResult), ``tracks``
(a list of {"track", "frames", "indices", "points" (x, y, z per point), and "ids" with ground
truth}).

Both are written atomically (a temporary file renamed into place), like every export; ``read``
loads either back (for tests and for scripts).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..io_util import jsonable, write_refused
from ._text import format_rows, read_all, shown, write_file
from .results import written_as

EXTENSIONS = (".csv", ".json")
PATTERNS = ("*.csv", "*.csv.gz", "*.json", "*.json.gz")
CSV_COLUMNS = ("track", "frame", "index", "x", "y", "z")


def track_kind(path) -> str | None:
    """"csv" or "json" from a file name (``.gz`` allowed; no extension: CSV), None for anything else."""
    extension = written_as(path)
    return extension[1:] if extension in EXTENSIONS else None


def check_name(path) -> None:
    if track_kind(path) is None:
        raise InputError(f"tracks are written as {' '.join(PATTERNS)}; give --out one of those names", str(path))


def _columns(result, series):
    """(names, columns) of the Track CSV: one row per point of every track."""
    lengths = np.fromiter((len(tr) for tr in result.tracks), dtype=np.int64, count=len(result.tracks))
    track = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    flat = np.array([p for tr in result.tracks for p in tr], dtype=np.int64).reshape(-1, 2)
    frame, index = flat[:, 0], flat[:, 1]
    offsets = np.concatenate([[0], np.cumsum(series.sizes)]).astype(np.int64)
    xyz = np.concatenate(series.frames) if series.frames else np.zeros((0, 3))
    at = offsets[frame] + index
    names = list(CSV_COLUMNS)
    columns = [track, frame, index, xyz[at, 0], xyz[at, 1], xyz[at, 2]]
    if series.ids is not None:
        ids = np.concatenate(series.ids) if series.ids else np.zeros(0, np.int64)
        names.append("id")
        columns.append(ids[at])
    return names, columns


def _record(result, series) -> dict:
    names, columns = _columns(result, series)
    tracks = []
    start = 0
    for k, tr in enumerate(result.tracks):
        stop = start + len(tr)
        entry = {"track": k, "frames": columns[1][start:stop].tolist(), "indices": columns[2][start:stop].tolist(),
                 "points": np.column_stack([c[start:stop] for c in columns[3:6]]).tolist()}
        if "id" in names:
            entry["ids"] = columns[6][start:stop].tolist()
        tracks.append(entry)
        start = stop
    return {"format": "matchscope tracks", "summary": jsonable(result.summary),
            "frame_stats": jsonable(result.frame_stats), "tracks": tracks}


def _check_series(result, series) -> None:
    """The tracks cover every point of ``series`` exactly once (else it is another series)."""
    flat = np.array([p for tr in result.tracks for p in tr], dtype=np.int64).reshape(-1, 2)
    sizes = np.asarray(series.sizes, dtype=np.int64)
    fits = (flat.shape[0] == sizes.sum() and np.all((flat[:, 0] >= 0) & (flat[:, 0] < sizes.size))
            and np.all((flat[:, 1] >= 0) & (flat[:, 1] < sizes[np.clip(flat[:, 0], 0, max(sizes.size - 1, 0))])))
    if fits and flat.size:  # as many points as the series, each in range: now each exactly once
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        fits = np.bincount(offsets[flat[:, 0]] + flat[:, 1], minlength=int(sizes.sum())).max() == 1
    if not fits:
        raise ValueError("series= is not the point series these tracks were made from")


def save(result, path, series=None) -> None:
    """Write ``result`` (a TrackResult) as Track CSV or Track JSON, chosen by the extension.

    ``series``: the tracked PointSeries, when the result does not carry it (``result.series``)."""
    name = str(path)
    kind = track_kind(path)
    if kind is None:
        raise InputError(f"tracks are saved as {' '.join(PATTERNS)}", name)
    series = series if series is not None else getattr(result, "series", None)
    if series is None:
        raise TypeError("saving tracks needs the point series: pass series= (the series that was tracked)")
    _check_series(result, series)
    try:
        if kind == "csv":
            names, columns = _columns(result, series)
            data = (",".join(names) + "\n").encode() + format_rows(columns, sep=b",")
        else:
            data = (json.dumps(_record(result, series), indent=1) + "\n").encode()
        write_file(path, data)
    except OSError as e:
        raise write_refused(e, name) from None


@dataclass
class TrackTable:
    """Tracks read back from a Track CSV / JSON: ``tracks`` as lists of (frame, index) like
    TrackResult.tracks, ``points`` the (k, 3) coordinates of each track, ``ids`` each track's
    ground-truth ids (None without), ``summary`` (JSON only, else None)."""

    tracks: list
    points: list
    ids: list | None
    summary: dict | None = None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read(path) -> TrackTable:
    name = str(path)
    kind = track_kind(path)
    if kind is None:
        raise InputError(f"track files are {' '.join(PATTERNS)}", name)
    data = read_all(path)
    if kind == "json":
        try:
            record = json.loads(data)
            tracks = [list(zip(t["frames"], t["indices"])) for t in record["tracks"]]
            points = [np.asarray(t["points"], dtype=np.float64).reshape(-1, 3) for t in record["tracks"]]
            ids = ([np.asarray(t["ids"], dtype=np.int64) for t in record["tracks"]]
                   if record["tracks"] and "ids" in record["tracks"][0] else None)
        except KeyError as exc:  # str(KeyError) is the key's repr
            raise InputError(f"not a track JSON file (no {shown(str(exc.args[0]))} entry)", name) from None
        except json.JSONDecodeError as exc:
            raise InputError(f"not a track JSON file ({exc.msg})", name, exc.lineno) from None
        except (ValueError, TypeError):
            raise InputError("not a track JSON file (its tracks do not hold frames, indices and points)",
                             name) from None
        return TrackTable(tracks, points, ids, record.get("summary"))
    text = data.decode("utf-8", errors="replace").splitlines()  # read_all has refused binary data
    if not text:
        raise InputError("empty file: expected a track,frame,index,x,y,z header", name, 1)
    header = [h.strip() for h in text[0].split(",")]
    if header[:6] != list(CSV_COLUMNS) or header[6:] not in ([], ["id"]):
        raise InputError(f"header must be {','.join(CSV_COLUMNS)}[,id], found {shown(text[0], 60)}", name, 1)
    values = []
    for number, line in enumerate(text[1:], start=2):
        if not line.strip():
            continue
        cells = line.split(",")
        if len(cells) != len(header):
            raise InputError(f"expected {len(header)} comma-separated values, found {len(cells)}", name, number)
        try:
            values.append([float(x) for x in cells])
        except ValueError:
            bad = next(x for x in cells if not _is_number(x))
            raise InputError(f"{shown(bad.strip(), 40)} is not a number", name, number) from None
    table = np.array(values, dtype=np.float64).reshape(-1, len(header))
    track = table[:, 0].astype(np.int64)
    cut = np.flatnonzero(np.diff(track)) + 1
    tracks, points, ids = [], [], ([] if len(header) == 7 else None)
    for part in np.split(np.arange(track.size), cut) if track.size else []:
        tracks.append([(int(f), int(i)) for f, i in table[part, 1:3].astype(np.int64)])
        points.append(table[part, 3:6])
        if ids is not None:
            ids.append(table[part, 6].astype(np.int64))
    return TrackTable(tracks, points, ids)
