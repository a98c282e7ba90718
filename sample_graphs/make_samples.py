"""Regenerate every bundled sample problem and this folder's README.md table.

    .venv/bin/python sample_graphs/make_samples.py

Each sample is ``solvers.generate(kind, **params, seed=seed)`` written with ``solvers.save`` (the
extension picks the format). The same file comes from the CLI command shown in README.md.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import solvers  # noqa: E402
from solvers.io_util import atomic_write_text  # noqa: E402

SIZE_LIMIT = 2 * 1024 * 1024  # the whole folder stays small enough to ship in the package

# (file, format, kind, params); every sample uses seed 1
SAMPLES = [
    ("random-bipartite_200x200_d3.mtx", "Matrix Market", "random-bipartite", dict(rows=200, cols=200, degree=3)),
    ("delaunay_500.mtx", "Matrix Market", "delaunay", dict(n=500)),
    ("rmat_s9.mtx", "Matrix Market", "rmat", dict(scale=9)),
    ("road-grid_30x30.mtx", "Matrix Market", "road-grid", dict(width=30, height=30, deletion=0.1)),
    ("road-grid_30x30.txt", "SNAP edge list", "road-grid", dict(width=30, height=30, deletion=0.1)),
    ("powerlaw_300x400.tsv", "KONECT bipartite TSV", "powerlaw-bipartite",
     dict(rows=300, cols=400, edges=2000, exponent=2.1)),
    ("washington-rlg_8x8.max", "DIMACS max flow", "washington-rlg", dict(rows=8, cols=8, max_capacity=10000)),
    ("genrmf_4x3.max", "DIMACS max flow", "genrmf", dict(a=4, b=3, c1=1, c2=10000)),
    ("dense-lap_50.npy", "NumPy array", "dense-lap", dict(n=50, k=1.0, integer=True)),
    ("dense-lap_50_k0.2.csv", "CSV", "dense-lap", dict(n=50, k=0.2, integer=True)),
    ("sparse-lap_100.asn", "DIMACS assignment", "sparse-lap", dict(rows=100, cols=100, degree=5, max_cost=100)),
    ("particles_100x10.npz", "NumPy archive (frames + ids)", "particles",
     dict(n=100, frames=10, persistence=0.5, speed=0.01, enter_rate=0.02, leave_rate=0.02)),
    # frames=1 draws exactly frame 0 of the series above (the same seed, the same first draws)
    ("particles_100_frame0.ply", "PLY point cloud", "particles",
     dict(n=100, frames=1, persistence=0.5, speed=0.01, enter_rate=0.02, leave_rate=0.02)),
]
SEED = 1
# batches of assignment problems (matchscope gen dense-lap-batch): (file, format, params)
BATCHES = [("dense-lap-batch_100x16x24.npy", "NumPy array (3-D)", dict(batch=100, n=16, m=24))]


def _flag_value(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def command(kind: str, params: dict, file: str) -> str:
    flags = " ".join(f"--{name.replace('_', '-')} {_flag_value(v)}" for name, v in params.items())
    return f"matchscope gen {kind} {flags} --seed {SEED} --out sample_graphs/{file}"


def sizes(problem) -> str:
    d = problem.describe()
    if problem.kind == "points":
        low, high = min(d["points"]), max(d["points"])
        counts = f"{low}" if low == high else f"{low} to {high}"
        return f"{d['frames']} frame{'s' * (d['frames'] > 1)} of {counts} points, with ids"
    if problem.kind == "flow":
        return f"{d['vertices']} vertices, {d['edges']} arcs, s={d['source']}, t={d['sink']}"
    text = f"{d['rows']} x {d['cols']}"
    return text + (f", {d['edges']} edges" if "edges" in d else "")


README_HEAD = """# Sample problems

Small but non-trivial instances of every generator kind (`solvers/generators`), in the file
formats matchscope reads. They are regenerated, with this table, by

    .venv/bin/python sample_graphs/make_samples.py

Each row's command writes the same instance through the CLI (every sample uses seed {seed}).
Square symmetric graphs (delaunay, rmat, road-grid) are undirected graphs read as n x n
bipartite graphs; flow networks carry their source and sink; the particle series keeps
ground-truth ids, and the one-frame .ply file is the first frame of the .npz series.

| file | format | kind | size | command |
|---|---|---|---|---|
"""


def main() -> int:
    rows, total = [], 0
    for file, fmt, kind, params in SAMPLES:
        problem = solvers.generate(kind, **params, seed=SEED)
        path = HERE / file
        solvers.save(problem, path)
        total += path.stat().st_size
        rows.append(f"| `{file}` | {fmt} | {kind} | {sizes(problem)} | `{command(kind, params, file)}` |")
        print(f"wrote {path.name} ({path.stat().st_size} bytes)")
    from solvers.formats.batch import save_batch
    from solvers.generators.batches import dense_lap_batch
    for file, fmt, params in BATCHES:
        path = HERE / file
        save_batch(dense_lap_batch(**params, seed=SEED), path)
        total += path.stat().st_size
        size = f"{params['batch']} problems of {params['n']} x {params.get('m', params['n'])}"
        rows.append(f"| `{file}` | {fmt} | dense-lap-batch | {size} | `{command('dense-lap-batch', params, file)}` |")
        print(f"wrote {path.name} ({path.stat().st_size} bytes)")
    readme = README_HEAD.format(seed=SEED) + "\n".join(rows) + "\n"
    atomic_write_text(HERE / "README.md", readme)
    if total > SIZE_LIMIT:
        print(f"samples take {total} bytes, over the {SIZE_LIMIT} byte limit", file=sys.stderr)
        return 1
    print(f"{len(SAMPLES) + len(BATCHES)} samples, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
