"""A GPU too small for the problem: the driver's out-of-memory error becomes one line that says what
could not fit and what to do, in the API, on the command line (exit 2) and in the explorer's
dialog; any other error of a solver is not disguised as one."""
from __future__ import annotations

import numpy as np
import pytest

import solvers
from solvers import registry, solving
from solvers.cli import main
from solvers.errors import BackendUnavailable, DeviceOutOfMemory


class CudaAPIError(Exception):
    """Named as numba's (numba.cuda.cudadrv.driver.CudaAPIError), which a cpu test cannot raise."""


def failing_run(error):
    def run(*args, **kwargs):
        raise error
    return run


@pytest.fixture
def on_a_gpu(monkeypatch):
    """solve as if a GPU were chosen, with the algorithm's run replaced by ``set_error``'s."""
    from solvers import targets, warmup
    for module in (solving, targets):
        monkeypatch.setattr(module, "resolve_backend", lambda backend, backends, name=None: "cuda")
    monkeypatch.setattr(warmup, "wants_warmup", lambda algorithm, backend: False)  # nothing to compile here

    def set_error(error):
        monkeypatch.setattr(registry.Algorithm, "run_function", lambda self: failing_run(error))
    return set_error


def test_the_drivers_out_of_memory_error_is_one_line_naming_the_problem(on_a_gpu):
    on_a_gpu(CudaAPIError("[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY"))
    with pytest.raises(DeviceOutOfMemory) as caught:
        solvers.solve(np.ones((30, 40)), "hungarian", backend="cuda")
    message = str(caught.value)
    assert message == ("the GPU's memory cannot hold this 30 x 40 assignment problem for hungarian: solve it "
                       "with backend cpu (--backend cpu), or free the memory other programs hold on the GPU")
    assert isinstance(caught.value, BackendUnavailable)  # where callers already say such errors in one line
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_other_device_errors_are_not_called_out_of_memory(on_a_gpu):
    on_a_gpu(CudaAPIError("[700] Call to cuCtxSynchronize results in CUDA_ERROR_ILLEGAL_ADDRESS"))
    with pytest.raises(CudaAPIError):
        solvers.solve(np.ones((3, 3)), "hungarian", backend="cuda")


def test_the_command_line_prints_it_in_one_line_and_exits_2(on_a_gpu, tmp_path, capsys):
    on_a_gpu(CudaAPIError("[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY"))
    path = tmp_path / "c.npy"
    np.save(path, np.ones((5, 6)))
    assert main(["solve", str(path), "--algo", "hungarian", "--backend", "cuda"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "cannot hold this 5 x 6 assignment problem" in err[0]


def test_the_explorer_shows_it_as_the_users_line():
    from explorer.worker import classify
    error = DeviceOutOfMemory("the GPU's memory cannot hold this 5 x 6 assignment problem for hungarian: ...")
    assert classify(error) == ("input", str(error))
