"""Shared test fixtures.

``run_cudasim(code)`` runs a Python snippet in a fresh process with NUMBA_ENABLE_CUDASIM=1 (the
simulator must be chosen before numba is imported, so it cannot share this process) and returns
its stdout; a non-zero exit fails the test with the child's stderr. The child first imports
tests/cudasim_fix.py, which fixes a shared-memory race in the simulator itself. A module may name
its longest simulator script ``EARLY_CUDASIM`` (read by its fixture ``EARLY_CUDASIM_FIXTURE``): it
starts when the tests are collected, on the core pytest leaves idle, and ``run_early_cudasim``
collects its output.

``sweep(full, sample)`` sizes a randomized sweep: ``full`` instances under ``make test-all``
(MATCHSCOPE_FULL_SWEEPS=1), a ``sample`` of the same seeded stream under ``make test`` (CI).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
FULL_SWEEPS = os.environ.get("MATCHSCOPE_FULL_SWEEPS") == "1"

# make test draws the same examples every run (a property test must not pass or fail by the draw);
# make test-all (MATCHSCOPE_FULL_SWEEPS=1) draws new ones each time, to keep exploring
settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=not FULL_SWEEPS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def gpu_present() -> bool:
    """Whether an NVIDIA GPU can be used here (for tests marked skipif(not gpu_present()))."""
    from solvers.targets import cuda_available
    return cuda_available()


def child_pythonpath() -> str:
    """PYTHONPATH for a test's subprocess: this checkout first, then whatever the caller's has (on the
    GPU machine its carried numpy and plyfile live there)."""
    return os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


def _cudasim_child(code: str) -> subprocess.Popen:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=child_pythonpath())
    prelude = f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r}); import cudasim_fix\n"
    return subprocess.Popen([sys.executable, "-c", prelude + textwrap.dedent(code)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen, timeout: float) -> str:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"cudasim child ran past {timeout:.0f} s")
    if proc.returncode != 0:
        pytest.fail(f"cudasim child exited {proc.returncode}:\n{err[-4000:]}")
    return out


def _run_cudasim(code: str, timeout: float = 900) -> str:
    return _finish(_cudasim_child(code), timeout)


_EARLY_CHILDREN: dict[str, subprocess.Popen] = {}


def pytest_collection_finish(session):
    """A test module's ``EARLY_CUDASIM`` script (a long simulator run its tests share through the
    fixture ``EARLY_CUDASIM_FIXTURE``) starts now when a selected test uses that fixture, beside the
    tests before it: pytest runs one test at a time, so the second core is idle."""
    for item in session.items:
        module = getattr(item, "module", None)
        code = getattr(module, "EARLY_CUDASIM", None)
        fixture = getattr(module, "EARLY_CUDASIM_FIXTURE", None)
        if code and fixture in getattr(item, "fixturenames", ()) and module.__name__ not in _EARLY_CHILDREN:
            _EARLY_CHILDREN[module.__name__] = _cudasim_child(code)  # a selected test reads it


def pytest_sessionfinish(session):
    for child in _EARLY_CHILDREN.values():  # its module's tests did not get to it (a failure, -x)
        if child.poll() is None:
            child.kill()
        child.communicate()
    _EARLY_CHILDREN.clear()


def run_early_cudasim(module_name: str, code: str, timeout: float = 900) -> str:
    """The stdout of ``code`` (the module's EARLY_CUDASIM), from the child started at collection when
    there is one (else started now); fails the test as run_cudasim does."""
    child = _EARLY_CHILDREN.pop(module_name, None) or _cudasim_child(code)
    return _finish(child, timeout)


def result_line(text: str):
    """The JSON a simulator script printed last on a line starting ``RESULT `` (its findings)."""
    import json
    line = [x for x in text.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def _run_cudasim_shards(code: str, shards: int = 2, timeout: float = 900) -> list[str]:
    """``code`` run by ``shards`` simulator processes at once (one per core), each with SHARD and
    SHARDS defined (shard k takes every SHARDS-th case from k); their stdouts, in shard order."""
    children = [_cudasim_child(f"SHARD, SHARDS = {k}, {shards}\n" + textwrap.dedent(code)) for k in range(shards)]
    try:
        return [_finish(child, timeout) for child in children]
    finally:  # one shard failed: the others must not run on for minutes
        for child in children:
            if child.poll() is None:
                child.kill()
                child.communicate()


@pytest.fixture
def sweep():
    """sweep(full, sample) -> how many instances this run draws (the first ones of the same stream)."""
    def size(full: int, sample: int) -> int:
        return full if FULL_SWEEPS else min(sample, full)
    return size


@pytest.fixture
def run_cudasim():
    return _run_cudasim


@pytest.fixture
def run_cudasim_shards():
    return _run_cudasim_shards


class StepClock:
    """perf_counter for solvers.telemetry that advances 0.1 ms per call: the throttle's decisions then
    follow the solver's own steps, not how loaded the machine is (a 3 ms run gets the same snapshots
    on an idle machine and on a busy CI runner)."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1e-4
        return self.now


class ManualClock:
    """perf_counter for solvers.telemetry that only the test moves (``clock.now += seconds``)."""

    def __init__(self):
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def manual_clock(monkeypatch):
    """solvers.telemetry on a ManualClock for the test."""
    from solvers import telemetry
    clock = ManualClock()
    monkeypatch.setattr(telemetry, "time", clock)
    return clock


@pytest.fixture
def step_clock(monkeypatch):
    """solvers.telemetry on a StepClock for the test (the worker thread's solves included)."""
    from solvers import telemetry
    clock = StepClock()
    monkeypatch.setattr(telemetry, "time", clock)
    return clock
