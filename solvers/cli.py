"""The `matchscope` command line: solve, gen, algos, formats, gui.

Arguments are parsed before anything heavy is imported, so ``--backend cudasim`` can switch numba's
CUDA simulator on before numba loads. Bad input never shows a traceback: it is one line on stderr,
``error: PATH:LINE: what is wrong``, and exit status 2. A result that fails its independent
certificate exits 1, so a wrong answer never passes silently.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time

from .choice import CHOICE_HELP
from .errors import BackendUnavailable, Cancelled, InfeasibleError, InputError
from .io_util import jsonable
from .telemetry import Observer, Throttle
from .text import duration, number, plural

PROG = "matchscope"
EXIT_OK, EXIT_NOT_CERTIFIED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
PROBLEM_CHOICES = ("matching", "flow", "assignment", "points")
BACKEND_CHOICES = ("auto", "cpu", "cuda", "cudasim")


class UsageError(Exception):
    """A command-line mistake; ``str()`` is the line printed after ``error: ``."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one ``error:`` line (raised, so main() owns the exit code)."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


# ---------------------------------------------------------------------------------------------
# progress on a terminal


class ProgressLine(Observer):
    """One self-overwriting status line on a terminal: the unit of a long job ("frame pair 3 of
    9"), then the running solve's iteration, phase, active count and value."""

    snapshot_interval = math.inf  # the CLI draws no charts: let solvers skip heavy snapshots

    def __init__(self, stream, interval: float = 0.1):
        self.stream = stream
        self.throttle = Throttle(interval)
        self.width = 0
        self.label = ""
        self.stage = ""

    def on_start(self, info):
        self.label = f"{info.algorithm} [{info.backend}]"
        if not self.stage or self.throttle.ready():  # a tracking run starts one solve per frame pair
            self.show("  ".join(p for p in (self.stage, self.label, "starting") if p))

    def on_progress(self, done, total, unit):
        self.stage = f"{unit} {done + 1:,} of {total:,}" if done < total else ""
        if self.stage and self.throttle.ready():
            self.show("  ".join(p for p in (self.stage, self.label) if p))

    def on_iteration(self, stats):
        if not self.throttle.ready():
            return
        parts = [self.stage, self.label, f"iteration {stats.iteration}", stats.phase]
        if stats.active >= 0:
            parts.append(f"active {stats.active}")
        if not math.isnan(stats.value):
            parts.append(f"value {stats.value:g}")
        parts.append(duration(stats.elapsed))
        self.show("  ".join(p for p in parts if p))

    def say(self, line: str) -> None:
        """A line that stays (e.g. "compiling ..."): the progress line is cleared first."""
        self.clear()
        self.stream.write(line + "\n")
        self.stream.flush()

    def show(self, text: str) -> None:
        text = text[:max(10, shutil.get_terminal_size().columns - 1)]  # a wrapped line cannot be overwritten
        pad = max(0, self.width - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self.width = len(text)

    def loading(self, path, bar_width: int = 24):
        """A read_progress callback: "loading PATH [#####.....] 42%  12.3 / 29.0 MB", throttled."""
        def report(done: int, total: int) -> None:
            if total <= 0 or not self.throttle.ready():
                return
            share = min(1.0, done / total)
            filled = int(round(share * bar_width))
            self.show(f"loading {path} [{'#' * filled}{'.' * (bar_width - filled)}] {share:4.0%}  "
                      f"{done / 1e6:.1f} / {total / 1e6:.1f} MB")
        return report

    def clear(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def _progress() -> ProgressLine | None:
    """A progress line only when a person is watching stderr; never when it is piped or captured."""
    try:
        return ProgressLine(sys.stderr) if sys.stderr.isatty() else None
    except (AttributeError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------
# helpers


def _parse_opts(pairs: list[str]) -> dict[str, str]:
    options = {}
    for text in pairs:
        key, sep, value = text.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise InputError(f"--opt {text} must look like KEY=VALUE")
        options[key] = value
    return options


def _describe(problem) -> str:
    info = dict(problem.describe())
    kind = info.pop("kind", problem.kind)
    def show(value):
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, (list, tuple)):  # per-frame sizes of a series
            return str(value[0]) if len(set(value)) == 1 else f"{min(value)} to {max(value)}"
        return value
    return kind + ": " + ", ".join(f"{k.replace('_', ' ')} {show(v)}" for k, v in info.items() if v is not None)


def _at_path(exc, *paths) -> str:
    """The error's text with the file named once: solvers that know the file already name it."""
    text = str(exc)
    if any(p and text.startswith(f"{p}") for p in paths):
        return text
    return f"{paths[0]}: {text}"


def _same_file(out, path) -> bool:
    """Whether writing ``out`` would replace the input ``path`` (a missing input is reported by load)."""
    if not os.path.exists(path):
        return False
    try:
        return os.path.samefile(out, path)
    except OSError:  # out does not exist yet
        return os.path.realpath(out) == os.path.realpath(path)


# ---------------------------------------------------------------------------------------------
# solve


TRACKING_OPTIONS = ("max_distance",)  # `solve` on a point series: options of solvers.track, not of the algorithm


def _cmd_solve(args) -> int:
    from .targets import configure_numba
    configure_numba(args.backend)  # before anything below can import numba
    from .formats.batch import batch_layout
    if batch_layout(args.path):  # a 3-D .npy or an .npz of matrices: a batch of assignment problems
        return _cmd_solve_batch(args)
    from . import registry
    algo = registry.get(args.algo) if args.algo else None
    if args.backend == "cuda" or (args.backend == "auto" and (algo is None or "cuda" in algo.backends)):
        from .targets.early_context import start_cuda_context
        start_cuda_context()  # the GPU context builds while numba imports and the file is read
    import solvers
    from .formats import reading_for
    from .formats import read_progress

    options = _parse_opts(args.opt)
    if algo is not None:  # a bad option fails now, not after a long load
        algo.parse_options({k: v for k, v in options.items() if k not in TRACKING_OPTIONS})

    if args.out:  # before a long solve, not after
        if _same_file(args.out, args.path):
            raise InputError("--out names the input file; give the result another name so the input is kept",
                             str(args.out))
        _check_result_name(args.out)

    progress = _progress()
    try:
        if progress:
            progress.show(f"loading {args.path}")
        start = time.perf_counter()
        with read_progress(progress.loading(args.path) if progress else None):
            problem = solvers.load(args.path, problem=args.problem or reading_for(args.path, algo))
        load_seconds = time.perf_counter() - start
        if progress:
            progress.clear()
        try:
            run = _plan(problem, algo, args, options)
            outcome = _prepare_and_run(solvers, run, problem, progress, args.out)
        except (InfeasibleError, BackendUnavailable) as exc:
            raise UsageError(_at_path(exc, str(args.path), problem.source)) from None
    finally:
        if progress:
            progress.clear()

    record, rows, failure = outcome
    record.update(load_seconds=load_seconds, choice=run.choice)
    rows.insert(0, ("loaded", duration(load_seconds)))
    if args.json:
        print(json.dumps(jsonable(dict(record, path=str(args.path)))))
    else:
        for key, value in [("file", str(args.path)), ("problem", _describe(problem)), *rows]:
            print(f"{key:<12}{value}")
    if failure:
        print(f"{PROG}: {args.path}: {failure}", file=sys.stderr)
        return EXIT_NOT_CERTIFIED
    return EXIT_OK


def _cmd_solve_batch(args) -> int:
    """`solve` on a batch file: every item solved and certified by solvers.solve_batch. Exit 0 when
    every item is certified (optimal, or proven infeasible), 1 when any is not, 2 on bad input."""
    from .batch.api import ALGORITHMS, solve_batch
    from .formats.batch import read_batch, save_batch_result
    from .formats.results import written_as
    from .io_util import check_output_name
    import numpy as np
    path = str(args.path)
    if args.algo is not None and args.algo not in ALGORITHMS:
        raise UsageError(f"{path}: a batch is solved by {', '.join(ALGORITHMS)}, not {args.algo}")
    if args.opt or args.problem not in (None, "assignment"):
        raise UsageError(f"{path}: a batch of assignment problems takes no --opt or --problem")
    if args.out:
        if _same_file(args.out, path):
            raise InputError("--out names the input file; give the result another name so the input is kept",
                             str(args.out))
        if written_as(args.out) not in (".csv", ".json"):
            raise InputError("batch results are written as .csv or .json; give --out one of those names",
                             str(args.out))
        check_output_name(args.out)
    start = time.perf_counter()
    data = read_batch(path)
    load_seconds = time.perf_counter() - start
    regular = not isinstance(data, list)
    from .batch.api import resolve_backend as batch_backend
    from .warmup import batch_kind, batch_warmed, mark_batch_warmed, warm_batch, watch_compiles
    start = time.perf_counter()
    try:
        from .batch.inputs import check_batch_shape, prepare_batch
        check_batch_shape(data)  # a bad file is refused before anything is compiled or said
        backend = batch_backend(args.backend)
        kind = batch_kind(data)
        if not batch_warmed(kind, backend):  # the warm-up will compile and say so: bad values are refused
            prepare_batch(data)              # first, in their one line (a second pass, on first use only)
        with watch_compiles(lambda watch: _say_compiling(watch, "hungarian (batches)", backend), backend) as watch:
            warm_batch(kind, backend)  # compile or load, untimed (a mapped file is read-only)
        mark_batch_warmed(kind, backend)
        compile_seconds = time.perf_counter() - start
        result = solve_batch(data, backend=backend)
    except InputError as exc:
        raise InputError(exc.message, path) from None
    except BackendUnavailable as exc:
        raise UsageError(f"{path}: {exc}") from None
    if args.out:
        save_batch_result(result, args.out, data)
    summary = result.summary()
    problems = f"{len(result):,} assignment problem{'' if len(result) == 1 else 's'}"
    shapes = {tuple(item.shape) for item in data} if not regular else set()
    if regular:
        what = f"{problems} of {data.shape[1]:,} x {data.shape[2]:,}"
    elif len(shapes) == 1:
        rows, cols = next(iter(shapes))
        what = f"{problems} of {rows:,} x {cols:,}"
    else:
        what = f"{problems} of different sizes"
    failed = summary["not_certified"]
    certified = f"{summary['certified']:,} of {len(result):,} optimal"
    if summary["infeasible"]:
        certified += f", {summary['infeasible']:,} proven infeasible"
    if failed:
        certified += f", {failed:,} NOT certified"
    rows = [("file", path), ("problem", f"a batch of {what}"), ("loaded", duration(load_seconds)),
            ("algorithm", f"hungarian (batch) on {result.backend}"),
            ("prepared", f"{duration(compile_seconds)} "
                         f"{'compiling kernels' if watch.compiled else 'loading compiled kernels from the cache'} "
                         "(not counted in the solve time)"),
            ("value", f"{number(summary['total_cost'])} (the sum over the items)"),
            ("certified", certified),
            ("solve time", duration(result.seconds["solve"])),
            ("certify", duration(result.seconds["certify"])),
            ("iterations", f"{int(result.iterations.sum()):,}")]
    record = dict(summary, path=path, load_seconds=load_seconds, compile_seconds=compile_seconds,
                  algorithm="hungarian", iterations=int(result.iterations.sum()))
    record.pop("text")
    if args.out:
        record["out"] = str(args.out)
        rows.append(("written", str(args.out)))
    if args.json:
        print(json.dumps(jsonable(record)))
    else:
        for key, value in rows:
            print(f"{key:<12}{value}")
    if failed:
        first = int(np.flatnonzero(~(result.certified | result.infeasible))[0])
        print(f"{PROG}: {path}: {plural(failed, 'item')} NOT certified (first: item {first}, "
              f"{result.status[first]})", file=sys.stderr)
        return EXIT_NOT_CERTIFIED
    return EXIT_OK


class _Run:
    """What `solve` runs: the algorithm (given or chosen, and why), the backend, the options."""

    def __init__(self, algorithm: str, backend: str, options: dict, choice: str | None):
        self.algorithm, self.backend, self.options, self.choice = algorithm, backend, options, choice


def _plan(problem, algo, args, options) -> _Run:
    """Check the request against the loaded problem (before any warm-up) and pick the algorithm
    when --algo is not given."""
    import solvers
    from .targets import resolve_backend

    choice = None
    if algo is None:
        from .choice import choose
        picked = choose(problem, args.backend)
        algo = solvers.algorithms()[picked.algorithm]
        choice = picked.reason
    if problem.kind == "points":
        from .tracking import check_trackable, gating_mode
        check_trackable(problem)
        if "max_distance" in options:  # refused before the warm-up, which would say it compiles first
            gating_mode(options["max_distance"], problem.source)
        if not algo.tracks_points:
            raise InputError(f"tracking links frames by assignment; {algo.name} does not solve assignment problems",
                             problem.source)
        algo.parse_options({k: v for k, v in options.items() if k not in TRACKING_OPTIONS})
        if args.out:
            from .formats.tracks import check_name
            check_name(args.out)  # tracks are CSV or JSON; refused before the solves
    else:
        algo.parse_options(options)  # tracking options are an error here
    backend = resolve_backend(args.backend, algo.backends, algo.name)
    return _Run(algo.name, backend, options, choice)


def _say_compiling(watch, name: str, backend: str, progress=None) -> None:
    """The one stderr line for a run that compiles (watch_compiles' callback)."""
    from .warmup import compiling_line
    line = compiling_line(watch, name, backend)
    if progress:
        progress.say(line)
    else:
        print(line, file=sys.stderr, flush=True)


def _prepare_and_run(solvers, run: _Run, problem, progress, out):
    """Warm up (untimed: compiling or loading the kernels), then the timed, certified run. A line
    on stderr says when something is compiled, not merely loaded from numba's cache."""
    from .warmup import wants_warmup, warm_up, watch_compiles

    points = problem.kind == "points"
    if not wants_warmup(run.algorithm, run.backend):
        outcome = _execute(solvers, run, problem, progress, out)
        return _with_preparation(outcome, 0.0, None)

    def say_compiling(watch) -> None:  # the API's words: "compiling lsa (cost matrices) for cpu (...)"
        from .warmup import problem_words
        _say_compiling(watch, f"{run.algorithm} ({problem_words(problem)})", run.backend, progress)

    if progress:
        progress.show(f"preparing {run.algorithm} [{run.backend}]: compiling or loading its kernels")
    with watch_compiles(say_compiling, run.backend) as watch:
        seconds = warm_up(problem, run.algorithm, run.backend, run.options, track=points,
                          snapshot_interval=progress.snapshot_interval if progress else None)
    outcome = _execute(solvers, run, problem, progress, out)
    return _with_preparation(outcome, seconds, watch.compiled > 0)


def _with_preparation(outcome, seconds: float, compiled: bool | None):
    record, rows, failure = outcome
    record["compile_seconds"] = seconds
    record["compiled"] = compiled  # None: nothing compiled here; False: loaded from the kernel cache
    if compiled is not None:
        what = "compiling kernels" if compiled else "loading compiled kernels from the cache"
        at = next(i for i, (key, _) in enumerate(rows) if key == "algorithm") + 1
        rows.insert(at, ("prepared", f"{duration(seconds)} {what} (not counted in the solve time)"))
    return record, rows, failure


def _execute(solvers, run: _Run, problem, progress, out):
    if problem.kind == "points":
        return _track(solvers, problem, run, progress, out)
    return _solve(solvers, problem, run, progress, out)


def _check_result_name(path) -> None:
    from .formats import RESULT_FORMATS
    from .io_util import check_output_name
    from .formats.results import written_as
    if not any(written_as(path) in fmt.extensions for fmt in RESULT_FORMATS):
        choices = " ".join(dict.fromkeys(p for fmt in RESULT_FORMATS for p in fmt.patterns))
        raise InputError(f"results are written as {choices} (tracks of a point series: *.csv *.json; "
                         "a name without an extension: CSV); give --out one of those names", str(path))
    check_output_name(path)  # a missing folder or a name too long: one line now, not after the solve


def _certified_text(certificate) -> str:
    """The summary's "certified" row: optimal, within the gap an epsilon-run claims, or NO."""
    status = certificate.status
    if status == "optimal":
        return "yes (optimal)"
    if status == "within-gap":
        return (f"yes, within gap {number(certificate.gap)} of optimal "
                f"(an epsilon-run: it claims at most {number(certificate.bound)})")
    return "NO"


def _algorithm_text(run: _Run, tail: str = "") -> str:
    text = f"{run.algorithm} on {run.backend}{tail}"
    return text + (f" ({run.choice}; --algo to choose)" if run.choice else "")


def _solve(solvers, problem, run: _Run, progress, out):
    """(JSON record, summary rows, why it is not certified or None) of one certified solve."""
    result = solvers.solve(problem, run.algorithm, backend=run.backend, observer=progress, **run.options)
    if out:
        solvers.save(result, out, problem=problem)  # flow exports need the edge ends
    record = result.summary()
    rows = [("algorithm", _algorithm_text(run)),
            ("value", number(result.exact_value) + _why_no_flow(problem, result.exact_value)),
            ("certified", _certified_text(result.certificate)),
            ("certificate", result.certificate.summary()),
            ("solve time", duration(result.seconds)),
            ("iterations", f"{result.iterations:,}")]
    if out:
        record["out"] = str(out)
        rows.append(("written", str(out)))
    failure = None if result.certified else \
        f"the {result.algorithm} result is NOT certified: {result.certificate.summary()}"
    return record, rows, failure


def _why_no_flow(problem, value) -> str:
    """For a flow of 0, why (a sample's sink can be a vertex the generator left without edges)."""
    if getattr(problem, "kind", None) != "flow" or value != 0:
        return ""
    return f" ({problem.zero_flow_reason()})"


def _track(solvers, series, run: _Run, progress, out=None):
    """A point series: every consecutive frame pair is a certified assignment (solvers.track).

    The JSON record has the keys of every solve (problem, algorithm, backend, value = total link
    distance, certified, optimal, seconds, iterations = assignment solves, gap = sum of the frame
    pairs' proven gaps, bound, certificate = a one-line summary over the frame pairs, options,
    stats) plus frames, links, tracks, accuracy, recall, max_distance and frame_stats."""
    tracked = solvers.track(series, algorithm=run.algorithm, backend=run.backend, observer=progress, **run.options)
    if out:
        solvers.save(tracked, out)
    stats = tracked.frame_stats
    summary = tracked.summary
    failed = [f"{s['frame']}-{s['frame'] + 1}" for s in stats if not s["certified"]]
    optimal = sum(s["status"] == "optimal" for s in stats)
    within = sum(s["status"] == "within-gap" for s in stats)
    used = next((s["backend"] for s in stats if s["solves"]), run.backend)
    cost = float(summary["cost"])
    gap = float(summary["gap"])
    bound = float(sum(s.get("bound", 0.0) for s in stats))
    certificate = (f"dual-potentials per frame pair: {len(stats) - len(failed)} of {len(stats)} certified "
                   f"({optimal} optimal" + (f", {within} within their epsilon gap" if within else "") + ")"
                   + (f", total gap {gap:.6g}" if gap else "")  # a bound: six digits, as the certificates give
                   + (f"; NOT certified: frame pairs {', '.join(failed)}" if failed else ""))
    record = {"problem": "points", "algorithm": run.algorithm, "backend": used, "value": cost,
              "certified": not failed, "optimal": optimal == len(stats),
              "seconds": float(summary["seconds"]), "iterations": int(summary["solves"]),
              "gap": gap, "bound": bound, "certificate": certificate,
              "options": run.options,
              "stats": {"frames": series.n_frames, "frame_pairs": len(stats), "links": summary["links"],
                        "tracks": summary["tracks"], "unmatched": summary["unmatched"],
                        "accuracy": summary["accuracy"], "recall": summary["recall"],
                        "gating": summary["gating"], "max_distance": summary["max_distance"],
                        "gate_rounds": summary["gate_rounds"], "gated_pairs": summary["gated_pairs"],
                        "solves": summary["solves"], "certified_pairs": len(stats) - len(failed),
                        "optimal_pairs": optimal},
              "frames": series.n_frames, "links": summary["links"], "tracks": summary["tracks"],
              "accuracy": tracked.accuracy, "recall": summary["recall"], "max_distance": tracked.max_distance,
              "frame_stats": stats}
    accuracy = ("no ground truth" if tracked.accuracy is None else
                f"{tracked.accuracy:.4f} (correct / links made; recall {summary['recall']:.4f})")
    rows = [("algorithm", _algorithm_text(run, f", {plural(len(stats), 'frame pair')}")),
            ("value", f"{number(cost)} (total link distance)"),
            ("links", f"{summary['links']:,} in {plural(summary['tracks'], 'track')}, "
                      f"{plural(summary['unmatched'], 'point')} unmatched"),
            ("gating", _gating_text(tracked)),
            ("accuracy", accuracy),
            ("certified", "yes (every frame pair)" if not failed else f"NO (frame pairs {', '.join(failed)})"),
            ("certificate", certificate),
            ("solve time", f"{duration(record['seconds'])} (the assignment solves)"),
            ("iterations", plural(record["iterations"], "assignment solve"))]
    if out:
        record["out"] = str(out)
        rows.append(("written", str(out)))
    failure = f"tracking is NOT certified for frame pairs {', '.join(failed)}" if failed else None
    return record, rows, failure


def _gating_text(tracked) -> str:
    summary = tracked.summary
    if tracked.gating == "off":
        return "off (plain rectangular assignment: min(n_t, n_t+1) links per frame pair)"
    pairs = f"{summary['gated_pairs']:,} of {plural(len(tracked.frame_stats), 'frame pair')} gated"
    if tracked.gating == "fixed":
        return f"max_distance {number(tracked.max_distance)} ({pairs})"
    if tracked.max_distance is None:
        return "auto: too few links to estimate a gate, none applied"
    return f"auto: max_distance {tracked.max_distance:.6g} from the link lengths ({pairs})"


# ---------------------------------------------------------------------------------------------
# gen (its flags come from the generator kind's declared parameters)


def _converter(name: str, kind: type):
    """Convert a flag's text to the parameter's declared type (the generator checks ranges)."""
    def convert(text: str):
        try:
            if text.strip().lower() == "none":
                return None  # the generator accepts it only where the parameter is optional
            if kind is bool:
                low = text.strip().lower()
                if low not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError(text)
                return low in ("1", "true", "yes", "on")
            if kind is int:
                value = float(text) if any(ch in text for ch in ".eE") else int(text)  # 1e6 is fine
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError(text)
                return int(value)
            return kind(text)
        except ValueError:
            what = {bool: "true or false", int: "a whole number", float: "a number"}.get(kind, kind.__name__)
            raise argparse.ArgumentTypeError(f"{text} is not {what}") from None
    convert.__name__ = name
    return convert


def _gen_parser(kind: str | None, kinds: dict) -> _Parser:
    """``kinds``: name -> entry with a ``summary``; without ``kind``, every kind `gen` writes
    (solvers.generators' KINDS and BATCH_KINDS), which the help lists and KIND is checked against."""
    prog = f"{PROG} gen" + (f" {kind}" if kind else "")
    listing = "\n".join(f"  {name:<20} {entry.summary}".rstrip() for name, entry in kinds.items())
    parser = _Parser(prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
                     description="Write a seeded synthetic problem.",
                     epilog=None if kind else f"kinds:\n{listing}\n\n`{PROG} gen KIND --help` lists its parameters.")
    if kind is None:
        parser.add_argument("kind", metavar="KIND", choices=list(kinds), help="one of the kinds listed below")
        return parser
    entry = kinds[kind]
    parser.description = f"Write a seeded {kind} problem: {entry.summary}.\n\nImitates: {entry.family}."
    group = parser.add_argument_group(f"{kind} parameters")
    for name, param in entry.params.items():  # seed is declared by every kind
        flags = [f"--{name.replace('_', '-')}"] + ([f"--{name}"] if "_" in name else [])
        default = str(param.default).lower() if isinstance(param.default, bool) else param.default  # as typed
        shown = "required" if param.required else "optional" if param.default is None else f"default {default}"
        group.add_argument(*flags, dest=name, metavar=name.upper(), type=_converter(name, param.type),
                           default=argparse.SUPPRESS, required=param.required, help=f"{param.help} ({shown})")
    parser.add_argument("--out", required=True, metavar="PATH",
                        help="file to write; the extension picks the format (see `matchscope formats`)")
    return parser


BATCH_KIND = "dense-lap-batch"  # the one kind of solvers.generators.BATCH_KINDS, whose flags are these


def _cmd_gen_batch(argv: list[str]) -> int:
    """`gen dense-lap-batch`: a batch of dense assignment problems as .npy (one (B, n, m) array) or,
    ragged (--max-n), as .npz (one matrix per item)."""
    from .formats.batch import save_batch
    from .generators import BATCH_KINDS
    dense_lap_batch = BATCH_KINDS[BATCH_KIND].function
    parser = _Parser(prog=f"{PROG} gen {BATCH_KIND}", allow_abbrev=False,
                     description="Write a seeded batch of dense assignment problems, costs uniform in [0, k*n] "
                                 "(solve it with `matchscope solve FILE`).")
    parser.add_argument("--batch", required=True, type=_converter("batch", int), help="number of problems")
    parser.add_argument("--n", required=True, type=_converter("n", int), help="rows of each problem")
    parser.add_argument("--m", type=_converter("m", int), help="columns of each problem (default n)")
    parser.add_argument("--max-n", dest="max_n", type=_converter("max_n", int),
                        help="ragged: square problems of sizes drawn from n..MAX_N (written as .npz)")
    parser.add_argument("--k", type=_converter("k", float), default=1.0, help="costs up to k*n (default 1)")
    parser.add_argument("--integer", type=_converter("integer", bool), default=True,
                        help="integer costs (default true)")
    parser.add_argument("--float32", type=_converter("float32", bool), default=False,
                        help="store the costs as float32 (default false)")
    parser.add_argument("--seed", type=_converter("seed", int), default=0, help="random seed (default 0)")
    parser.add_argument("--out", required=True, metavar="PATH", help="file to write: .npy, or .npz")
    params = vars(parser.parse_args(argv))
    out = params.pop("out")
    if params["max_n"] is not None and params["m"] is not None:
        raise UsageError(f"{PROG} gen {BATCH_KIND}: --m and --max-n do not go together (ragged items are square)")
    from .io_util import check_output_name
    check_output_name(out)  # a missing folder or a folder of that name: one line before generating
    batch = dense_lap_batch(**params)
    save_batch(batch, out)
    if isinstance(batch, list):
        print(f"wrote {out}: a batch of {len(batch):,} square assignment problems of "
              f"{params['n']:,} to {params['max_n']:,} rows")
    else:
        print(f"wrote {out}: a batch of {batch.shape[0]:,} assignment problems of {batch.shape[1]:,} x "
              f"{batch.shape[2]:,}")
    return EXIT_OK


def _cmd_gen(argv: list[str]) -> int:
    from .generators import BATCH_KINDS, KINDS, generate
    from .api import save

    kind = argv[0] if argv and not argv[0].startswith("-") else None
    if kind == BATCH_KIND:
        return _cmd_gen_batch(argv[1:])
    if kind not in KINDS:  # prints help, or raises the usage error naming the kinds
        _gen_parser(None, {**KINDS, **BATCH_KINDS}).parse_args(argv)
        raise UsageError(f"{PROG} gen: give a KIND first (see {PROG} gen --help)")
    params = vars(_gen_parser(kind, KINDS).parse_args(argv[1:]))
    out = params.pop("out")
    problem = generate(kind, **params)
    save(problem, out)
    print(f"wrote {out}: {_describe(problem)}")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# algos, formats, gui


def _algorithm_records() -> list[dict]:
    import solvers
    from .targets import gpu_present

    # Listing must not import numba: a GPU is looked for through the driver alone. A fresh
    # `matchscope solve --backend cudasim` can always switch the simulator on.
    here = {"cpu", "cudasim"} | ({"cuda"} if gpu_present() else set())
    records = []
    for algo in solvers.algorithms().values():
        records.append({"name": algo.name, "problems": list(algo.problem_kinds),
                        "backends": list(algo.backends),
                        "available": [b for b in algo.backends if b in here],
                        "options": [{"name": o.name, "default": o.default,
                                     "choices": list(o.choices) if o.choices is not None else None,
                                     "help": o.help} for o in algo.options],
                        "summary": algo.summary, "reference": algo.reference,
                        "compiled": algo.compiled, "interruptible": algo.interruptible,
                        "phases": list(algo.phases)})
    from .batch.api import BATCH_SOLVERS  # solve_batch's, for batch files (problem kind "batch")
    for algo in BATCH_SOLVERS.values():
        records.append({"name": algo.name, "problems": list(algo.problem_kinds), "backends": list(algo.backends),
                        "available": [b for b in algo.backends if b in here], "options": [],
                        "summary": algo.summary, "reference": algo.reference, "compiled": True,
                        "interruptible": algo.interruptible, "phases": []})
    return records


def _cmd_algos(args) -> int:
    records = _algorithm_records()
    if args.json:
        print(json.dumps(jsonable(records)))
        return EXIT_OK
    if not records:
        print("no algorithms are registered")
        return EXIT_OK
    for rec in records:
        print(f"{rec['name']}  [{', '.join(rec['problems'])}]  backends: {', '.join(rec['backends'])}"
              f"  (available here: {', '.join(rec['available']) or 'none'})")
        if rec["summary"]:
            print(f"    {rec['summary']}")
        for opt in rec["options"]:
            default = opt["default"]
            shown = ("on" if default else "off") if isinstance(default, bool) else default  # as --opt takes it
            setting = f"--opt {opt['name']}={shown}"
            choices = f" [{' | '.join(map(str, opt['choices']))}]" if opt["choices"] else ""
            print(f"    {setting:<28}{opt['help']}{choices}".rstrip())
        if rec["reference"]:
            print(f"    reference: {rec['reference']}")
    return EXIT_OK


def _format_records() -> list[dict]:
    from .formats import FORMATS, RESULT_FORMATS
    from .formats.batch import LISTED
    records = [{"key": f.key, "name": f.name, "files": list(f.patterns), "problems": list(f.problems),
                "reads": f.read is not None, "writes": f.write is not None, "result": table is RESULT_FORMATS,
                "description": f.description}
               for table in (FORMATS, RESULT_FORMATS) for f in table]
    for key, name, access, files, description in LISTED:
        records.append({"key": key, "name": name,
                        "files": list(files), "problems": ["assignment batch"], "reads": "read" in access,
                        "writes": "write" in access, "result": access == "write", "description": description})
    return records


def _cmd_formats(args) -> int:
    records = _format_records()
    if args.json:
        print(json.dumps(records))
        return EXIT_OK
    sections = (("Problem files (solve, gen --out, gui):", False, False), ("Results (solve --out):", True, False),
                ("Batches of assignment problems (solve, batch, gui):", False, True),
                ("Batch results (solve --out on a batch):", True, True))
    for title, results, batch in sections:
        print(title)
        for r in (r for r in records if r["result"] == results and r["key"].startswith("batch-") == batch):
            access = "read/write" if r["reads"] and r["writes"] else "read" if r["reads"] else "write"
            print(f"  {r['name']} ({access}: {', '.join(r['problems'])})  {' '.join(r['files'])}")
            print(f"      {r['description']}")
    return EXIT_OK


def _cmd_warmup(args) -> int:
    from .targets import configure_numba
    configure_numba()
    from .targets import available_backends, resolve_backend
    from .targets.cache import cache_dir
    from .warmup import warm_all

    if args.backend == "auto":
        backends = [b for b in available_backends() if b != "cudasim"]
    else:
        backends = [resolve_backend(args.backend, (args.backend,))]
    progress = _progress()
    for backend in backends:
        def show(done: int, total: int, label: str, bar_width: int = 24) -> None:
            if progress is not None and (done >= total or progress.throttle.ready()):
                filled = int(round(bar_width * done / max(total, 1)))
                progress.show(f"warming up {backend} [{'#' * filled}{'.' * (bar_width - filled)}] "
                              f"{done} of {total}  {label}")
        report = warm_all(backend, progress=show)
        if progress is not None:
            progress.clear()
        compiled = (f"{plural(report.compiled, 'function')} compiled, the rest loaded from the cache"
                    if report.compiled else "everything loaded from the cache, nothing compiled")
        print(f"{backend}: ready after {plural(report.runs, 'untimed run')} in {duration(report.seconds)} "
              f"({compiled})")
    where = cache_dir()
    print(f"kernel cache: {where}" if where else "kernel cache: numba's default place, beside the installed sources")
    return 0


def _cmd_gui(argv: list[str]) -> int:
    try:
        from explorer.app import main as explorer_main
    except ImportError as exc:
        raise UsageError(f"the explorer cannot start: {exc}") from None
    code = explorer_main(argv)
    return int(code or 0)


# ---------------------------------------------------------------------------------------------
# entry point


def build_parser() -> _Parser:
    parser = _Parser(prog=PROG, description="GPU bipartite matching, assignment and maximum flow, with "
                                            "independently certified answers.")
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    solve = sub.add_parser("solve", help="solve one file and certify the answer",
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           description="Load PATH, run ALGO, certify the answer independently. "
                                       "Exit 0 when certified, 1 when not, 2 on bad input.\n\n"
                                       "Before the timed run, the algorithm runs once untimed on a tiny problem of "
                                       "the same kind,\nso that compiling or loading its kernels is not counted "
                                       "in the solve time.",
                           epilog=CHOICE_HELP)
    solve.add_argument("path", metavar="PATH")
    solve.add_argument("--algo", metavar="NAME",
                       help="algorithm (see `matchscope algos`); without it, the fastest for the problem here "
                            "(see below)")
    solve.add_argument("--backend", default="auto", choices=BACKEND_CHOICES,
                       help="auto: cuda when a GPU is usable and the algorithm has it, else cpu (default auto)")
    solve.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE",
                       help="an algorithm option; repeat for several")
    solve.add_argument("--problem", choices=PROBLEM_CHOICES,
                       help="how to read a file that can mean several problems (default: what the algorithm "
                            "solves, when the format allows it)")
    solve.add_argument("--out", metavar="PATH", help="write the matching / assignment / flow (.csv, .json, .mtx), "
                                                     "or the tracks of a point series (.csv, .json)")
    solve.add_argument("--json", action="store_true", help="print the result summary as one JSON line")

    sub.add_parser("gen", help="write a seeded synthetic problem (`gen KIND --help` for its parameters)",
                   add_help=False)
    algos = sub.add_parser("algos", help="list algorithms, their backends and options")
    algos.add_argument("--json", action="store_true")
    formats = sub.add_parser("formats", help="list supported file formats")
    formats.add_argument("--json", action="store_true")
    warm = sub.add_parser("warmup", help="compile every kernel ahead of time (once per machine)",
                          description="Compile, or load from the kernel cache, every kernel of every compiled "
                                      "algorithm, so that later runs compile nothing. Says where the cache lives.")
    warm.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"),
                      help="auto: every backend usable here (cpu, and cuda when a GPU is usable)")
    sub.add_parser("gui", help="open the explorer (arguments go to the explorer; `gui --help`)", add_help=False)
    sub.add_parser("batch", help="solve many files on a Dask cluster (`batch --help`)", add_help=False)
    return parser


def _version() -> str:
    from . import __version__
    return __version__


def _dispatch(argv: list[str]) -> int:
    # gen and gui take flags this parser cannot know in advance: hand them their own argv
    if argv and argv[0] == "gen":
        return _cmd_gen(argv[1:])
    if argv and argv[0] == "gui":
        return _cmd_gui(argv[1:])
    if argv and argv[0] == "batch":  # solvers.cli_batch: many files on a Dask cluster
        from .cli_batch import cmd_batch
        return cmd_batch(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    return {"solve": _cmd_solve, "algos": _cmd_algos, "formats": _cmd_formats,
            "warmup": _cmd_warmup}[args.command](args)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _stdout_to_devnull() -> None:
    """Later writes and the flush at exit go nowhere (Python would report a second broken pipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # a stdout without a file descriptor (a capture)
        pass


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _dispatch(argv)
        sys.stdout.flush()  # a reader that stopped early (`| head`) is met here, not at exit
        return code
    except BrokenPipeError:  # the reader has what it wanted: no traceback, nothing more to write
        _stdout_to_devnull()
        return 0
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (InputError, UsageError) as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (InfeasibleError, BackendUnavailable, Cancelled) as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except SystemExit as exc:  # --help / --version from argparse
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_BAD_INPUT)
    finally:
        early = sys.modules.get("solvers.targets.early_context")
        if early is not None:
            early.wait_for_cuda_context()


def _watched() -> bool:
    """A tracer, profiler or monitoring tool (coverage, cProfile) is installed: it writes its
    report at exit."""
    monitoring = getattr(sys, "monitoring", None)
    tools = monitoring is not None and any(monitoring.get_tool(i) for i in range(6))
    return sys.gettrace() is not None or sys.getprofile() is not None or bool(tools)


def run() -> None:
    """The `matchscope` program: main(), then exit. After `solve` the process ends at once, without
    the interpreter's teardown: freeing numba's compiled-code registries takes a fifth of a second
    (as long as a small solve), and nothing is left to do (outputs are written whole and closed
    before the summary is printed; the streams are flushed here)."""
    code = main()
    if sys.argv[1:2] == ["solve"] and not _watched():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a reader gone (`| head`): main said what it had to
                pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
