"""Mutated files never escape as anything but InputError: no traceback reaches a user."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.errors import InputError
from solvers.formats import load, save
from solvers.problems import PROBLEM_KINDS, BipartiteGraph, CostMatrix, FlowNetwork, PointSeries, SparseCosts

TEXT_SAMPLES = {
    "g.txt": b"# snap\n0 1\n1 2\n2 0\n",
    "k.tsv": b"% bip weighted\n% 3 2 3\n1 1 2.5\n2 3 1\n1 2 4\n",
    "m.mtx": b"%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 3\n1 1 2\n2 1 3\n3 2 1\n",
    "f.max": b"c x\np max 4 4\nn 1 s\nn 4 t\na 1 2 3\na 1 3 2\na 2 4 2\na 3 4 3\n",
    "a.asn": b"p asn 4 3\nn 1\nn 2\na 1 3 1\na 1 4 2.5\na 2 3 7\n",
    "c.csv": b"1,2,3\n4,,inf\n7,8,9\n",
    "p.csv": b"frame,id,x,y,z\n0,1,0,0,0\n1,1,1,1,1\n1,2,2,2,2\n",
    "p.xyz": b"1 2 3\n4 5 6\n",
    "a.ply": b"ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\n"
             b"property int frame\nend_header\n0 0 0 0\n1 1 1 1\n",
}

TOKENS = [b"-1", b"0", b"nan", b"inf", b"-inf", b"x", b"\n", b" ", b"\t", b"99999999999999999999", b"1e400",
          b"%", b"#", b",", b"\r", b"\x00", b"\xff", b"p max 3 1\n", b"n 2 s\n", b"a 1 2 3\n", b"2.5",
          b"%%MatrixMarket matrix coordinate pattern general\n", b"element vertex 99\n", b"end_header\n",
          # hostile sizes and encodings (issue 11): a byte-order mark, counts far beyond the data
          b"\xef\xbb\xbf", b"element face 2000000000\n", b"100000000 100000000 1\n", b"20000000", b"-5",
          b"property list uchar int vertex_indices\n"]


def _binary_samples(folder) -> dict[str, bytes]:
    out = {}
    save(CostMatrix.from_array([[1.0, np.inf], [2.0, 3.0]]), folder / "d.npy")
    save(PointSeries.from_frames([np.eye(3), np.ones((1, 3))], [np.arange(3), np.array([4])]), folder / "s.npz")
    save(PointSeries.from_frames([np.eye(3)]), folder / "b.ply")
    save(BipartiteGraph.from_edges([0, 1], [1, 0], 2, 2), folder / "g.mtx.gz")
    for name in ("d.npy", "s.npz", "b.ply", "g.mtx.gz"):
        out[name] = (folder / name).read_bytes()
    return out


@st.composite
def mutations(draw, size: int):
    ops = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "truncate"]))
        at = draw(st.integers(0, max(size - 1, 0)))
        if kind == "insert":
            ops.append((kind, at, draw(st.sampled_from(TOKENS))))
        elif kind == "delete":
            ops.append((kind, at, draw(st.integers(1, 8))))
        elif kind == "replace":
            ops.append((kind, at, draw(st.integers(0, 255))))
        else:
            ops.append((kind, at, None))
    return ops


def _mutate(data: bytes, ops) -> bytes:
    out = bytearray(data)
    for kind, at, arg in ops:
        at = min(at, len(out))
        if kind == "insert":
            out[at:at] = arg
        elif kind == "delete":
            del out[at:at + arg]
        elif kind == "replace" and at < len(out):
            out[at] = arg
        elif kind == "truncate":
            del out[at:]
    return bytes(out)


def _check_loads_or_refuses(path):
    for problem in (None,) + PROBLEM_KINDS:
        try:
            loaded = load(path, problem=problem)
        except InputError as e:
            assert e.path == str(path)
            assert e.line is None or e.line >= 1
        else:
            assert isinstance(loaded, (BipartiteGraph, FlowNetwork, CostMatrix, SparseCosts, PointSeries))


@pytest.mark.parametrize("name", sorted(TEXT_SAMPLES))
@settings(max_examples=40)
@given(data=st.data())
def test_mutated_text_files(tmp_path_factory, name, data):
    original = TEXT_SAMPLES[name]
    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_bytes(_mutate(original, data.draw(mutations(len(original)))))
    _check_loads_or_refuses(path)


@settings(max_examples=60)
@given(data=st.data())
def test_mutated_binary_files(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("fuzz")
    samples = _binary_samples(folder)
    name = data.draw(st.sampled_from(sorted(samples)))
    original = samples[name]
    path = folder / name
    path.write_bytes(_mutate(original, data.draw(mutations(len(original)))))
    _check_loads_or_refuses(path)
