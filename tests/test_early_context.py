"""The command line starts the GPU context in a background thread (solvers.targets.early_context),
so that it overlaps numba's import and the file reading. The driver calls are checked against a
stand-in driver here; on the GPU machine, numba-cuda must then run in that same primary context."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT

CHILD_WITH_FAKE_DRIVER = """
import ctypes, json, os, sys
calls = []
class FakeDriver:
    def __getattr__(self, name):
        def call(*args):
            calls.append(name)
            return 0
        return call
ctypes.CDLL = lambda name: calls.append(name) or FakeDriver()
from solvers.targets import early_context
early_context.start_cuda_context()
early_context.start_cuda_context()  # a second call starts nothing
early_context.wait_for_cuda_context()
print(json.dumps(calls))
"""


def run_child(code: str, **env) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT), **env}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_thread_retains_the_primary_context_once():
    import json
    calls = json.loads(run_child(CHILD_WITH_FAKE_DRIVER))
    assert calls == ["libcuda.so.1", "cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain"]


def test_the_simulator_starts_no_driver():
    import json
    assert json.loads(run_child(CHILD_WITH_FAKE_DRIVER, NUMBA_ENABLE_CUDASIM="1")) == []


def test_without_a_driver_the_thread_just_ends():
    out = run_child("""
        import ctypes
        def missing(name):
            raise OSError(name + ": cannot open shared object file")
        ctypes.CDLL = missing
        from solvers.targets import early_context
        early_context.start_cuda_context()
        early_context.wait_for_cuda_context()
        print("ended")
    """)
    assert out.strip() == "ended"


def test_a_cpu_solve_on_the_command_line_starts_no_context():
    out = run_child("""
        import sys
        from solvers.cli import main
        code = main(["solve", "sample_graphs/rmat_s9.mtx", "--algo", "pr-seq", "--backend", "cpu", "--json"])
        print("STARTED", "solvers.targets.early_context" in sys.modules, code)
    """)
    assert out.rsplit("STARTED", 1)[1].split() == ["False", "0"]


@pytest.mark.skipif(__import__("solvers.targets", fromlist=["gpu_present"]).gpu_present() is False,
                    reason="needs an NVIDIA GPU (run on the GPU machine)")
def test_numba_cuda_runs_in_the_context_started_early():
    out = run_child("""
        import ctypes
        from solvers.targets import early_context
        early_context.start_cuda_context()
        early_context.wait_for_cuda_context()
        driver = ctypes.CDLL("libcuda.so.1")
        device, ours = ctypes.c_int(0), ctypes.c_void_p(0)
        driver.cuDeviceGet(ctypes.byref(device), 0)
        driver.cuDevicePrimaryCtxRetain(ctypes.byref(ours), device)
        from numba import cuda
        theirs = cuda.current_context().handle
        theirs = getattr(theirs, "value", theirs)
        print("SAME", int(ours.value) == int(theirs))
    """)
    assert out.rsplit("SAME", 1)[1].strip() == "True"
