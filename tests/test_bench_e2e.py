"""The end-to-end benchmark (benchmarks/bench_e2e.py) runs its quick sizes and writes a table whose
answers agree with scipy's and are certified: a broken benchmark must not wait for the GPU machine
to be found out."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT


def test_quick_rows_write_the_table_and_agree_with_scipy(tmp_path):
    proc = subprocess.run([sys.executable, "benchmarks/bench_e2e.py", "--quick", "--backend", "cpu", "--repeat", "1",
                           "--no-warmup", "--rows", "dense-8000-int,rect-3000x9000,flow-grid-700", "--out",
                           str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (md,) = tmp_path.glob("e2e-*-quick.md")
    (js,) = tmp_path.glob("e2e-*-quick.json")
    header = md.read_text().splitlines()[4]
    for column in ("matchscope API e2e", "CLI e2e, fresh process", "CLI load", "solve-only", "host overhead", "scipy",
                   "lapx", "torch-linear-assignment", "vs scipy", "vs lapx", "goals"):
        assert column in header
    rows = json.loads(js.read_text())["rows"]
    assert [r["row"] for r in rows] == ["dense-8000-int", "rect-3000x9000", "flow-grid-700"]
    for r in rows:
        assert r["agree"], r
        assert r["api_default"]["certified"] == r["api_explicit"]["certified"] == "optimal"
        assert r["cli"]["certified"] is True and r["cli"]["wall"] > 0
        assert r["peers"]["scipy"]["value"] == r["api_explicit"]["value"]


def _bench_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_e2e", ROOT / "benchmarks" / "bench_e2e.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_e2e"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_peer_past_the_limit_is_stopped_and_reported_as_a_lower_bound():
    import threading
    bench = _bench_module()
    gate = threading.Event()  # never set: the child waits until it is killed (no wall-clock race)
    assert bench.bounded(lambda: gate.wait(), 0.2) == {"stopped_after": 0.2}
    assert bench.bounded(lambda: 41 + 1, 60)["value"] == 42
    row = {"row": "grid-1200-del20", "family": "matching", "shape": [10, 10], "edges": 2_000_000, "big": True,
           "api_default": {"e2e": 2.0, "solve": 1.8, "algorithm": "gpr", "backend": "cuda", "value": 5.0,
                           "certified": "optimal"},
           "cli": {"wall": 3.0, "algorithm": "gpr", "backend": "cuda", "value": 5.0, "certified": True},
           "peers": {"scipy": {"stopped_after": 150.0}, "scipy_file": {"stopped_after": 150.0}},
           "notes": [], "agree": True, "peers_differ": []}
    row["api_explicit"] = dict(row["api_default"])
    line = bench.table([row])[-1]
    assert "> 150 (stopped) / > 150 (stopped)" in line and "> 75x" in line


def test_the_host_overhead_pairs_each_solve_with_its_own_end_to_end_time(monkeypatch):
    """Each call's solve against its own end to end: medians taken apart set one call's solve
    against another's end to end (82% below, an overhead that most calls did not have)."""
    import types
    bench = _bench_module()
    solves = iter([1.0, 9.0, 1.0, 1.8])  # the untimed call, then three timed ones

    def fake_solve():
        return types.SimpleNamespace(seconds=next(solves))

    clock = iter([0.0, 10.0, 10.0, 20.0, 20.0, 22.0])  # the timed calls' end to end: 10, 10, 2
    monkeypatch.setattr(bench.time, "perf_counter", lambda: next(clock))
    e2e, solve, share, _ = bench.timed_api(fake_solve, 3)
    monkeypatch.undo()
    assert (e2e, solve) == (10.0, 1.8)  # medians apart would say 1 - 1.8 / 10 = 82%
    assert abs(share - 0.1) < 1e-12  # the calls' own shares: 10%, 90%, 10%
    assert bench.host_overhead({"e2e": 10.0, "solve": 9.0, "overhead": 0.1}) == 0.1
    assert bench.host_overhead({"e2e": 8.0, "solve": 6.0}) == 0.25  # results written before the shares


def test_merge_combines_runs_in_table_order_and_refuses_other_devices(tmp_path):
    def run_file(name, rows, device="GPU A"):
        path = tmp_path / name
        path.write_text(json.dumps({"date": "2026-11-25", "device": device, "backend": "auto", "quick": False,
                                    "python": "3", "numpy": "2", "rows": rows}))
        return str(path)

    def row(name, e2e):
        api = {"e2e": e2e, "solve": e2e / 2, "algorithm": "hungarian", "backend": "cuda", "value": 1.0,
               "certified": "optimal"}
        return {"row": name, "family": "rect", "shape": [3, 9], "edges": None, "big": False, "api_default": api,
                "api_explicit": api, "cli": {"wall": 1.0, "algorithm": "hungarian", "backend": "cuda"},
                "peers": {}, "notes": [], "agree": True}

    first = run_file("a.json", [row("rect-1000x20000", 1.0), row("dense-4000-real", 9.0)])
    second = run_file("b.json", [row("dense-4000-real", 2.0)])
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "benchmarks/bench_e2e.py", "--merge", first, second, "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    merged = json.loads((out / "e2e-2026-11-25-gpu-a.json").read_text())
    assert [(r["row"], r["api_default"]["e2e"]) for r in merged["rows"]] == [("dense-4000-real", 2.0),
                                                                            ("rect-1000x20000", 1.0)]
    other = run_file("c.json", [row("dense-4000-real", 2.0)], device="GPU B")
    proc = subprocess.run([sys.executable, "benchmarks/bench_e2e.py", "--merge", first, other, "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "different devices" in proc.stderr
