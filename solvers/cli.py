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
import shutil
import sys

from .errors import BackendUnavailable, Cancelled, InfeasibleError, InputError
from .io_util import jsonable
from .telemetry import Observer, Throttle

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
    """One self-overwriting status line on a terminal: iteration, phase, active count, value."""

    snapshot_interval = math.inf  # the CLI draws no charts: let solvers skip heavy snapshots

    def __init__(self, stream, interval: float = 0.1):
        self.stream = stream
        self.throttle = Throttle(interval)
        self.width = 0
        self.label = ""

    def on_start(self, info):
        self.label = f"{info.algorithm} [{info.backend}]"
        self.show(f"{self.label} starting")

    def on_iteration(self, stats):
        if not self.throttle.ready():
            return
        parts = [self.label, f"iteration {stats.iteration}", stats.phase]
        if stats.active >= 0:
            parts.append(f"active {stats.active}")
        if not math.isnan(stats.value):
            parts.append(f"value {stats.value:g}")
        parts.append(f"{stats.elapsed:.1f}s")
        self.show("  ".join(parts))

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
            raise InputError(f"--opt {text!r} must look like KEY=VALUE")
        options[key] = value
    return options


def _number(value: float) -> str:
    return str(int(value)) if math.isfinite(value) and value == int(value) and abs(value) < 2**53 else f"{value:g}"


def _describe(problem) -> str:
    info = dict(problem.describe())
    kind = info.pop("kind", problem.kind)
    def show(value):
        if isinstance(value, (list, tuple)) and len(value) > 4:  # per-frame sizes of a long series
            return f"{min(value)}..{max(value)}"
        return value
    return kind + ": " + ", ".join(f"{k} {show(v)}" for k, v in info.items() if v is not None)


def _problem_for(path: str, requested: str | None, algo) -> str | None:
    """The interpretation to load: what the user asked; else the algorithm's kind when the file's
    format can hold it (a square .mtx becomes a flow network for dinic); else the format's default."""
    if requested:
        return requested
    if len(algo.problem_kinds) != 1:
        return None
    from .formats import detect
    try:
        fmt = detect(path)
    except InputError:
        return None  # load() reports it, with the file's name
    return algo.problem_kinds[0] if algo.problem_kinds[0] in fmt.problems else None


# ---------------------------------------------------------------------------------------------
# solve


TRACKING_OPTIONS = ("max_distance",)  # `solve` on a point series: options of solvers.track, not of the algorithm


def _cmd_solve(args) -> int:
    if args.backend == "cudasim":
        from .targets import enable_simulator
        enable_simulator()  # before anything below can import numba
    import solvers
    from . import registry
    from .formats import read_progress

    options = _parse_opts(args.opt)
    algo = registry.get(args.algo)
    # a bad option fails now, not after a long load
    algo.parse_options({k: v for k, v in options.items() if k not in TRACKING_OPTIONS})

    if args.out:
        _check_result_name(args.out)  # before a long solve, not after

    progress = _progress()
    try:
        if progress:
            progress.show(f"loading {args.path}")
        with read_progress(progress.loading(args.path) if progress else None):
            problem = solvers.load(args.path, problem=_problem_for(args.path, args.problem, algo))
        if progress:
            progress.clear()
        if problem.kind != "points":
            algo.parse_options(options)  # tracking options are an error here
        try:
            if problem.kind == "points":
                if args.out:
                    from .formats.tracks import check_name
                    check_name(args.out)  # tracks are CSV or JSON; refused before the solves
                outcome = _track(solvers, problem, algo.name, args.backend, progress, options, args.out)
            else:
                outcome = _solve(solvers, problem, algo.name, args.backend, progress, options, args.out)
        except (InfeasibleError, BackendUnavailable) as exc:
            raise UsageError(f"{args.path}: {exc}") from None
    finally:
        if progress:
            progress.clear()

    record, rows, failure = outcome
    if args.json:
        print(json.dumps(jsonable(dict(record, path=str(args.path)))))
    else:
        for key, value in [("file", str(args.path)), ("problem", _describe(problem)), *rows]:
            print(f"{key:<12}{value}")
    if failure:
        print(f"{PROG}: {args.path}: {failure}", file=sys.stderr)
        return EXIT_NOT_CERTIFIED
    return EXIT_OK


def _check_result_name(path) -> None:
    from pathlib import Path

    from .formats import RESULT_FORMATS
    from .formats.results import written_as
    if not any(written_as(path) in fmt.extensions for fmt in RESULT_FORMATS):
        choices = " ".join(p for fmt in RESULT_FORMATS for p in fmt.patterns)
        raise InputError(f"results are written as {choices} (tracks of a point series: *.csv *.json; "
                         "a name without an extension: CSV); give --out one of those names", str(path))
    folder = Path(path).parent
    if not folder.is_dir():
        raise InputError(f"cannot write file: no such folder {str(folder)!r}", str(path))


def _certified_text(certificate) -> str:
    """The summary's "certified" row: optimal, within the gap an epsilon-run claims, or NO."""
    status = certificate.status
    if status == "optimal":
        return "yes (optimal)"
    if status == "within-gap":
        return (f"yes, within gap {_number(certificate.gap)} of optimal "
                f"(an epsilon-run: it claims at most {_number(certificate.bound)})")
    return "NO"


def _solve(solvers, problem, algorithm, backend, progress, options, out):
    """(JSON record, summary rows, why it is not certified or None) of one certified solve."""
    result = solvers.solve(problem, algorithm, backend=backend, observer=progress, **options)
    if out:
        solvers.save(result, out, problem=problem)  # flow exports need the edge ends
    record = result.summary()
    rows = [("algorithm", f"{result.algorithm} on {result.backend}"),
            ("value", _number(result.value)),
            ("certified", _certified_text(result.certificate)),
            ("certificate", result.certificate.summary()),
            ("seconds", f"{result.seconds:.4f}"),
            ("iterations", str(result.iterations))]
    if out:
        record["out"] = str(out)
        rows.append(("written", str(out)))
    failure = None if result.certified else \
        f"the {result.algorithm} result is NOT certified: {result.certificate.summary()}"
    return record, rows, failure


def _track(solvers, series, algorithm, backend, progress, options, out=None):
    """A point series: every consecutive frame pair is a certified assignment (solvers.track).

    The JSON record has the keys of every solve (problem, algorithm, backend, value = total link
    distance, certified, optimal, seconds, iterations = assignment solves, gap = sum of the frame
    pairs' proven gaps, bound, certificate = a one-line summary over the frame pairs, options,
    stats) plus frames, links, tracks, accuracy, recall, max_distance and frame_stats."""
    if "assignment" not in solvers.algorithms()[algorithm].problem_kinds:
        raise InputError(f"tracking links frames by assignment; {algorithm} does not solve assignment problems",
                         series.source)
    tracked = solvers.track(series, algorithm=algorithm, backend=backend, observer=progress, **options)
    if out:
        solvers.save(tracked, out)
    stats = tracked.frame_stats
    summary = tracked.summary
    failed = [f"{s['frame']}-{s['frame'] + 1}" for s in stats if not s["certified"]]
    optimal = sum(s["status"] == "optimal" for s in stats)
    within = sum(s["status"] == "within-gap" for s in stats)
    used = next((s["backend"] for s in stats if s["solves"]), backend)
    cost = float(summary["cost"])
    gap = float(summary["gap"])
    bound = float(sum(s.get("bound", 0.0) for s in stats))
    certificate = (f"dual-potentials per frame pair: {len(stats) - len(failed)} of {len(stats)} certified "
                   f"({optimal} optimal" + (f", {within} within their epsilon gap" if within else "") + ")"
                   + (f", total gap {gap:g}" if gap else "")
                   + (f"; NOT certified: frame pairs {', '.join(failed)}" if failed else ""))
    gating = _gating_text(tracked)
    record = {"problem": "points", "algorithm": algorithm, "backend": used, "value": cost,
              "certified": not failed, "optimal": optimal == len(stats),
              "seconds": float(summary["seconds"]), "iterations": int(summary["solves"]),
              "gap": gap, "bound": bound, "certificate": certificate,
              "options": options,
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
    rows = [("algorithm", f"{algorithm} on {used}, {len(stats)} frame pairs"),
            ("value", f"{cost:g} (total link distance)"),
            ("links", f"{record['links']} in {record['tracks']} tracks, {summary['unmatched']} points unmatched"),
            ("gating", gating),
            ("accuracy", accuracy),
            ("certified", "yes (every frame pair)" if not failed else f"NO (frame pairs {', '.join(failed)})"),
            ("certificate", certificate),
            ("seconds", f"{record['seconds']:.4f}"),
            ("iterations", f"{record['iterations']} assignment solves")]
    if out:
        record["out"] = str(out)
        rows.append(("written", str(out)))
    failure = f"tracking is NOT certified for frame pairs {', '.join(failed)}" if failed else None
    return record, rows, failure


def _gating_text(tracked) -> str:
    summary = tracked.summary
    if tracked.gating == "off":
        return "off (plain rectangular assignment: min(n_t, n_t+1) links per frame pair)"
    pairs = f"{summary['gated_pairs']} of {len(tracked.frame_stats)} frame pairs gated"
    if tracked.gating == "fixed":
        return f"max_distance {tracked.max_distance:g} ({pairs})"
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
            raise argparse.ArgumentTypeError(f"{text!r} is not a valid {kind.__name__}") from None
    convert.__name__ = name
    return convert


def _gen_parser(kind: str | None, kinds: dict) -> _Parser:
    prog = f"{PROG} gen" + (f" {kind}" if kind else "")
    listing = "\n".join(f"  {name:<20} {entry.summary}".rstrip() for name, entry in kinds.items())
    parser = _Parser(prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
                     description="Write a seeded synthetic problem." + (
                         "" if kind else f"\n\nkinds:\n{listing}\n\n`{PROG} gen KIND --help` lists its parameters."))
    if kind is None:
        parser.add_argument("kind", metavar="KIND", choices=list(kinds), help="one of the kinds below")
        return parser
    entry = kinds[kind]
    parser.description = f"Write a seeded {kind} problem: {entry.summary}.\n\nImitates: {entry.family}."
    group = parser.add_argument_group(f"{kind} parameters")
    for name, param in entry.params.items():  # seed is declared by every kind
        flags = [f"--{name.replace('_', '-')}"] + ([f"--{name}"] if "_" in name else [])
        shown = "required" if param.required else "optional" if param.default is None else f"default {param.default}"
        group.add_argument(*flags, dest=name, metavar=name.upper(), type=_converter(name, param.type),
                           default=argparse.SUPPRESS, required=param.required, help=f"{param.help} ({shown})")
    parser.add_argument("--out", required=True, metavar="PATH",
                        help="file to write; the extension picks the format (see `matchscope formats`)")
    return parser


def _cmd_gen(argv: list[str]) -> int:
    from .generators import KINDS, generate
    from .api import save

    kind = argv[0] if argv and not argv[0].startswith("-") else None
    if kind not in KINDS:
        _gen_parser(None, KINDS).parse_args(argv)  # prints help, or raises the usage error naming the kinds
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
    from .targets import available_backends

    # This process may have imported numba already; a fresh `matchscope solve --backend cudasim` can always
    # switch the simulator on, so cudasim is available to CLI runs.
    here = set(available_backends()) | {"cudasim"}
    records = []
    for algo in solvers.algorithms().values():
        records.append({"name": algo.name, "problems": list(algo.problem_kinds),
                        "backends": list(algo.backends),
                        "available": [b for b in algo.backends if b in here],
                        "options": [{"name": o.name, "default": o.default,
                                     "choices": list(o.choices) if o.choices is not None else None,
                                     "help": o.help} for o in algo.options],
                        "summary": algo.summary, "reference": algo.reference})
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
            setting = f"--opt {opt['name']}={opt['default']}"
            choices = f" [{' | '.join(map(str, opt['choices']))}]" if opt["choices"] else ""
            print(f"    {setting:<28}{opt['help']}{choices}".rstrip())
        if rec["reference"]:
            print(f"    reference: {rec['reference']}")
    return EXIT_OK


def _format_records() -> list[dict]:
    from .formats import FORMATS, RESULT_FORMATS
    return [{"key": f.key, "name": f.name, "files": list(f.patterns), "problems": list(f.problems),
             "reads": f.read is not None, "writes": f.write is not None, "result": table is RESULT_FORMATS,
             "description": f.description}
            for table in (FORMATS, RESULT_FORMATS) for f in table]


def _cmd_formats(args) -> int:
    records = _format_records()
    if args.json:
        print(json.dumps(records))
        return EXIT_OK
    for title, results in (("Problem files (solve, gen --out, gui):", False), ("Results (solve --out):", True)):
        print(title)
        for r in (r for r in records if r["result"] == results):
            access = "read/write" if r["reads"] and r["writes"] else "read" if r["reads"] else "write"
            print(f"  {r['name']} ({access}: {', '.join(r['problems'])})  {' '.join(r['files'])}")
            print(f"      {r['description']}")
    return EXIT_OK


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
                           description="Load PATH, run ALGO, certify the answer independently. "
                                       "Exit 0 when certified, 1 when not, 2 on bad input.")
    solve.add_argument("path", metavar="PATH")
    solve.add_argument("--algo", required=True, metavar="NAME", help="algorithm (see `matchscope algos`)")
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
    sub.add_parser("gui", help="open the explorer (arguments go to the explorer; `gui --help`)", add_help=False)
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
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    return {"solve": _cmd_solve, "algos": _cmd_algos, "formats": _cmd_formats}[args.command](args)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(argv)
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


if __name__ == "__main__":
    sys.exit(main())
