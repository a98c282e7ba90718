"""Malformed input: every class of fault raises InputError naming the path and the exact line."""
from __future__ import annotations

import gzip
import io
import tracemalloc

import numpy as np
import pytest

from solvers.errors import InputError
from solvers.formats import load, save
from solvers.problems import PointSeries

# (id, file name, content, problem, load options, expected line, message fragment)
TEXT_CASES = [
    # SNAP
    ("snap-bad-token", "g.txt", "# c\n0 1\n1 x\n", None, {}, 3, "expected an integer"),
    ("snap-float-id", "g.txt", "0 1\n1.0 2\n", None, {}, 2, "expected an integer"),
    ("snap-field-count", "g.txt", "0 1\n\n1 2 3\n", None, {}, 3, "expected 2 fields, found 3"),
    ("snap-one-field", "g.edges", "0 1\n7\n", None, {}, 2, "expected 2 fields, found 1"),
    ("snap-negative-id", "g.txt", "0 1\n-1 2\n", None, {}, 2, "below 0"),
    ("snap-id-beyond-given-size", "g.txt", "0 1\n1 0\n5 0\n", None, {"n_rows": 2}, 3, "outside the 2"),
    ("snap-id-overflow", "g.txt", "0 1\n1 99999999999999999999\n", None, {}, 2, "out of range"),
    # KONECT
    ("konect-not-bipartite", "k.tsv", "% sym unweighted\n1 2\n", None, {}, 1, "% bip"),
    ("konect-zero-id", "k.tsv", "% bip unweighted\n1 1\n0 2\n", None, {}, 3, "below 1"),
    ("konect-fractional-id", "out.k", "% bip unweighted\n1.5 1\n", None, {}, 2, "must be an integer"),
    ("konect-beyond-header-size", "k.tsv", "% bip unweighted\n% 2 2 2\n1 1\n3 1\n", None, {}, 4, "outside the 2"),
    ("konect-truncated", "k.tsv", "% bip unweighted\n% 2000 300 400\n1\t62\n2\t7\n", None, {}, 2,
     "declares 2,000 edges but the file has 2 (truncated?)"),
    ("konect-nan-weight", "k.tsv", "% bip weighted\n1 1 2\n2 2 nan\n", "assignment", {}, 3, "not a finite"),
    ("konect-field-count", "k.tsv", "% bip weighted\n1 1 2\n2 2\n", None, {}, 3, "expected 3 fields"),
    ("konect-too-many-fields", "k.tsv", "% bip weighted\n1 1 2 3 4\n", None, {}, 2, "found 5 fields"),
    ("konect-repeated-pair", "k.tsv", "% bip weighted\n1 1 2\n2 1 3\n1 1 4\n", "assignment", {}, 4,
     "given twice"),
    # Matrix Market
    ("mtx-no-banner", "m.mtx", "3 3 1\n1 1 1\n", None, {}, 1, "first line must be"),
    ("mtx-integer-beyond-2^53", "m.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 2 1\n"
     "1 1 9007199254740993\n2 1 1\n", "assignment", {}, 4, "cannot be represented exactly"),
    ("mtx-array-format", "m.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", None, {}, 1,
     "'array' is not supported"),
    ("mtx-complex", "m.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", None, {},
     1, "'complex' is not supported"),
    ("mtx-bad-size-line", "m.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n3 x 1\n1 1 1\n",
     None, {}, 3, "size line"),
    ("mtx-bad-token", "m.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 3\n1 1 1.5\n2 3 1.5abc\n"
     "3 4 1\n", None, {}, 4, "expected a number"),
    ("mtx-fraction-in-integer-file", "m.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 2\n"
     "1 1 2\n2 1 1.5\n", None, {}, 4, "expected an integer"),
    ("mtx-extra-field", "m.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n2 1 7\n",
     None, {}, 4, "expected 2 fields, found 3"),
    ("mtx-index-zero", "m.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n0 1\n",
     None, {}, 4, "row index 0"),
    ("mtx-index-beyond", "m.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 4\n1 1\n",
     None, {}, 3, "column index 4"),
    ("mtx-too-many-entries", "m.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1\n2 2\n",
     None, {}, 4, "more entries"),
    ("mtx-truncated", "m.mtx", "%%MatrixMarket matrix coordinate pattern general\n%c\n3 3 3\n1 1\n2 2\n",
     None, {}, 3, "declares 3 entries but the file has 2"),
    ("mtx-nan-cost", "m.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 NaN\n",
     "assignment", {}, 4, "not a finite"),
    ("mtx-pattern-costs", "m.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n",
     "assignment", {}, 1, "no values"),
    ("mtx-negative-capacity", "m.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 4\n"
     "2 3 -1\n", "flow", {}, 4, "negative capacity"),
    ("mtx-fractional-capacity", "m.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 4\n"
     "2 3 0.5\n", "flow", {}, 4, "must be an integer"),
    ("mtx-flow-not-square", "m.mtx", "%%MatrixMarket matrix coordinate pattern general\n% x\n2 3 1\n1 2\n",
     "flow", {}, 3, "square"),
    ("mtx-symmetric-not-square", "m.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2 3 1\n1 1\n",
     None, {}, 2, "square"),
    ("mtx-symmetric-repeat", "m.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n"
     "1 2 5\n", "assignment", {}, 4, "given twice"),
    ("mtx-missing-size", "m.mtx", "%%MatrixMarket matrix coordinate real general\n% only comments\n", None, {},
     None, "missing the size line"),
    # DIMACS max flow
    ("max-missing-p", "f.max", "c x\nn 1 s\np max 2 0\n", None, {}, 2, "missing 'p' line"),
    ("max-no-p-at-all", "f.max", "c only a comment\n", None, {}, None, "missing 'p max"),
    ("max-duplicate-p", "f.max", "p max 2 0\nc\np max 2 0\n", None, {}, 3, "a second 'p' line"),
    ("max-wrong-problem", "f.max", "p asn 2 0\n", None, {}, 1, "expected 'max'"),
    ("max-p-fields", "f.max", "p max 2\n", None, {}, 1, "found 3 fields"),
    ("max-more-arcs", "f.max", "p max 3 1\nn 1 s\nn 3 t\na 1 2 1\na 2 3 1\n", None, {}, 5, "more arcs"),
    ("max-fewer-arcs", "f.max", "c\np max 3 3\nn 1 s\nn 3 t\na 1 2 1\na 2 3 1\n", None, {}, 2,
     "declares 3 arcs but the file has 2"),
    ("max-missing-source", "f.max", "p max 3 1\nn 3 t\na 1 2 1\n", None, {}, None, "no source"),
    ("max-missing-sink", "f.max", "p max 3 1\nn 1 s\na 1 2 1\n", None, {}, None, "no sink"),
    ("max-two-sources", "f.max", "p max 3 0\nn 1 s\nn 2 s\nn 3 t\n", None, {}, 3, "a second source"),
    ("max-source-is-sink", "f.max", "p max 3 0\nn 1 s\nn 1 t\n", None, {}, 3, "both source and sink"),
    ("max-bad-role", "f.max", "p max 3 0\nn 1 x\n", None, {}, 2, "n ID s"),
    ("max-negative-capacity", "f.max", "p max 3 2\nn 1 s\nn 3 t\na 1 2 5\na 2 3 -4\n", None, {}, 5,
     "negative capacity"),
    ("max-node-zero", "f.max", "p max 3 1\nn 1 s\nn 3 t\na 0 2 5\n", None, {}, 4, "outside the nodes"),
    ("max-node-beyond", "f.max", "p max 3 1\nn 1 s\nn 3 t\na 1 4 5\n", None, {}, 4, "arc head 4"),
    ("max-bad-token", "f.max", "p max 3 1\nn 1 s\nn 3 t\na 1 2 five\n", None, {}, 4, "expected an integer"),
    ("max-arc-fields", "f.max", "p max 3 1\nn 1 s\nn 3 t\na 1 2\n", None, {}, 4, "expected 3 fields"),
    ("max-unknown-tag", "f.max", "p max 3 0\nx 1 2\n", None, {}, 2, "unknown line type"),
    ("max-glued-tag", "f.max", "p max 3 1\nn 1 s\nn 3 t\na1 2 5\n", None, {}, 4, "malformed"),
    # DIMACS assignment
    ("asn-tail-not-source", "a.asn", "p asn 4 2\nn 1\nn 2\na 1 3 1\na 3 4 2\n", None, {}, 5, "arc tail 3"),
    ("asn-head-is-source", "a.asn", "p asn 4 1\nn 1\nn 2\na 1 2 1\n", None, {}, 4, "arc head 2"),
    ("asn-node-twice", "a.asn", "p asn 4 0\nn 1\nn 2\nn 1\n", None, {}, 4, "named twice"),
    ("asn-nan-cost", "a.asn", "p asn 4 1\nn 1\nn 2\na 1 3 nan\n", None, {}, 4, "not a finite"),
    ("asn-repeated-arc", "a.asn", "p asn 4 2\nn 1\nn 2\na 1 3 1\na 1 3 2\n", None, {}, 5, "given twice"),
    ("asn-node-beyond", "a.asn", "p asn 4 0\nn 5\n", None, {}, 2, "node 5"),
    # dense CSV
    ("csv-non-numeric", "c.csv", "1,2,3\n4,abc,6\n", None, {}, 2, "non-numeric cell 'abc' in column 2"),
    ("csv-short-row", "c.csv", "# costs\n1,2,3\n4,5\n", None, {}, 3, "expected 3 cells, found 2"),
    ("csv-nan", "c.csv", "1,2\nnan,4\n", "assignment", {}, 2, "NaN"),
    ("csv-minus-inf", "c.csv", "1,2\n3,4\n5,-inf\n", None, {}, 3, "-inf"),
    ("csv-header-row", "c.csv", "# from pandas\n,a,b\n0,1,2\n1,3,4\n", None, {}, 2,
     "the first row holds no numbers ('a', ...): a header of column names?"),
    ("csv-tabs", "c.csv", "1\t2\n3\t4\n", None, {}, 1, "cells separated by tabs"),
    ("csv-words-later", "c.csv", "1,2\na,b\n", None, {}, 2, "non-numeric cell 'a' in column 1"),
    # points
    ("points-csv-no-xyz", "p.csv", "# pts\nframe,x,y\n0,1,2\n", "points", {}, 2, "missing: z"),
    ("points-csv-bad-cell", "p.csv", "x,y,z\n1,2,3\n1,two,3\n", None, {}, 3, "expected a number"),
    ("points-csv-row-width", "p.csv", "x,y,z,mass\n1,2,3,4\n1,2,3\n", None, {}, 3, "expected 4 fields"),
    ("points-csv-negative-frame", "p.csv", "frame,x,y,z\n0,1,2,3\n-1,1,2,3\n", None, {}, 3, "negative"),
    ("points-csv-fractional-frame", "p.csv", "frame,x,y,z\n0.5,1,2,3\n", None, {}, 2, "expected an integer"),
    ("points-csv-repeated-id", "p.csv", "frame,id,x,y,z\n0,1,0,0,0\n1,1,0,0,0\n0,1,1,1,1\n", None, {}, 4,
     "appears twice in frame 0"),
    ("points-csv-infinite", "p.csv", "x,y,z\n1,2,inf\n", None, {}, 2, "finite"),
    ("xyz-field-count", "p.xyz", "1 2 3\n4 5\n", None, {}, 2, "expected 3 fields"),
]


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_malformed_text_names_path_and_line(tmp_path, case):
    _, name, content, problem, options, line, fragment = case
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        load(path, problem=problem, **options)
    err = caught.value
    assert err.path == str(path)
    assert err.line == line, str(err)
    assert fragment in err.message, str(err)
    assert str(err).startswith(f"{path}:{line}:" if line else f"{path}:")


@pytest.mark.parametrize("name, header, bad_line", [
    ("g.txt", "# header\n", "371 oops"),
    ("f.max", "p max 1000 500\nn 1 s\nn 2 t\n", "a 371 -5"),
    ("m.mtx", "%%MatrixMarket matrix coordinate integer general\n1000 1000 500\n", "371 0"),
])
def test_line_numbers_survive_block_boundaries(tmp_path, monkeypatch, name, header, bad_line):
    """A fault far into a file read in many small blocks (and one line longer than a block) is
    still named by its exact line."""
    from solvers.formats import _text

    monkeypatch.setattr(_text, "BLOCK_BYTES", 64)
    tag = "a " if name.endswith(".max") else ""
    lines = [f"{tag}{i + 1} {i + 2}" + (" 1" if "max" in name or "mtx" in name else "") for i in range(500)]
    lines[100] = lines[100].replace(" ", " " * 150, 1)  # longer than a block
    lines[371] = bad_line
    path = tmp_path / name
    path.write_text(header + "\n".join(lines) + "\n")
    blocks = list(_text.iter_blocks(path))
    assert len(blocks) > 50 and sum(b.n_lines for b in blocks) == header.count("\n") + 500
    with pytest.raises(InputError) as caught:
        load(path)
    assert caught.value.line == header.count("\n") + 372, str(caught.value)


def test_crlf_line_endings_are_fine_and_lines_still_exact(tmp_path):
    path = tmp_path / "f.max"
    path.write_bytes(b"c crlf\r\np max 3 2\r\nn 1 s\r\nn 3 t\r\na 1 2 4\r\na 2 3 -1\r\n")
    with pytest.raises(InputError) as caught:
        load(path)
    assert caught.value.line == 6


@pytest.mark.parametrize("name", ["g.txt", "k.tsv", "m.mtx", "f.max", "a.asn", "c.csv", "p.xyz", "p.csv",
                                  "d.npy", "p.ply", "p.npz", "m.mtx.gz"])
def test_empty_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"")
    with pytest.raises(InputError) as caught:
        load(path)
    assert caught.value.path == str(path)
    assert caught.value.line is None
    if name not in ("p.npz", "m.mtx.gz"):  # archives say what is wrong with the archive
        assert caught.value.message == "file is empty", str(caught.value)


def test_missing_file_directory_and_unknown_extension(tmp_path):
    for path, fragment in [(tmp_path / "nope.mtx", "no such file"), (tmp_path, "not a regular file")]:
        with pytest.raises(InputError) as caught:
            load(path)
        assert (caught.value.path, caught.value.line) == (str(path), None)
        assert fragment in caught.value.message
    odd = tmp_path / "graph.xlsx"
    odd.write_text("1 2\n")
    with pytest.raises(InputError) as caught:
        load(odd)
    assert caught.value.line is None and "unknown file type" in caught.value.message


def test_problem_kind_the_format_cannot_hold(tmp_path):
    path = tmp_path / "f.max"
    path.write_text("p max 2 0\nn 1 s\nn 2 t\n")
    with pytest.raises(InputError, match="flow problems, not matching"):
        load(path, problem="matching")
    with pytest.raises(InputError, match="unknown problem kind"):
        load(path, problem="knapsack")
    with pytest.raises(InputError, match="take no option"):
        load(path, source=1)


def test_truncated_gzip(tmp_path):
    data = gzip.compress(b"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n2 2\n" * 50)
    path = tmp_path / "m.mtx.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError) as caught:
        load(path)
    assert caught.value.path == str(path) and "truncated" in caught.value.message


def test_gzip_refused_for_archives_and_a_compressed_npy_checked_as_a_plain_one(tmp_path):
    """An .npz is already an archive (.npz.gz is refused); a gzip-compressed .npy loads like a plain
    one, with the same one-line refusals: not an array, a declared size past the machine's memory
    (refused before any allocation), data cut short, or compressed data that ends early."""
    archive = tmp_path / "p.npz.gz"
    archive.write_bytes(gzip.compress(b"x"))
    with pytest.raises(InputError, match="gzip-compressed .* files are not supported"):
        load(archive)
    costs = np.arange(12.0).reshape(3, 4)
    good = tmp_path / "c.npy.gz"
    buf = io.BytesIO()
    np.save(buf, costs)
    good.write_bytes(gzip.compress(buf.getvalue()))
    assert np.array_equal(load(good).costs, costs)
    cases = {"junk.npy.gz": (gzip.compress(b"x"), "not a valid .npy array"),
             "huge.npy.gz": (gzip.compress(_npy_with_header((10 ** 6, 10 ** 6)) + bytes(64)), "would need"),
             "short.npy.gz": (gzip.compress(buf.getvalue()[:-20]), "truncated"),
             "cut.npy.gz": (gzip.compress(buf.getvalue())[:-15], "ends early")}
    for name, (data, words) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InputError) as caught:
            load(path)
        assert caught.value.path == str(path) and words in caught.value.message, (name, caught.value.message)


# ----------------------------------------------------------------------------- binary formats

def _npy_with_header(shape, dtype="<f8", payload=b"") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue() + payload


def test_npy_faults(tmp_path):
    cases = {
        "objects.npy": (_npy_with_header((2,), "|O"), "Python objects"),
        "truncated.npy": (_npy_with_header((4, 4), payload=b"\0" * 40), "truncated"),
        "four_d.npy": (_npy_with_header((1, 1, 1, 1), payload=b"\0" * 8), "2-D (or 3-D: a batch of them)"),
        "complex.npy": (_npy_with_header((1, 1), "<c16", payload=b"\0" * 16), "real numbers"),
        "not_npy.npy": (b"hello world, not an array\n", "not a valid .npy"),
    }
    for name, (data, fragment) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InputError) as caught:
            load(path)
        assert (caught.value.path, caught.value.line) == (str(path), None)
        assert fragment in caught.value.message, name


def test_npz_faults(tmp_path):
    def npz(**arrays):
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()

    good_points = np.zeros((3, 3))
    cases = {
        "no_ptr.npz": (npz(points=good_points), "no 'frame_ptr'"),
        "bad_ptr.npz": (npz(points=good_points, frame_ptr=np.array([0, 2])), "rise from 0"),
        "float_ptr.npz": (npz(points=good_points, frame_ptr=np.array([0.0, 3.0])), "integer"),
        "bad_points.npz": (npz(points=np.zeros((3, 2)), frame_ptr=np.array([0, 3])), "rows of 3 coordinates"),
        "bad_ids.npz": (npz(points=good_points, frame_ptr=np.array([0, 3]), ids=np.arange(2)), "'ids'"),
        "repeat_ids.npz": (npz(points=good_points, frame_ptr=np.array([0, 3]), ids=np.array([1, 1, 2])),
                           "not unique"),
        "objects.npz": (npz(points=np.array([None, 1], dtype=object), frame_ptr=np.array([0, 3])),
                        "Python objects"),
        "not_zip.npz": (b"plain text", "not a readable .npz"),
    }
    for name, (data, fragment) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InputError) as caught:
            load(path)
        assert (caught.value.path, caught.value.line) == (str(path), None)
        assert fragment in caught.value.message, name


PLY_HEADER = "ply\nformat ascii 1.0\nelement vertex {n}\n{props}end_header\n"


@pytest.mark.parametrize("props, fragment", [
    ("property float x\nproperty float y\n", "scalar 'z'"),
    ("property float x\nproperty float y\nproperty float z\nproperty float frame\n", "'frame' must be an integer"),
    ("property float x\nproperty float y\nproperty float z\nproperty list uchar int id\n", "'id' must be an integer"),
])
def test_ply_wrong_properties(tmp_path, props, fragment):
    path = tmp_path / "p.ply"
    n_values = props.count("property") - props.count("list")
    path.write_text(PLY_HEADER.format(n=1, props=props) + " ".join(["1"] * (n_values + 2 * props.count("list")))
                    + "\n")
    with pytest.raises(InputError) as caught:
        load(path)
    assert (caught.value.path, caught.value.line) == (str(path), 3)  # the 'element vertex' line
    assert fragment in caught.value.message


def test_ply_bad_header_names_its_line(tmp_path):
    path = tmp_path / "p.ply"
    path.write_text("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nbogus line\nend_header\n1\n")
    with pytest.raises(InputError) as caught:
        load(path)
    assert caught.value.line == 5


def test_ply_short_data(tmp_path):
    path = tmp_path / "p.ply"
    props = "property float x\nproperty float y\nproperty float z\n"
    path.write_text(PLY_HEADER.format(n=3, props=props) + "1 2 3\n")
    with pytest.raises(InputError, match="element 'vertex' declares 3 rows") as caught:
        load(path)
    assert caught.value.line == 3


# ----------------------------------------------------------------------------- absurd declared sizes

ABSURD = [
    ("f.max", "c huge\np max 1000000000000 10000000000000\n", None, 2, "would need"),
    ("a.asn", "p asn 1000000000000 10000000000000\n", None, 1, "would need"),
    ("m.mtx", "%%MatrixMarket matrix coordinate real general\n1000000000000 1000000000000 10000000000000\n"
              "1 1 1\n", None, 2, "would need"),
    ("g.txt", "0 1\n1 999999999999999\n2 0\n", None, 2, "would need"),
    ("k.tsv", "% bip unweighted\n% 1 1000000000000 1000000000000\n1 1\n", None, 2, "would need"),
    ("h.txt", "# matchscope bipartite graph: rows 1000000000000 cols 2 edges 1\n0 1\n", None, 1, "would need"),
    ("p.csv", "frame,x,y,z\n0,0,0,0\n999999999999,1,1,1\n", None, 3, "empty ones are refused"),
    ("p.ply", PLY_HEADER.format(n=10**13, props="property float x\nproperty float y\nproperty float z\n"), None, 3,
     "only 0 bytes of the file remain"),
]


@pytest.mark.parametrize("name, content, problem, line, fragment", ABSURD, ids=[a[0] for a in ABSURD])
def test_absurd_sizes_are_refused_before_allocating(tmp_path, name, content, problem, line, fragment):
    path = tmp_path / name
    path.write_text(content)
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as caught:
            load(path, problem=problem)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert fragment in caught.value.message
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert peak < 64 << 20


def test_absurd_npy_shape_is_refused_before_allocating(tmp_path):
    path = tmp_path / "d.npy"
    path.write_bytes(_npy_with_header((10**7, 10**7)))
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="would need"):
            load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20


# ----------------------------------------------------------------------------- saving

def test_save_refusals(tmp_path):
    one = PointSeries.from_frames([np.zeros((1, 3)), np.zeros((2, 3))])
    with pytest.raises(InputError, match="cannot be saved"):
        save(one, tmp_path / "p.mtx")
    with pytest.raises(InputError, match="one frame"):
        save(one, tmp_path / "p.xyz")
    with pytest.raises(InputError, match="not supported"):
        save(one, tmp_path / "p.npz.gz")
    with pytest.raises(InputError, match="cannot write"):
        save(one, tmp_path / "missing-folder" / "p.npz")
    assert list(tmp_path.iterdir()) == []
