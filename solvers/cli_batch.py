"""`matchscope batch PATHS...`: many files solved on a Dask cluster (solvers.solve_many).

    matchscope batch graphs/*.mtx --algo gpr --out results.csv                 # a local cluster
    matchscope batch runs/*.npz --scheduler tcp://head:8786 --out tracks.csv   # an existing one

One row per file (item, kind, algorithm, backend, value, certified, seconds, wall_seconds, worker,
output, error), printed and, with --out, written as CSV or JSON; each item's own output (its
matching, assignment, flow, batch answers or tracks) goes into the folder beside it named after
--out (results.csv: results-items/). Both are written only at the end, through temporary names,
so an interrupted run (Ctrl-C) leaves neither. Exit 0 when every item is certified, 1 when any
failed or is not certified, 2 on bad input (one line).
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from .cli import BACKEND_CHOICES, EXIT_NOT_CERTIFIED, EXIT_OK, PROG, TRACKING_OPTIONS, _Parser, _parse_opts, _same_file
from .errors import InputError
from .io_util import atomic_write_text, check_output_name, jsonable
from .text import duration, plural

COLUMNS = ("item", "kind", "algorithm", "backend", "value", "certified", "seconds", "wall_seconds", "worker",
           "output", "error")


def build_parser() -> _Parser:
    parser = _Parser(prog=f"{PROG} batch", description=(
        "Solve many files on a Dask cluster and certify every answer: a local cluster (one worker per GPU "
        "where there are GPUs, else CPU workers) or an existing scheduler. Batch files are cut into chunks "
        "of many problems, point series into runs of frame pairs joined into whole tracks. Exit 0 when "
        "every item is certified, 1 when any failed or is not, 2 on bad input."))
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--algo", metavar="NAME", help="algorithm for every item (default: the fastest per item)")
    parser.add_argument("--backend", default="auto", choices=BACKEND_CHOICES, help="default auto")
    parser.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE",
                        help="an algorithm option (max_distance for point series); repeat for several")
    parser.add_argument("--scheduler", default="local", metavar="local|ADDRESS",
                        help="local: start a cluster on this machine (default); else a scheduler's address, "
                             "e.g. tcp://head:8786")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="workers of a local cluster (default: one per GPU, else one per core)")
    parser.add_argument("--out", metavar="PATH", help="write the rows (.csv or .json) and each item's output "
                                                      "into the folder beside it (NAME-items/)")
    return parser


def items_folder(out) -> Path:
    """Where the items' own outputs go: results.csv -> results-items/."""
    path = Path(out)
    stem = path.name.removesuffix(".gz")
    stem = stem[: -len(Path(stem).suffix)] if Path(stem).suffix else stem
    return path.with_name(f"{stem}-items")


def check_request(args) -> dict:
    """Everything that can be refused before a cluster starts: the algorithm, its options, --out."""
    from .formats.results import written_as
    options = _parse_opts(args.opt)
    if args.algo is not None:
        from . import registry
        algo = registry.get(args.algo)
        algo.parse_options({k: v for k, v in options.items() if k not in TRACKING_OPTIONS})
    elif set(options) - set(TRACKING_OPTIONS):  # each item would get its own algorithm, which may not take them
        raise InputError(f"--opt {sorted(set(options) - set(TRACKING_OPTIONS))[0]}=... needs --algo: options belong "
                         "to one algorithm")
    if "max_distance" in options:  # a point series' gate: refused here, not item by item on the workers
        from .tracking import gating_mode
        gating_mode(options["max_distance"], None)
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be at least 1, not {args.workers}")
    if args.out:
        if written_as(args.out) not in (".csv", ".json"):
            raise InputError("the rows are written as .csv or .json; give --out one of those names", str(args.out))
        for path in args.paths:
            if _same_file(args.out, path):
                raise InputError("--out names an input file; give the rows another name so the input is kept",
                                 str(args.out))
        check_output_name(args.out)
    return options


def cmd_batch(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    options = check_request(args)
    from .scale_out.cluster import connect, dashboard_link
    from .scale_out.progress import ProgressBar
    from .scale_out.run import submit_many
    client, cluster = connect(args.scheduler, args.workers, args.backend)
    run = None
    try:
        link = dashboard_link(client)
        workers = len(client.nthreads())
        print(f"{PROG}: {plural(workers, 'worker')}" + (f", dashboard {link}" if link else ""), file=sys.stderr)
        suffix = None
        if args.out:
            from .formats.results import written_as
            suffix = ".json" if written_as(args.out) == ".json" else ".csv"
        run = submit_many(args.paths, args.algo, args.backend, client, output_format=suffix, **options)
        bar = ProgressBar()
        try:
            for event in run:
                bar.update(event)
        finally:
            bar.clear()
        rows = run.results()
        if args.out:
            write_outputs(run, rows, args.out, suffix)
    except KeyboardInterrupt:
        if run is not None:
            run.cancel()
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    print_rows(rows)
    failed = [r for r in rows if not r.ok]
    if failed:
        print(f"{PROG}: {len(failed)} of {len(rows)} items failed or are NOT certified (first: {failed[0].item})",
              file=sys.stderr)
        return EXIT_NOT_CERTIFIED
    return EXIT_OK


def _without_name(error: str, item: str) -> str:
    """A file's own error line without its name (the row starts with it): "line 3: ..." or the rest."""
    if not error.startswith(f"{item}:"):
        return error
    line, sep, rest = error[len(item) + 1:].partition(": ")
    return f"line {line}: {rest}" if sep and line.isdigit() else error[len(item) + 1:].lstrip()


def _infeasible_part(row) -> str:
    """For a batch file with proven-infeasible problems: how many (its value sums the others)."""
    summary = row.result.summary() if hasattr(row.result, "infeasible") else None
    if not summary or not summary["infeasible"]:
        return ""
    return f" ({summary['infeasible']} of {summary['problems']} problems proven infeasible, not in the value)"


def print_rows(rows) -> None:
    for row in rows:
        if row.error:
            state = f"error: {_without_name(row.error, row.item)}"
        else:
            state = f"value {row.value:.12g}  certified {'yes' if row.certified else 'NO'}{_infeasible_part(row)}  " \
                    f"{duration(row.seconds)}  {row.algorithm} on {row.backend}  {row.worker}"
        print(f"{row.item}  {state}")


def output_name(row, suffix: str) -> str:
    stem = Path(row.item).name if row.item else f"item-{row.index}"
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", stem)[:80]
    return f"{row.index:04d}-{stem}{suffix}"


def write_outputs(run, rows, out, suffix: str) -> None:
    """The items' outputs into a temporary folder, renamed into place, then the rows (atomically)."""
    folder = items_folder(out)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name[:32]}.", dir=folder.parent))
    records = []
    try:
        for row, job in zip(rows, run.jobs):
            record = row.record()
            record["output"] = ""
            if row.result is not None:
                name = output_name(row, suffix)
                _write_item(row, job, staging / name, suffix)
                record["output"] = str(folder / name)
            records.append(record)
        _replace_folder(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if suffix == ".json":
        atomic_write_text(out, json.dumps(jsonable(records), indent=1) + "\n")
    else:
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        # yes/no cells as a CSV reader expects them (true / false), not Python's True / False
        writer.writerows({k: str(v).lower() if isinstance(v, bool) else v for k, v in r.items()} for r in records)
        atomic_write_text(out, text.getvalue())


def _write_item(row, job, path: Path, suffix: str) -> None:
    if row.output is not None:  # rendered where it was solved
        path.write_bytes(row.output)
    elif row.kind == "batch":
        from .formats.batch import save_batch_result
        from .scale_out.items import NpySlices
        costs = job.item.data
        save_batch_result(row.result, path, costs.read() if isinstance(costs, NpySlices) else costs)
    else:  # the tracks of a series
        from .api import save
        save(row.result, path)


def _replace_folder(staging: Path, folder: Path) -> None:
    old = None
    if folder.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{folder.name[:32]}.old.", dir=folder.parent))
        os.replace(folder, old / "previous")
    os.replace(staging, folder)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    from .cli import main
    sys.exit(main(["batch", *sys.argv[1:]]))
