"""Shared test fixtures.

``run_cudasim(code)`` runs a Python snippet in a fresh process with NUMBA_ENABLE_CUDASIM=1 (the
simulator must be chosen before numba is imported, so it cannot share this process) and returns
its stdout; a non-zero exit fails the test with the child's stderr. The child first imports
tests/cudasim_fix.py, which fixes a shared-memory race in the simulator itself.
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

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def _run_cudasim(code: str, timeout: float = 900) -> str:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(ROOT))
    prelude = f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r}); import cudasim_fix\n"
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"cudasim child exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    return proc.stdout


@pytest.fixture
def run_cudasim():
    return _run_cudasim
