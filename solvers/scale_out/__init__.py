"""Scale-out on Dask: many items (files, batch chunks, runs of frame pairs) solved on a cluster.

    import solvers
    from solvers.scale_out import connect
    client, cluster = connect("local", workers=2)           # or connect("tcp://scheduler:8786")
    rows = solvers.solve_many(paths, "hungarian", client=client)

Modules: items (kinds of input, cutting batches and series), tasks (what runs on a worker), jobs
and stitch (per item: its tasks, and joining their answers; a series' runs into its tracks),
run (solve_many, submit_many), progress (events and the command line's bar), cluster (a local
cluster, one worker per GPU where there are GPUs, or a scheduler's address). dask is imported only
when a cluster is used: without a client everything runs in this process.
"""
from .items import Batch
from .jobs import ItemResult
from .progress import Progress
from .run import ManyRun, solve_many, submit_many


def connect(scheduler: str = "local", workers: int | None = None, backend: str = "auto"):
    """(client, cluster or None): see solvers.scale_out.cluster.connect."""
    from .cluster import connect as _connect
    return _connect(scheduler, workers, backend)


__all__ = ["Batch", "ItemResult", "ManyRun", "Progress", "connect", "solve_many", "submit_many"]
