"""File formats: ``load(path, problem=None, **options)`` and ``save(obj, path, **options)``.

The format is chosen by file name (extension, ``.gz`` for text formats, KONECT's ``out.*``) or
forced with ``format=KEY``. ``problem`` ("matching", "flow", "assignment", "points") picks the
interpretation where a format can mean several (Matrix Market, KONECT, ``.csv``); ``options``
go to the format's reader (Matrix Market: ``source=``, ``sink=``; SNAP / KONECT: ``n_rows=``,
``n_cols=``) or, for a Result, to solvers.formats.results.save (``problem=``).

Every failure caused by the file (missing, unreadable, malformed, absurdly large) raises
solvers.errors.InputError naming the path and, where one line is at fault, its 1-based number;
so does an option the chosen format does not take, and a name the system refuses (too long, a
missing folder). ``FORMATS`` lists the readable formats; ``file_filters()`` gives Qt dialog
filter strings.

Hostile files: memory and time follow the bytes a file holds, never the sizes it declares.
- A declared size is checked before anything is allocated: against memory (io_util.
  check_allocation), and against the bytes present where they are known (a .npy's data against
  the file size, a PLY element's rows against the bytes after the header, a .npz member against
  its stated size; compressed data is read in blocks into buffers that grow with what arrives).
- Declared counts far beyond what the data can fill are refused with one line at the line that
  declares them (io_util.check_declared_beyond_data): empty rows, columns and vertices are legal
  (isolated vertices), but at most 2^22 more than the entries can touch, and at most 2^16 frames
  more than the points (points.EMPTY_FRAMES). Each costs memory, and a frame a solve, while
  holding nothing, so a 75-byte .mtx declaring 100000000 x 100000000 with one entry, or a
  two-point series whose last frame is 20000000, is refused rather than built. Sizes a file
  implies by its ids (a SNAP id of 10^9) follow the same rule.
- Text is read in bounded blocks; a line longer than 16 MiB is refused with its number, and
  comment lines are not kept beyond the few a format needs.
"""
from __future__ import annotations

import inspect
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import InputError
from ..problems import PROBLEM_KINDS
from ..result import Result
from . import dense, dimacs, edgelists, matrix_market, points, results, tracks
from ._text import read_progress, shown  # noqa: F401  (read_progress is public: progress of long loads)


@dataclass(frozen=True)
class Format:
    key: str                      # for format=KEY
    name: str
    extensions: tuple[str, ...]
    problems: tuple[str, ...]     # what load() can make of it; the first is the default
    description: str
    read: Callable | None         # read(path, problem=None, **options) -> Problem
    write: Callable | None        # write(obj, path) (results: save(result, path, problem=None))
    saves: tuple[str, ...] = ()   # class names write() takes
    gzip: bool = False            # also readable / writable gzip-compressed as NAME.EXT.gz
    prefixes: tuple[str, ...] = ()  # file-name prefixes that mean this format (KONECT "out.")
    sniff: Callable | None = None   # among formats sharing an extension: does the file look like this one?

    @property
    def patterns(self) -> tuple[str, ...]:
        found = [f"*{e}" for e in self.extensions]
        if self.gzip:
            found += [f"*{e}.gz" for e in self.extensions]
        return tuple(found + [f"{p}*" for p in self.prefixes])

    def file_filter(self) -> str:
        return f"{self.name} ({' '.join(self.patterns)})"

    def option_names(self) -> tuple[str, ...]:
        """The keyword options its reader takes (load(path, NAME=...))."""
        if self.read is None:
            return ()
        return tuple(n for n in inspect.signature(self.read).parameters if n not in ("path", "problem"))

    def save_option_names(self) -> tuple[str, ...]:
        """The keyword options its writer takes (save(obj, path, NAME=...))."""
        if self.write is None:
            return ()
        return tuple(list(inspect.signature(self.write).parameters)[2:])


_GRAPH, _COSTS, _DENSE, _FLOW, _POINTS = "BipartiteGraph", "SparseCosts", "CostMatrix", "FlowNetwork", "PointSeries"

FORMATS: list[Format] = [
    Format("mtx", "Matrix Market", (".mtx",), ("matching", "assignment", "flow"),
           "Sparse matrix, coordinate pattern/integer/real, general or symmetric: a bipartite graph "
           "(entries are edges), sparse assignment costs, or a square flow network's capacities.",
           matrix_market.read, matrix_market.write, (_GRAPH, _COSTS, _DENSE, _FLOW), gzip=True),
    Format("snap", "SNAP edge list", (".txt", ".edges", ".snap"), ("matching",),
           "'u v' per line, 0-based, '#' comments: sources are rows, targets columns.",
           edgelists.read_snap, edgelists.write_snap, (_GRAPH,), gzip=True),
    Format("konect", "KONECT bipartite network", (".tsv",), ("matching", "assignment"),
           "'% bip' header, 1-based 'u v [weight [time]]' per line; the weight can be an assignment cost.",
           edgelists.read_konect, edgelists.write_konect, (_GRAPH, _COSTS), gzip=True, prefixes=("out.",)),
    Format("dimacs-max", "DIMACS max flow", (".max",), ("flow",),
           "DIMACS maximum-flow problem: 'p max N M', source/sink 'n' lines, 'a U V CAP' arcs.",
           dimacs.read_max, dimacs.write_max, (_FLOW,), gzip=True),
    Format("dimacs-asn", "DIMACS assignment", (".asn",), ("assignment",),
           "DIMACS assignment problem: 'p asn N M', 'n ID' source-side nodes, 'a U V COST' arcs.",
           dimacs.read_asn, dimacs.write_asn, (_COSTS, _DENSE), gzip=True),
    Format("npy", "NumPy cost matrix", (".npy",), ("assignment",),
           "Dense 2-D numeric array; inf forbids a pair.", dense.read_npy, dense.write_npy, (_DENSE, _COSTS),
           gzip=True),
    Format("csv-points", "CSV point series", (".csv",), ("points",),
           "Header with x,y,z and optionally frame and id columns; one point per line.",
           points.read_csv, points.write_csv, (_POINTS,), gzip=True, sniff=points.looks_like_points_csv),
    Format("csv-matrix", "CSV cost matrix", (".csv",), ("assignment",),
           "Dense numeric matrix, one row per line; an empty cell or inf forbids a pair.",
           dense.read_csv, dense.write_csv, (_DENSE, _COSTS), gzip=True),
    Format("xyz", "XYZ points", (".xyz",), ("points",), "One frame: 'x y z' per line.",
           points.read_xyz, points.write_xyz, (_POINTS,), gzip=True),
    Format("ply", "PLY points", (".ply",), ("points",),
           "Vertices with x, y, z and optional integer frame and id properties.",
           points.read_ply, points.write_ply, (_POINTS,)),
    Format("npz", "NumPy point series", (".npz",), ("points",),
           "Arrays points (N,3), frame_ptr (T+1,) and optional ids (N,).",
           points.read_npz, points.write_npz, (_POINTS,)),
]

RESULT_FORMATS: list[Format] = [
    Format("result-csv", "Result CSV", (".csv",), ("matching", "assignment", "flow"),
           "row,col[,cost] per matched pair; tail,head,capacity,flow per edge for a flow.",
           None, results.save, ("Result",), gzip=True),
    Format("result-json", "Result JSON", (".json",), ("matching", "assignment", "flow"),
           "The result summary plus its pairs or per-edge flows.", None, results.save, ("Result",), gzip=True),
    Format("result-mtx", "Result Matrix Market", (".mtx",), ("matching", "assignment", "flow"),
           "Pattern matrix of the matched pairs, or integer matrix of flows per vertex pair.",
           None, results.save, ("Result",), gzip=True),
    Format("track-csv", "Track CSV", (".csv",), ("points",),
           "The tracks of a point series: track,frame,index,x,y,z[,id], one row per point of a track.",
           None, tracks.save, ("TrackResult",), gzip=True),
    Format("track-json", "Track JSON", (".json",), ("points",),
           "The tracks of a point series with the tracking summary and per-frame-pair statistics.",
           None, tracks.save, ("TrackResult",), gzip=True),
]

_BY_KEY = {f.key: f for f in FORMATS + RESULT_FORMATS}

# what users read for the objects save() takes (never a class name)
_PLAIN_KINDS = {_GRAPH: "bipartite graph", _COSTS: "sparse cost matrix", _DENSE: "cost matrix",
                _FLOW: "flow network", _POINTS: "point series", "Result": "result",
                "TrackResult": "tracking result"}


def _split_name(path) -> tuple[str, bool]:
    name = Path(path).name.lower()
    return (name[:-3], True) if name.endswith(".gz") else (name, False)


def _named(path, table: list[Format]) -> list[Format]:
    base, _ = _split_name(path)
    by_extension = [f for f in table if any(base.endswith(e) for e in f.extensions)]
    return by_extension or [f for f in table if any(base.startswith(p) for p in f.prefixes)]


def _known_extensions(table: list[Format]) -> str:
    return " ".join(dict.fromkeys(p for f in table for p in f.patterns))


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _extension_choices(table: list[Format]) -> str:
    """".max or .mtx (add .gz to compress)": the extensions of ``table``, in plain words."""
    extensions = list(dict.fromkeys(e for f in table for e in f.extensions))
    compressible = list(dict.fromkeys(e for f in table if f.gzip for e in f.extensions))
    text = _either(extensions)
    if compressible == extensions:
        return f"{text} (add .gz to compress)"
    if compressible:
        return f"{text} ({_either(compressible)} also with .gz, compressed)"
    return text


def _named_as(path) -> str:
    """The extension a name carries, as users read it: ".npy", ".csv.gz", or "a name without one"."""
    base, gz = _split_name(path)
    suffix = Path(base).suffix
    return f"{suffix}{'.gz' if gz else ''}" if suffix else "a name without an extension"


def _refuse_options(given, takes: tuple[str, ...], what: str, name: str) -> None:
    unknown = sorted(set(given) - set(takes))
    if unknown:
        options = f"option {unknown[0]}" if len(unknown) == 1 else f"options {', '.join(unknown)}"
        allowed = f"options they take: {', '.join(takes)}" if takes else "they take no options"
        raise InputError(f"{what} take no {options} ({allowed})", name)


def detect(path, problem: str | None = None, format: str | None = None) -> Format:
    """The readable format of ``path`` (by name, sniffing the content only to split .csv)."""
    name = str(path)
    if problem is not None and problem not in PROBLEM_KINDS:
        raise InputError(f"unknown problem kind {shown(str(problem))} (choose {', '.join(PROBLEM_KINDS)})", name)
    if format is not None:
        if format not in _BY_KEY or _BY_KEY[format].read is None:
            raise InputError(f"unknown format {shown(str(format))} (choose {', '.join(f.key for f in FORMATS)})",
                             name)
        candidates = [_BY_KEY[format]]
    else:
        candidates = _named(path, FORMATS)
        if not candidates:
            raise InputError(f"unknown file type; readable files are {_known_extensions(FORMATS)}", name)
    if _split_name(path)[1] and not candidates[0].gzip:
        raise InputError(f"gzip-compressed {candidates[0].name} files are not supported", name)
    if problem is not None:
        fitting = [f for f in candidates if problem in f.problems]
        if not fitting:
            kinds = sorted({k for f in candidates for k in f.problems})
            raise InputError(f"{candidates[0].name} files hold {' or '.join(kinds)} problems, not {problem}", name)
        candidates = fitting
    for fmt in candidates[:-1]:
        if fmt.sniff is None or fmt.sniff(path):
            return fmt
    return candidates[-1]


def readings(path) -> tuple[str, ...]:
    """The problem kinds ``path`` can be read as, its format's default first (a .csv is sniffed:
    a point series or a cost matrix); () when the name is no readable format (load() says why)."""
    try:
        default = detect(path)
    except (InputError, OSError):
        from .batch import batch_layout
        return ("assignment",) if batch_layout(path) else ()
    kinds = [k for f in [default, *_named(path, FORMATS)] if f.read is not None for k in f.problems]
    return tuple(dict.fromkeys(kinds))


def reading_for(path, algorithm) -> str | None:
    """How to read ``path`` for ``algorithm`` (a registry.Algorithm or its name): None (the format's
    default; "matching" said explicitly) when the default is a kind the algorithm solves, else the
    first kind it solves that the format can hold (a square .mtx becomes a flow network for dinic),
    else None (solve says why). The command line, the API and the explorer all read files by this
    one rule."""
    if algorithm is None:
        return None
    if isinstance(algorithm, str):
        from ..registry import algorithms
        algorithm = algorithms().get(algorithm)
        if algorithm is None:
            return None
    kinds = readings(path)
    if not kinds:
        return None
    if kinds[0] in algorithm.problem_kinds:
        # said, not left to the file: a Matrix Market file matchscope wrote as costs reads as costs
        # by default, and a matching algorithm still reads it as a graph
        return kinds[0] if kinds[0] == "matching" else None
    return next((k for k in algorithm.problem_kinds if k in kinds), None)


def load(path, problem: str | None = None, format: str | None = None, **options):
    """Read ``path`` into a Problem (see the module docstring)."""
    name = str(path)
    try:
        found = os.stat(path)
    except FileNotFoundError:
        raise InputError("no such file", name) from None
    except OSError as e:  # a name too long, a file used as a folder, no permission on the folder...
        raise InputError(f"cannot read file: {e.strerror or e}", name) from None
    except ValueError:  # a NUL character in the name
        raise InputError("cannot read file: the name holds a NUL character", name) from None
    if not stat.S_ISREG(found.st_mode):
        raise InputError("not a regular file", name)
    if problem is None and format is None and not options:
        from .batch import batch_layout
        if batch_layout(path):  # a 3-D .npy or an .npz of matrices: a batch of assignment problems
            from ..batch.problem import AssignmentBatch
            from .batch import read_batch
            return AssignmentBatch.from_costs(read_batch(path), source=name)
    fmt = detect(path, problem, format)
    _refuse_options(options, fmt.option_names(), f"{fmt.name} files", name)
    return fmt.read(path, problem=problem, **options)


def save(obj, path, format: str | None = None, **options) -> None:
    """Write a Problem, a Result (CSV / JSON / MTX) or a TrackResult (CSV / JSON), by extension; atomically."""
    from ..result import TrackResult
    name = str(path)
    is_result = isinstance(obj, (Result, TrackResult))
    table = RESULT_FORMATS if is_result else FORMATS
    kind = type(obj).__name__ if isinstance(obj, TrackResult) else "Result" if is_result else type(obj).__name__
    if kind not in _PLAIN_KINDS:
        raise InputError("only a problem, a result or a tracking result can be saved", name)
    if format is not None:
        if format not in _BY_KEY:
            raise InputError(f"unknown format {shown(str(format))} (choose {', '.join(_BY_KEY)})", name)
        candidates = [_BY_KEY[format]]
    else:
        candidates = _named(path, table)
        if is_result and not candidates:  # a name without an extension: CSV
            candidates = [f for f in table if results.written_as(path) in f.extensions]
    usable = [f for f in candidates if f.write is not None and kind in f.saves]
    if not usable:
        saves = [f for f in table if kind in f.saves]
        where = f"in the {candidates[0].name} format" if format is not None else (
            f"as {named}" if (named := _named_as(path)).startswith(".") else f"under {named}")
        raise InputError(f"a {_PLAIN_KINDS[kind]} cannot be saved {where}; use {_extension_choices(saves)}", name)
    fmt = usable[0]
    if _split_name(path)[1] and not fmt.gzip:
        raise InputError(f"gzip-compressed {fmt.name} files are not supported", name)
    _refuse_options(options, fmt.save_option_names(), f"{fmt.name} files", name)
    try:
        fmt.write(obj, path, **options)
    except OSError as e:  # a name too long, a missing folder, a read-only file, a full disk...
        from ..io_util import write_refused
        raise write_refused(e, name) from None
    except ValueError as e:
        if "null" not in str(e):  # os functions refuse a NUL in a name with ValueError
            raise
        raise InputError("cannot write file: the name holds a NUL character", name) from None


def file_filters(problem: str | None = None, save: bool = False, results: bool = False) -> list[str]:
    """Qt file-dialog filters, e.g. "Matrix Market (*.mtx *.mtx.gz)".

    Open dialogs get an "All supported files" entry first; ``problem`` keeps the formats that can
    hold that kind; ``save`` keeps writable formats; ``results`` lists result exports instead.
    """
    table = RESULT_FORMATS if results else FORMATS
    chosen = [f for f in table
              if (problem is None or problem in f.problems) and (f.write if save else f.read or results)]
    filters = [f.file_filter() for f in chosen]
    if not save and not results:
        filters.insert(0, f"All supported files ({_known_extensions(chosen)})")
    return filters + ["All files (*)"]


__all__ = ["Format", "FORMATS", "RESULT_FORMATS", "detect", "file_filters", "load", "save"]
