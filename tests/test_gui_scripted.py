"""Scripted mode in a child process, as `python -m explorer ... --quit` and `matchscope gui ...` run it:
open, run to the end, screenshots of the window and of every tab, exit codes for good and bad input."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test_gui_fakes import assert_real_content, colourful_fraction, configure_qt_platform, load_png, small_graph

configure_qt_platform()

import solvers  # noqa: E402
from conftest import child_pythonpath

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent
SHOTS = Path(os.environ.get("EXPLORER_SHOTS", "/tmp/explorer-shots"))


def explorer(*args: str, home: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), XDG_CONFIG_HOME=str(home))  # settings away from the user's
    return subprocess.run([sys.executable, "-m", "explorer", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_scripted_run_saves_screenshots_of_every_view(tmp_path):
    graph = small_graph(5, 200)
    path = tmp_path / "graph.mtx"
    solvers.save(graph, str(path))
    out, views = tmp_path / "window.png", tmp_path / "views"
    proc = explorer(str(path), "--algo", "pr-seq", "--backend", "cpu", "--opt", "k=0.5", "--run",
                    "--screenshot", str(out), "--screenshot-views", str(views), "--quit", home=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("error:") == 0
    window = load_png(out)
    assert window.shape[:2] == (900, 1440)  # the default scripted size
    assert_real_content(window, "scripted window")
    files = sorted(p.name for p in views.glob("*.png"))
    assert files == ["01-labels.png", "02-activity.png", "03-workload.png", "04-3d.png", "05-batch.png",
                     "06-compare.png", "07-cluster.png"]
    for name in ("01-labels.png", "02-activity.png", "06-compare.png"):
        assert_real_content(load_png(views / name), f"scripted {name}")
    # pr-seq reports no per-warp workload and a graph is no point series nor batch: those tabs explain, in grey
    for name in ("03-workload.png", "04-3d.png", "05-batch.png", "07-cluster.png"):
        assert colourful_fraction(load_png(views / name)) < 0.001, name
    SHOTS.mkdir(parents=True, exist_ok=True)
    for p in [out, *views.glob("*.png")]:
        (SHOTS / f"scripted-{p.name}").write_bytes(p.read_bytes())


def test_scripted_bad_inputs_exit_2_with_one_line(tmp_path):
    good = tmp_path / "good.mtx"
    solvers.save(small_graph(2, 20), str(good))
    proc = explorer(str(good), "--algo", "no-such-algo", "--run", "--quit", home=tmp_path)
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: there is no algorithm called no-such-algo; for matching problems choose from ")
    assert "pr-seq" in last and "<options>" not in last and "'" not in last
    proc = explorer(str(good), "--opt", "oops", "--quit", home=tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1] == "error: --opt expects K=V, not oops"
    proc = explorer(str(good), "--size", "big", "--quit", home=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: --size must be WIDTHxHEIGHT in pixels, each 200 to 20000 (e.g. 1440x900), "
                                   "not big")
    # an option the form refuses (eps_factor must be more than 1) is refused before anything runs
    costs = tmp_path / "costs.npy"
    solvers.save(solvers.generate("dense-lap", n=6, seed=1), str(costs))
    proc = explorer(str(costs), "--algo", "auction", "--opt", "eps_factor=-1e15", "--run", "--quit", home=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == "error: option eps_factor must be more than 1 and at most 1e+06, not -1e15"


def test_matchscope_gui_reports_a_bad_file_as_path_line_message(tmp_path):
    """`matchscope gui ARGS` hands ARGS to explorer.app.main; a malformed file exits 2 with its one line."""
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 7\n")
    with pytest.raises(solvers.InputError) as expected:
        solvers.load(str(bad))
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), XDG_CONFIG_HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "solvers", "gui", str(bad), "--algo", "pr-seq", "--run",
                           "--screenshot", str(tmp_path / "x.png"), "--quit"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == f"error: {expected.value}"
    assert str(expected.value).startswith(f"{bad}:3: ")
    # the screenshot shows the window in its error state (no dataset, the error in the status bar)
    shot = load_png(tmp_path / "x.png")
    assert shot.shape[:2] == (900, 1440)


def chart_areas(rgb, rows: int, cols: int = 1, top: float = 0.07):
    """The image below the tab bar and tool row, cut into rows x cols chart areas."""
    h, w = rgb.shape[:2]
    body = rgb[int(h * top):]
    bh, bw = body.shape[0] // rows, w // cols
    return [body[r * bh:(r + 1) * bh, c * bw:(c + 1) * bw] for r in range(rows) for c in range(cols)]


def coloured_runs(area, min_height: float = 0.15) -> int:
    """Separate columns of data (boxes, bars) across an area: runs of pixel columns in which at
    least ``min_height`` of the pixels are clearly coloured (legend swatches are lower)."""
    rgb = area.astype(np.int16)
    filled = (rgb.max(axis=2) - rgb.min(axis=2) > 60).mean(axis=0) >= min_height
    return int(np.count_nonzero(filled[1:] & ~filled[:-1]) + filled[0])


def test_scripted_gpr_run_populates_every_chart(tmp_path):
    """A real telemetry solver (gpr on the cpu) on a bundled sample: every chart of the labels,
    activity, workload and compare tabs holds data, not an empty frame."""
    sample = ROOT / "sample_graphs" / "random-bipartite_200x200_d3.mtx"
    out, views = tmp_path / "window.png", tmp_path / "views"
    proc = explorer(str(sample), "--algo", "gpr", "--backend", "cpu", "--run", "--screenshot", str(out),
                    "--screenshot-views", str(views), "--quit", home=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_real_content(load_png(out), "scripted gpr window")
    labels = load_png(views / "01-labels.png")
    heat, bottom = chart_areas(labels, 2)
    assert colourful_fraction(heat) > 0.2, "the heatmap fills its chart"  # one narrow column does not
    hist, traces = chart_areas(bottom, 1, 2, top=0.1)
    assert colourful_fraction(hist) > 0.02 and colourful_fraction(traces) > 0.02  # traces: points, lines
    for i, area in enumerate(chart_areas(load_png(views / "02-activity.png"), 3)):
        assert colourful_fraction(area) > 0.003, f"activity chart {i}"
    boxes, imbalance = chart_areas(load_png(views / "03-workload.png"), 2)
    assert coloured_runs(boxes) >= 3, "a box per snapshotted launch"
    assert colourful_fraction(imbalance) > 0.002
    compare = load_png(views / "06-compare.png")
    table, charts = chart_areas(compare, 2)
    active, objective = chart_areas(charts[: charts.shape[0] // 2], 1, 2, top=0.0)
    assert colourful_fraction(active) > 0.002 and colourful_fraction(objective) > 0.002
    SHOTS.mkdir(parents=True, exist_ok=True)
    for p in [out, *views.glob("*.png")]:
        (SHOTS / f"scripted-gpr-{p.name}").write_bytes(p.read_bytes())


def test_scripted_dinic_reads_a_square_mtx_as_a_flow_network(tmp_path):
    """`matchscope gui graph.mtx --algo dinic --run` reads the file as a flow network, as `matchscope
    solve` does; `--problem` chooses the reading explicitly (a flow algorithm on a matching is refused)."""
    path = tmp_path / "graph.mtx"
    path.write_text("%%MatrixMarket matrix coordinate integer general\n4 4 4\n1 2 3\n2 4 2\n1 3 1\n3 4 5\n")
    out = tmp_path / "window.png"
    proc = explorer(str(path), "--algo", "dinic", "--run", "--screenshot", str(out), "--quit", home=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert load_png(out).shape[:2] == (900, 1440)
    proc = explorer(str(path), "--problem", "matching", "--algo", "dinic", "--run", "--quit", home=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "error: dinic cannot run on matching problems (read the file as flow to run it")


def test_numba_cuda_performance_hints_are_off_in_the_explorer(tmp_path):
    """Small GPU runs got a numba-cuda 'grid size ... under-utilization' warning per kernel: the
    explorer turns those hints off before numba reads its configuration, as `matchscope solve` does."""
    path = tmp_path / "graph.mtx"
    solvers.save(small_graph(3, 20), str(path))
    code = ("import sys; from explorer.app import main; code = main(sys.argv[1:]); "
            "from numba.core import config; "
            "print(code, config.CUDA_LOW_OCCUPANCY_WARNINGS, config.CUDA_WARN_ON_IMPLICIT_COPY)")
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), XDG_CONFIG_HOME=str(tmp_path))
    for name in ("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "NUMBA_ENABLE_CUDASIM"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-c", code, str(path), "--algo", "gpr", "--backend", "cpu", "--run",
                           "--quit"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[-1] == "0 0 0"
