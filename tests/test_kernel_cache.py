"""Kernels compile once per machine (issue 12): a second process loads everything from the on-disk
cache and compiles nothing; an edited body is compiled again, never served stale; the cache lives
in a directory keyed by the compiled sources. Counted by numba's own compile events (and, for cuda
kernels, their dispatchers' cache misses) in fresh subprocesses."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import FULL_SWEEPS
from solvers.targets import cuda_available

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json, sys
import solvers
from solvers.targets.cache import cache_dir
from solvers.warmup import watch_compiles

backend = sys.argv[1]
graph = solvers.generate("random-bipartite", rows=40, cols=40, degree=3, seed=2)
found = {}
with watch_compiles(backend=backend) as watch:
    for name in sys.argv[2].split(","):
        algo = solvers.algorithms()[name]
        problem = graph if "matching" in algo.problem_kinds else None
        if problem is None and "assignment" in algo.problem_kinds:
            import numpy as np
            problem = np.random.default_rng(2).random((10, 10))
        if problem is None:
            problem = solvers.generate("washington-rlg", rows=3, cols=3, seed=2)
        events = []
        class Listen(solvers.Observer):
            def on_iteration(self, stats):
                events.append((stats.phase, stats.value))
        result = solvers.solve(problem, name, backend=backend, observer=Listen())
        found[name] = {"value": result.value, "certified": result.certified,
                       "initial": [v for p, v in events if p == "initial-matching"]}
print(json.dumps({"compiled": watch.compiled, "cache": str(cache_dir()), "found": found}))
"""


def with_path(env: dict, root: Path) -> dict:
    """``root`` first on PYTHONPATH, keeping what was there (a machine may carry its own wheels)."""
    rest = env.get("PYTHONPATH")
    return dict(env, PYTHONPATH=str(root) + (os.pathsep + rest if rest else ""))


def probe(backend: str, algorithms: str, env: dict, root: Path = ROOT) -> dict:
    env = with_path(env, root)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PROBE), backend, algorithms], cwd=root, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fresh_env(tmp_path: Path) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("NUMBA_CACHE_DIR", None)
    return env


CPU_SAMPLE = "pr-seq" if not FULL_SWEEPS else "pr-seq,gpr,hungarian,auction,wbpr,dinic,lsa"


def test_a_second_process_compiles_nothing_on_cpu(tmp_path):
    env = fresh_env(tmp_path)
    first = probe("cpu", CPU_SAMPLE, env)
    second = probe("cpu", CPU_SAMPLE, env)
    assert first["compiled"] > 0  # a fresh cache: everything compiled once
    assert second["compiled"] == 0, second
    assert first["cache"] == second["cache"] and first["cache"].startswith(str(tmp_path / "cache" / "matchscope"))
    assert all(r["certified"] for r in second["found"].values())
    assert first["found"] == second["found"]


def test_a_user_chosen_cache_directory_is_respected(tmp_path):
    env = dict(fresh_env(tmp_path), NUMBA_CACHE_DIR=str(tmp_path / "mine"))
    assert probe("cpu", "pr-seq", env)["cache"] == str(tmp_path / "mine")
    assert any((tmp_path / "mine").rglob("*.nbi"))


def test_editing_a_body_compiles_it_again_and_its_new_code_runs(tmp_path):
    """A body in one file (the greedy fill of solvers/matching/cheap.py) used by a loop elsewhere
    (pr-seq): after an edit, the next process compiles again and runs the edited code."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "solvers", copy / "solvers", ignore=shutil.ignore_patterns("__pycache__"))
    env = fresh_env(tmp_path)
    before = probe("cpu", "pr-seq", env, copy)
    cheap = copy / "solvers" / "matching" / "cheap.py"
    text = cheap.read_text()
    body = text.index("def greedy_fill(")
    first_statement = text.index("\n    ", text.index(":\n", body)) + 1
    if text[first_statement:].lstrip().startswith('"""'):  # after the docstring
        end = text.index('"""', text.index('"""', first_statement) + 3) + 3
        first_statement = text.index("\n", end) + 1
    cheap.write_text(text[:first_statement] + "    return  # edited: no greedy start\n" + text[first_statement:])
    after = probe("cpu", "pr-seq", env, copy)
    assert after["compiled"] > 0
    assert before["found"]["pr-seq"]["initial"][0] > 0 and after["found"]["pr-seq"]["initial"] == [0.0]
    assert after["found"]["pr-seq"]["value"] == before["found"]["pr-seq"]["value"]  # still maximum
    assert after["cache"] != before["cache"]  # a new source key: the old compiled code is never loaded


@pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU (run on the GPU machine)")
def test_a_second_process_compiles_nothing_on_cuda(tmp_path):
    env = fresh_env(tmp_path)
    algorithms = "gpr,hungarian,auction,wbpr"
    first = probe("cuda", algorithms, env)
    second = probe("cuda", algorithms, env)
    assert first["compiled"] > 0
    assert second["compiled"] == 0, second
    assert all(r["certified"] for r in second["found"].values())


def test_cpu_runs_never_import_numba_cuda(tmp_path):
    """A cpu process has no use for numba.cuda (a third of a second to import): every compiled
    algorithm runs on cpu without loading it."""
    code = """
        import sys
        import numpy as np
        import solvers
        graph = solvers.generate("random-bipartite", rows=30, cols=30, degree=3, seed=1)
        network = solvers.generate("washington-rlg", rows=3, cols=3, seed=1)
        costs = np.random.default_rng(1).random((12, 12))
        for name in ("gpr", "pr-seq", "hopcroft-karp"):
            assert solvers.solve(graph, name, backend="cpu").certified
        for name in ("wbpr", "dinic"):
            assert solvers.solve(network, name, backend="cpu").certified
        for name in ("hungarian", "auction", "lsa"):
            assert solvers.solve(costs, name, backend="cpu").certified
        assert "numba" in sys.modules and "numba.cuda" not in sys.modules, "numba.cuda was imported"
    """
    env = with_path(dict(os.environ), ROOT)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]

