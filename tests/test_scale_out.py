"""Scale-out on Dask (issue 16): solve_many on a LocalCluster of two worker processes gives what one
process gives, loses nothing when a worker dies mid-run, reports a bad item in its row, and joins a
series' runs into the whole series' tracks; `matchscope batch` writes nothing when interrupted."""
from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest

distributed = pytest.importorskip("distributed", reason="dask is not installed here: pip install 'matchscope[dask]'")

import solvers  # noqa: E402
from solvers.cli import main  # noqa: E402
from solvers.scale_out import Batch, solve_many, submit_many  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       env={"NUMBA_NUM_THREADS": "1"})
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _mtx_files(folder, count):
    paths = []
    for k in range(count):
        path = folder / f"g{k}.mtx"
        solvers.save(solvers.generate("random-bipartite", rows=30 + k, cols=30, degree=3, seed=k), path)
        paths.append(str(path))
    return paths


def _series(seed, frames=25, n=80):
    return solvers.generate("particles", n=n, frames=frames, seed=seed, speed=0.02, enter_rate=0.05, leave_rate=0.05)


def _same_answer(got, want):
    assert got.item == want.item and got.kind == want.kind and got.error is None and want.error is None
    assert got.certified and want.certified
    assert got.value == pytest.approx(want.value, rel=1e-12, abs=1e-12)
    a, b = got.result, want.result
    if got.kind == "problem":
        assert np.array_equal(a.row_match, b.row_match)
    elif got.kind == "batch":
        assert len(a.assignments) == len(b.assignments) == len(a)
        assert all(np.array_equal(x, y) for x, y in zip(a.assignments, b.assignments))
        assert np.array_equal(a.values, b.values) and a.all_certified
    else:
        assert a.tracks == b.tracks and a.accuracy == b.accuracy
        assert all(np.array_equal(x, y) for x, y in zip(a.links, b.links))


def test_fifty_mixed_items_equal_one_process(client, tmp_path):
    rng = np.random.default_rng(5)
    items = (_mtx_files(tmp_path, 20) + [rng.random((12 + k % 5, 12)) for k in range(20)]
             + [_series(s) for s in range(5)] + [rng.random((150, 6, 6)) for _ in range(4)]
             + [Batch([rng.random((5, 7)), rng.random((8, 6))] * 70)])
    assert len(items) == 50
    here = solve_many(items)
    there = solve_many(items, client=client)
    assert [r.index for r in there] == list(range(50))
    for got, want in zip(there, here):
        _same_answer(got, want)
    workers = set(client.nthreads())
    assert {w for r in there for w in r.worker.split()} <= workers
    assert any(len(r.worker.split()) == 2 for r in there if r.kind in ("batch", "series"))  # split over both
    assert {r.worker for r in here} == {"this process"}
    # the single-process run is the plain API's
    assert np.array_equal(here[20].result.row_match, solvers.solve(items[20]).row_match)
    assert here[40].result.tracks == solvers.track(items[40]).tracks


def _kill_once(marker):
    """On each worker: the solve of a 7 x 7 matrix kills its worker process the first time it runs
    anywhere (the marker file says it has), so dask must run it again elsewhere."""
    import solvers.scale_out.tasks as tasks
    original = getattr(tasks, "_unpatched_solve", tasks.solve_problem)

    def solve_or_die(data, algorithm, backend, options):
        if isinstance(data, np.ndarray) and data.shape == (7, 7) and not os.path.exists(marker):
            with open(marker, "w") as f:
                f.write(str(os.getpid()))
            os._exit(1)
        return original(data, algorithm, backend, options)

    tasks._unpatched_solve = original
    tasks.solve_problem = solve_or_die


def _restore():
    import solvers.scale_out.tasks as tasks
    tasks.solve_problem = getattr(tasks, "_unpatched_solve", tasks.solve_problem)


def test_worker_killed_mid_run_loses_nothing(client, tmp_path):
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    marker = str(tmp_path / "killed")
    client.run(_kill_once, marker)
    rng = np.random.default_rng(9)
    items = [rng.random((20, 20)) for _ in range(24)]
    items[10] = rng.random((7, 7))
    try:
        rows = solve_many(items, "lsa", client=client)
    finally:
        client.wait_for_workers(2)
        client.run(_restore)
    assert os.path.exists(marker)  # a worker did die
    assert [r.index for r in rows] == list(range(24))  # each item once, in order
    assert all(r.error is None and r.certified for r in rows)
    for row, costs in zip(rows, items):
        assert row.value == pytest.approx(solvers.solve(costs, "lsa").value)


def test_bad_items_are_rows_the_rest_finish(client, tmp_path):
    good = _mtx_files(tmp_path, 3)
    bad = tmp_path / "bad.mtx"
    bad.write_text("this is not a matrix\n")
    infeasible = np.array([[np.inf, np.inf], [1.0, 2.0]])
    items = [good[0], str(bad), good[1], infeasible, str(tmp_path / "missing.npy"), good[2]]
    rows = solve_many(items, client=client)
    assert [r.ok for r in rows] == [True, False, True, False, False, True]
    for row in (rows[1], rows[3], rows[4]):
        assert row.error and "\n" not in row.error and "Traceback" not in row.error and "Error" not in row.error
    assert rows[1].error.startswith(str(bad)) and rows[4].error.endswith("no such file")


@pytest.mark.parametrize("max_distance", ["auto", 0.05, None])
def test_stitched_tracks_equal_one_process(client, max_distance):
    series = _series(11, frames=30, n=150)
    whole = solvers.track(series, max_distance=max_distance)
    [row] = solve_many([series], client=client, max_distance=max_distance)
    got = row.result
    assert len(row.worker.split()) == 2  # the runs went to both workers
    assert got.tracks == whole.tracks and got.accuracy == whole.accuracy
    assert all(np.array_equal(a, b) for a, b in zip(got.links, whole.links))
    assert got.max_distance == whole.max_distance and got.gating == whole.gating
    timing = ("seconds", "solve_seconds")
    assert {k: v for k, v in got.summary.items() if k not in timing} == \
        {k: v for k, v in whole.summary.items() if k not in timing}
    for a, b in zip(got.frame_stats, whole.frame_stats):
        assert {k: v for k, v in a.items() if k not in timing} == {k: v for k, v in b.items() if k not in timing}
    if max_distance == "auto":
        assert whole.summary["gate_rounds"] >= 1 and whole.summary["gated_pairs"] >= 1


def test_progress_events_from_a_thread_and_cancel(client):
    rng = np.random.default_rng(3)
    run = submit_many([rng.random((30, 30)) for _ in range(12)], "lsa", client=client)
    first_task, cancelled = threading.Event(), threading.Event()
    events = []

    def consume():
        for event in run:
            events.append(event)
            if event.event == "task" and not first_task.is_set():
                first_task.set()
                cancelled.wait(30)

    thread = threading.Thread(target=consume)
    thread.start()
    assert first_task.wait(60)
    run.cancel()
    cancelled.set()
    thread.join(60)
    assert events[0].event == "started" and events[-1].event == "cancelled"
    task = next(e for e in events if e.event == "task")
    assert task.worker in client.nthreads() and task.total == 12 and task.label.startswith("item ")
    with pytest.raises(solvers.Cancelled):
        run.results()


def _cli_inputs(folder):
    paths = _mtx_files(folder, 3)
    np.save(folder / "costs.npy", np.random.default_rng(1).random((20, 20)))
    bad = folder / "bad.mtx"
    bad.write_text("nonsense\n")
    return paths + [str(folder / "costs.npy"), str(bad)]


def test_cli_batch_on_a_scheduler_address(client, tmp_path, capsys):
    import csv
    paths = _cli_inputs(tmp_path)
    out = tmp_path / "results.csv"
    code = main(["batch", *paths, "--scheduler", client.scheduler.address, "--out", str(out)])
    assert code == 1  # the bad file
    rows = list(csv.DictReader(out.open()))
    assert [r["item"] for r in rows] == paths
    assert [r["certified"] for r in rows] == ["true"] * 4 + ["false"]
    assert rows[4]["error"].startswith(paths[4]) and all(r["worker"] in client.nthreads() for r in rows[:4])
    for r in rows[:4]:
        assert os.path.getsize(r["output"]) > 0 and os.path.dirname(r["output"]) == str(tmp_path / "results-items")
    said = capsys.readouterr()
    assert "2 workers" in said.err and "1 of 5 items failed" in said.err
    shown = [line for line in said.out.splitlines() if line.startswith(paths[4])]
    assert shown == [f"{paths[4]}  error: line 1: {rows[4]['error'].split(': ', 1)[1]}"]  # named once, in its row
    assert paths[4] + ":" not in said.out + said.err


@pytest.mark.parametrize("where", ["progress", "_write_item"])
def test_cli_batch_interrupted_leaves_no_output(client, tmp_path, monkeypatch, where):
    import solvers.cli_batch as cli_batch
    from solvers.scale_out.progress import ProgressBar
    paths = _cli_inputs(tmp_path)
    before = set(os.listdir(tmp_path))

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(*((ProgressBar, "update") if where == "progress" else (cli_batch, where)), interrupt)
    out = tmp_path / "results.csv"
    code = main(["batch", *paths, "--scheduler", client.scheduler.address, "--out", str(out)])
    assert code == 130
    assert set(os.listdir(tmp_path)) == before  # no rows, no items folder, no temporary names


def test_cli_batch_refuses_bad_requests_in_one_line(tmp_path, capsys, monkeypatch):
    import solvers.scale_out.cluster as cluster
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "1s")
    paths = _cli_inputs(tmp_path)
    assert main(["batch", paths[0], "--algo", "no-such"]) == 2
    assert main(["batch", paths[0], "--out", str(tmp_path / "rows.mtx")]) == 2
    assert main(["batch", paths[0], "--out", paths[0]]) == 2
    assert main(["batch", paths[0], "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path / "r.csv")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 4 and all(line.startswith("error: ") for line in lines)
    assert not (tmp_path / "r.csv").exists()


def test_a_batch_file_is_read_by_the_workers_in_chunks(client, tmp_path):
    from solvers.scale_out.items import NpySlices, classify
    costs = np.random.default_rng(4).random((200, 9, 9))
    path = tmp_path / "laps.npy"
    np.save(path, costs)
    assert isinstance(classify(0, str(path), None).data, NpySlices)  # not read here: the workers read their chunks
    [row] = solve_many([str(path)], client=client)
    want = solvers.solve_batch(costs)
    assert row.kind == "batch" and row.certified and len(row.worker.split()) == 2
    assert np.array_equal(row.result.assignments, want.assignments) and np.array_equal(row.result.values, want.values)


def test_a_batch_file_row_says_how_many_of_its_problems_are_proven_infeasible(client, tmp_path, capsys):
    """"certified yes" for a batch file holding an infeasible problem (proven so) must not read as
    every problem answered: the row counts them, and says the value leaves them out."""
    costs = np.random.default_rng(5).random((6, 4, 4))
    costs[2, 1, :] = np.inf  # row 1 of problem 2 has no allowed pair
    path = tmp_path / "laps.npy"
    np.save(path, costs)
    code = main(["batch", str(path), "--scheduler", client.scheduler.address])
    shown = [line for line in capsys.readouterr().out.splitlines() if line.startswith(str(path))]
    assert code == 0 and len(shown) == 1
    assert "certified yes (1 of 6 problems proven infeasible, not in the value)" in shown[0]
    np.save(path, costs[[0, 1, 3]])
    main(["batch", str(path), "--scheduler", client.scheduler.address])
    assert "infeasible" not in capsys.readouterr().out


def test_a_refused_item_of_a_chunked_batch_is_named_by_its_number_in_the_batch(client, tmp_path):
    costs = np.random.default_rng(5).random((200, 9, 9))
    costs[150, 2, 3] = np.nan  # not in the first chunk
    path = tmp_path / "laps.npy"
    np.save(path, costs)
    [row] = solve_many([str(path)], client=client)
    assert row.error is not None and "item 150: the cost at row 2, column 3 (0-based) is NaN" in row.error, row.error


def test_workers_sharing_a_gpu_each_see_that_gpu_only(monkeypatch):
    """gpu_cluster(per_gpu=2): two workers per device, each with CUDA_VISIBLE_DEVICES naming it (the
    single-GPU measurement of issue 16); no GPU is needed to start them."""
    import distributed

    import socket
    import warnings

    from solvers.scale_out.cluster import DASHBOARD_PORT, gpu_cluster
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    # with Dask's usual dashboard port taken (another run, a notebook's cluster) it starts silently
    taken = socket.socket()
    try:
        taken.bind(("", DASHBOARD_PORT))
        taken.listen()
    except OSError:
        pass  # something else holds it already: the same case
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        cluster = gpu_cluster(1, 1, per_gpu=2)
    taken.close()
    assert not [w for w in said if "already in use" in str(w.message)], [str(w.message) for w in said]
    try:
        with distributed.Client(cluster) as client:
            client.wait_for_workers(2)
            seen = client.run(lambda: __import__("os").environ.get("CUDA_VISIBLE_DEVICES"))
        assert sorted(seen.values()) == ["3", "3"]
    finally:
        cluster.close()


def test_a_truncated_batch_file_is_its_row_with_the_readers_line(tmp_path):
    """The workers map a .npy batch; a truncated one is refused before that, in the reader's words."""
    good = tmp_path / "good.npy"
    np.save(good, np.random.default_rng(2).random((70, 5, 5)))
    cut = tmp_path / "cut.npy"
    cut.write_bytes(good.read_bytes()[:-800])
    rows = solvers.solve_many([str(cut), str(good)])
    assert rows[0].error and "cut.npy" in rows[0].error and "truncated" in rows[0].error and "\n" not in rows[0].error
    assert rows[1].error is None and rows[1].certified


def test_gpu_workers_get_chunks_that_fill_a_gpu(client):
    """On GPUs a chunk is one batch call of one block per item, so it holds 1024 items (fewer only
    when they pass 1 GiB); on CPUs the same batch is cut four ways per worker."""
    from solvers.scale_out.items import NpySlices, batch_chunks
    from solvers.scale_out.run import _solves_on_gpu
    laps = NpySlices("laps.npy", 0, 3000, item_bytes=512 * 512 * 4)
    assert [len(c) for _, c in batch_chunks(laps, 2, gpu=True)] == [1024, 1024, 952]
    assert [len(c) for _, c in batch_chunks(laps, 2, gpu=False)] == [375] * 8
    big = NpySlices("big.npy", 0, 500, item_bytes=4000 * 4000 * 8)  # 128 MB items: 8 fill 1 GiB, 64 at least
    assert [first for first, _ in batch_chunks(big, 2, gpu=True)] == list(range(0, 500, 64))
    ragged = [np.zeros((n, n), np.float32) for n in (10, 500, 20) * 700]
    assert [len(c) for _, c in batch_chunks(ragged, 3, gpu=True)] == [1024, 1024, 52]
    assert len(batch_chunks(ragged, 1, gpu=True)) == 1  # one worker: one task
    assert _solves_on_gpu(client, "cuda") and not _solves_on_gpu(client, "cpu") and not _solves_on_gpu(None, "auto")
    assert not _solves_on_gpu(client, "auto")  # these workers have no GPU


def test_the_progress_bar_counts_failed_items_and_stays_off_logs():
    import io

    from solvers.scale_out.progress import Progress, ProgressBar

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    events = [Progress("started", 0, 3, 0, 2), Progress("item", 1, 3, 1, 2, 0, "bad.mtx", error="bad.mtx:1: no"),
              Progress("item", 3, 3, 2, 2, 1, "good.mtx")]
    screen, log = Terminal(), io.StringIO()
    for stream in (screen, log):
        bar = ProgressBar(stream)
        for event in events:
            bar.update(event)
        assert bar.failed == 1
    assert screen.getvalue().rstrip().endswith("3/3 tasks, 2/2 items, 1 failed") and log.getvalue() == ""


def test_cli_batch_out_naming_a_folder_is_one_line_and_writes_nothing(tmp_path, capsys):
    folder = tmp_path / "h"
    folder.mkdir()
    assert main(["batch", "sample_graphs/dense-lap_50.npy", "--out", str(folder), "--workers", "1"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {folder}: cannot write file: it is a folder"]
    assert [p.name for p in tmp_path.iterdir()] == ["h"]  # no h-items folder either


def test_cli_batch_options_without_an_algorithm_are_refused_in_one_line(tmp_path, capsys):
    """Without --algo each item gets its own algorithm, so an option cannot be checked: refused (exit 2)
    before anything runs; the tracking option max_distance stays allowed."""
    assert main(["batch", "sample_graphs/dense-lap_50.npy", "--opt", "foo=1", "--out", str(tmp_path / "r.csv")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == ["error: --opt foo=... needs --algo: options belong to one algorithm"]
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("gate", ["far", "-1"])
def test_cli_batch_refuses_a_bad_gate_before_any_cluster(tmp_path, capsys, gate):
    """A bad max_distance is the request's fault, not an item's: exit 2 and one line quoting it as
    given, before a cluster starts (it had come back as a failed row of each point series, exit 1)."""
    out = tmp_path / "r.csv"
    argv = ["batch", "sample_graphs/particles_100x10.npz", "--opt", f"max_distance={gate}", "--out", str(out)]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: max_distance must be a positive number, auto or off, not {gate}"]
    assert not list(tmp_path.iterdir())
