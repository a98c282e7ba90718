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
