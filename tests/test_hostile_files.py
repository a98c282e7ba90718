"""Hostile files (issue 11): each ends in one InputError line naming the file (and the line at
fault), quickly, with memory that follows the bytes present rather than the sizes declared.

Every file is generated here. Large inflations are concatenated gzip members (a valid gzip
stream), so a line of a GiB costs about a megabyte on disk. Loads that could allocate what a
header declares run in a child process whose address space is capped (RLIMIT_AS), with warnings
turned into errors, so a regression to "allocate the declared size" fails instead of passing
slowly, and a stray RuntimeWarning fails too.
"""
from __future__ import annotations

import errno
import gzip
import io
import json
import os
import re
import stat
import subprocess
import sys
import textwrap
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from solvers.errors import InputError
from solvers.formats import _text, load, points, save
from solvers.problems import BipartiteGraph, CostMatrix, FlowNetwork, PointSeries
from solvers.result import Certificate, Result

ROOT = Path(__file__).resolve().parent.parent
HEADROOM = 1 << 30  # address space a bounded load may add to the child's baseline after imports
MM_PATTERN = "%%MatrixMarket matrix coordinate pattern general\n"
PLY_XYZ = "property float x\nproperty float y\nproperty float z\n"
# what user text must never show: class names, Python reprs of paths, dicts or escaped bytes
UNPLAIN = re.compile(r"BipartiteGraph|SparseCosts|CostMatrix|FlowNetwork|PointSeries|TrackResult|PosixPath|"
                     r"\\x[0-9a-f]{2}|\{'|array\(")

_CHILD = textwrap.dedent("""
    import json, resource, sys, warnings
    import solvers, solvers.formats
    from solvers.errors import InputError
    args = json.loads(sys.argv[1])
    try:
        with open("/proc/self/status") as status:
            base = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (base + args["headroom"],) * 2)
    except (OSError, ValueError):
        pass  # no /proc (not Linux): the load still runs, unbounded
    warnings.simplefilter("error")
    try:
        loaded = solvers.load(args["path"], problem=args["problem"])
    except InputError as e:
        print(json.dumps({"error": str(e), "message": e.message, "path": e.path, "line": e.line}))
    else:
        ends = [getattr(loaded, "source_vertex", None), getattr(loaded, "sink_vertex", None)]
        print(json.dumps({"loaded": type(loaded).__name__, **({"ends": ends} if ends[0] is not None else {})}))
""")


def _pythonpath() -> str:
    """The repository for a child process, after any path the test run was given."""
    return os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)


def load_bounded(path, problem=None) -> dict:
    """solvers.load(path) in a child capped at HEADROOM of address space beyond its imports: the
    InputError's fields, or the kind loaded. A MemoryError, a warning or a traceback fails."""
    env = dict(os.environ, PYTHONPATH=_pythonpath(), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    args = json.dumps({"path": str(path), "problem": problem, "headroom": HEADROOM})
    # the timeout only stops a hang from blocking the suite; the assertions are on the outcome
    proc = subprocess.run([sys.executable, "-c", _CHILD, args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def gz_members(*parts: tuple[bytes, int]) -> bytes:
    """A gzip stream of ``part`` repeated ``count`` times for each (part, count), one member per
    distinct part, so a huge inflation is cheap to write."""
    out = []
    for part, count in parts:
        out.append(gzip.compress(part, compresslevel=9, mtime=0) * count)
    return b"".join(out)


def refused(path, problem=None, **options) -> InputError:
    with pytest.raises(InputError) as caught:
        load(path, problem=problem, **options)
    err = caught.value
    assert err.path == str(path)
    assert "\n" not in str(err) and not UNPLAIN.search(str(err)), str(err)
    return err


def npy_header(shape, descr="<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


# ----------------------------------------------------------------------------- huge declared sizes
# (bounded: a regression to allocating what the header declares runs out of address space)

def test_matrix_far_larger_than_its_entries_is_refused_at_the_size_line(tmp_path):
    path = tmp_path / "m.mtx"
    path.write_text(MM_PATTERN + "100000000 100000000 1\n1 1\n")
    out = load_bounded(path)
    assert out.get("line") == 2 and "empty ones are refused" in out["message"], out
    for problem in ("assignment", "flow"):
        assert load_bounded(path, problem).get("line") == 2


def test_sparse_matrix_within_the_allowance_loads(tmp_path):
    path = tmp_path / "m.mtx"
    path.write_text(MM_PATTERN + "2000 3000 1\n2000 3000\n")
    graph = load(path)
    assert graph.shape == (2000, 3000) and graph.n_edges == 1


def test_empty_rows_allowance_boundary(tmp_path, monkeypatch):
    from solvers import io_util
    monkeypatch.setattr(io_util, "EMPTY_ALLOWANCE", 10)
    path = tmp_path / "m.mtx"
    path.write_text(MM_PATTERN + "6 6 1\n1 1\n")  # 12 rows and columns, the entry fills 2: 10 empty
    assert load(path).shape == (6, 6)
    path.write_text(MM_PATTERN + "6 7 1\n1 1\n")
    assert refused(path).line == 2


def test_truncated_npy_with_a_huge_header_allocates_nothing(tmp_path):
    path = tmp_path / "d.npy"
    path.write_bytes(npy_header((30000, 30000)) + b"\0" * 64)
    out = load_bounded(path)
    assert "truncated" in out.get("message", "") and "30000 x 30000" in out["message"], out


def test_ply_declaring_billions_of_faces_is_refused_at_their_line(tmp_path):
    header = ("ply\nformat binary_little_endian 1.0\nelement vertex 1\n" + PLY_XYZ +
              "element face 2000000000\nproperty list uchar int vertex_indices\nend_header\n").encode()
    path = tmp_path / "m.ply"
    path.write_bytes(header + np.zeros(3, np.float32).tobytes() + b"\3" + bytes(12) * 10)
    out = load_bounded(path)
    assert out.get("line") == 7 and "'face'" in out["message"], out


def test_ply_faces_are_not_read(tmp_path):
    """A mesh's faces cost nothing: ten million empty face lists (10 MB) load at once."""
    n = 10_000_000
    header = ("ply\nformat binary_little_endian 1.0\nelement vertex 2\n" + PLY_XYZ +
              f"element face {n}\nproperty list uchar int vertex_indices\nend_header\n").encode()
    path = tmp_path / "m.ply"
    path.write_bytes(header + np.arange(6, dtype="<f4").tobytes() + bytes(n))
    assert load_bounded(path) == {"loaded": "PointSeries"}
    np.testing.assert_array_equal(load(path).frames[0], [[0, 1, 2], [3, 4, 5]])


def _npz_with_empty_frames(path: Path, n_frames: int) -> None:
    """points (0, 3) and a frame_ptr of n_frames + 1 zeros, written member by member in pieces."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        buf = io.BytesIO()
        np.save(buf, np.zeros((0, 3)))
        archive.writestr("points.npy", buf.getvalue())
        with archive.open("frame_ptr.npy", "w", force_zip64=True) as member:
            member.write(npy_header((n_frames + 1,), "<i8"))
            left, zeros = 8 * (n_frames + 1), bytes(1 << 24)
            while left:
                member.write(zeros[:min(left, len(zeros))])
                left -= min(left, len(zeros))


def test_npz_declaring_fifty_million_empty_frames(tmp_path):
    path = tmp_path / "s.npz"
    _npz_with_empty_frames(path, 50_000_000)
    assert path.stat().st_size < 4 << 20
    out = load_bounded(path)
    assert "50,000,000 frames" in out.get("message", ""), out


@pytest.mark.parametrize("name, content, line", [
    ("p.csv", "frame,x,y,z\n0,0,0,0\n20000000,1,1,1\n", 3),
    ("p.ply", "ply\nformat ascii 1.0\nelement vertex 2\n" + PLY_XYZ + "property int frame\nend_header\n"
              "0 0 0 0\n1 1 1 20000000\n", 10),
])
def test_a_far_frame_number_is_refused_at_its_line(tmp_path, name, content, line):
    path = tmp_path / name
    path.write_text(content)
    out = load_bounded(path)
    assert out.get("line") == line and "20,000,001 frames" in out["message"], out


def test_empty_frames_allowance_boundary(tmp_path, monkeypatch):
    monkeypatch.setattr(points, "EMPTY_FRAMES", 5)
    path = tmp_path / "p.csv"
    path.write_text("frame,x,y,z\n0,0,0,0\n6,1,1,1\n")  # 7 frames, 2 points: 5 empty
    assert load(path).n_frames == 7
    path.write_text("frame,x,y,z\n0,0,0,0\n7,1,1,1\n")
    assert refused(path).line == 3
    npz = tmp_path / "s.npz"
    np.savez(npz, points=np.zeros((2, 3)), frame_ptr=np.array([0] * 7 + [2]))  # 7 frames
    assert load(npz).n_frames == 7
    np.savez(npz, points=np.zeros((2, 3)), frame_ptr=np.array([0] * 8 + [2]))
    assert "8 frames for 2 points" in refused(npz).message


@pytest.mark.parametrize("name, content, line", [
    ("f.max", "c x\np max 100000000 1\nn 1 s\nn 2 t\na 1 2 3\n", 2),
    ("a.asn", "p asn 100000000 1\nn 1\na 1 2 3\n", 1),
    ("g.txt", "0 1\n1 99999999\n", 2),
    ("h.txt", "# matchscope bipartite graph: rows 100000000 cols 2 edges 1\n0 1\n", 1),
    ("k.tsv", "% bip unweighted\n% 1 100000000 100000000\n1 1\n", 2),
])
def test_node_counts_far_beyond_the_edges_are_refused(tmp_path, name, content, line):
    path = tmp_path / name
    path.write_text(content)
    tracemalloc.start()
    try:
        err = refused(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert err.line == line and "empty ones are refused" in err.message, str(err)
    assert peak < 64 << 20


def test_sizes_the_caller_chooses_are_not_limited_by_the_data(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n")
    assert load(path, n_rows=5_000_000, n_cols=3).shape == (5_000_000, 3)


# ----------------------------------------------------------------------------- long lines, many lines

@pytest.mark.parametrize("name, head, filler, line", [
    ("m.mtx.gz", MM_PATTERN.encode() + b"2 2 1\n1 ", b"1", 3),
    ("c.csv.gz", b"# costs\n1,", b"1,", 2),
    ("g.txt.gz", b"0 1\n", b" ", 2),
    ("p.csv.gz", b"frame,x,y,z\n0,", b"0", 2),
])
def test_a_gib_line_in_a_megabyte_gzip_is_refused_at_its_number(tmp_path, name, head, filler, line):
    path = tmp_path / name
    path.write_bytes(gz_members((head, 1), (filler * ((1 << 20) // len(filler)), 1024), (b"\n", 1)))
    assert path.stat().st_size < 4 << 20
    out = load_bounded(path)
    assert out.get("line") == line and "longer than 16 MiB" in out["message"], out


def test_line_bound_is_exact_and_numbered(tmp_path, monkeypatch):
    monkeypatch.setattr(_text, "MAX_LINE_BYTES", 100)
    monkeypatch.setattr(_text, "BLOCK_BYTES", 32)
    path = tmp_path / "g.txt"
    fits = "0 " + "0" * 97 + "1"  # 100 bytes: a number with leading zeros
    path.write_text("0 1\n# c\n" + fits + "\n1 0\n")
    assert load(path).n_edges == 2
    path.write_text("0 1\n# c\n" + fits + "0\n1 0\n")
    assert refused(path).line == 3
    path.write_bytes(b"0 1\r1 2\r" * 20)  # classic Mac line ends: one long line
    assert "carriage return" in refused(path).message


def test_a_billion_comment_lines_cost_a_block(tmp_path):
    """24 million comment lines (96 MiB inflated) before the size line: bounded memory (the
    comments were all kept as Python strings, gigabytes)."""
    path = tmp_path / "m.mtx.gz"
    banner = b"%%MatrixMarket matrix coordinate integer general\n%matchscope flow: source=1 sink=0\n"
    path.write_bytes(gz_members((banner, 1),
                                (b"% c\n" * (1 << 22), 6), (b"2 2 1\n1 2 5\n", 1)))
    # the flow comment is still read
    assert load_bounded(path, "flow") == {"loaded": "FlowNetwork", "ends": [1, 0]}


@pytest.mark.parametrize("name, head, filler, tail", [
    ("m.mtx", MM_PATTERN + "% head\n", "%\n", "3 3 1\n1 1\n   % indented\n\t\n"),
    ("f.max", "c x\np max 3 1\nn 1 s\nn 3 t\n", "  \n", "a 1 2 3\n"),
    ("g.txt", "0 1\n", "   # indented comment\n", "1 2\n"),
    ("p.csv", "x,y,z\n", "  \t\n", "1,2,3\n"),
])
def test_comment_and_blank_lines_are_classified_by_numpy(tmp_path, monkeypatch, name, head, filler, tail):
    """No Python work per line: 100000 comment, blank or indented lines cost a handful of calls
    to Block.text (one per line before; a billion of them hung)."""
    path = tmp_path / name
    path.write_text(head + filler * 100_000 + tail)
    calls = []
    original = _text.Block.text
    monkeypatch.setattr(_text.Block, "text", lambda self, i: calls.append(i) or original(self, i))
    load(path)
    assert len(calls) < 100


# ----------------------------------------------------------------------------- byte-order marks

BOM = b"\xef\xbb\xbf"
BOM_CASES = [
    ("m.mtx", MM_PATTERN + "2 2 1\n1 2\n", None),
    ("m.mtx.gz", MM_PATTERN + "2 2 1\n1 2\n", None),
    ("g.txt", "0 1\n", None),
    ("k.tsv", "% bip unweighted\n1 2\n", None),
    ("f.max", "p max 2 1\nn 1 s\nn 2 t\na 1 2 3\n", None),
    ("a.asn", "p asn 2 1\nn 1\na 1 2 3\n", None),
    ("c.csv", "1,2\n3,4\n", None),
    ("p.csv", "x,y,z\n1,2,3\n", None),
    ("p.xyz", "1 2 3\n", None),
    ("p.ply", "ply\nformat ascii 1.0\nelement vertex 1\n" + PLY_XYZ + "end_header\n1 2 3\n", None),
]


@pytest.mark.parametrize("name, content, problem", BOM_CASES, ids=[c[0] for c in BOM_CASES])
def test_a_utf8_bom_is_accepted_in_every_text_format(tmp_path, name, content, problem):
    plain, marked = tmp_path / name, tmp_path / f"bom-{name}"
    data = content.encode()
    write = gzip.compress if name.endswith(".gz") else (lambda b: b)
    plain.write_bytes(write(data))
    marked.write_bytes(write(BOM + data))
    a, b = load(plain, problem), load(marked, problem)
    assert type(a) is type(b) and a.describe() == b.describe()


def test_a_bom_in_a_binary_ply_header(tmp_path):
    series = PointSeries.from_frames([np.arange(6.0).reshape(2, 3)])
    save(series, tmp_path / "p.ply")
    marked = tmp_path / "bom.ply"
    marked.write_bytes(BOM + (tmp_path / "p.ply").read_bytes())
    np.testing.assert_array_equal(load(marked).frames[0], series.frames[0])


def test_bom_lines_are_still_counted_from_one(tmp_path):
    path = tmp_path / "m.mtx"
    path.write_bytes(BOM + (MM_PATTERN + "2 2 1\n3 1\n").encode())
    assert refused(path).line == 3


# ----------------------------------------------------------------------------- bytes that are not text

NOT_TEXT = "binary data, not text (is this the right file?)"


def _binary_files() -> dict[str, bytes]:
    """What lands under a text name by mistake: a .npy, an .npz (a zip archive), random bytes."""
    npy, npz = io.BytesIO(), io.BytesIO()
    np.save(npy, np.eye(3))
    np.savez(npz, points=np.zeros((2, 3)))
    noise = np.random.default_rng(0).integers(11, 256, 300, dtype=np.uint8).tobytes()  # no line end
    return {"npy": npy.getvalue(), "npz": npz.getvalue(), "noise": noise}


@pytest.mark.parametrize("kind", ["npy", "npz", "noise"])
@pytest.mark.parametrize("name", ["x.csv", "m.mtx", "g.txt", "k.tsv", "f.max", "a.asn", "p.xyz", "p.ply",
                                  "x.csv.gz", "m.mtx.gz"])
def test_a_binary_file_under_a_text_name_is_refused_in_words(tmp_path, name, kind):
    """One plain line at line 1, never the undecodable bytes echoed as a cell or a field."""
    data = _binary_files()[kind]
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    err = refused(path)
    assert (err.line, err.message) == (1, NOT_TEXT), str(err)
    assert str(err).isascii(), str(err)


@pytest.mark.parametrize("name, content, shape", [
    ("c.csv", b"# costs\n1,2\n# co\xfbt\n3,4\n", (2, 2)),
    ("m.mtx", MM_PATTERN.encode() + b"% \xe9t\xe9\n2 2 1\n1 2\n", (2, 2)),
    ("f.max", b"c d\xe9bit\np max 2 1\nn 1 s\nn 2 t\na 1 2 3\n", None),
])
def test_a_comment_in_another_encoding_is_still_text(tmp_path, name, content, shape):
    """Old files carry Latin-1 comments (an author's name): they are text, and they load."""
    path = tmp_path / name
    path.write_bytes(content)
    problem = load(path)
    assert problem.shape == shape if shape else problem.n_vertices == 2


@pytest.mark.parametrize("name, content, line", [
    ("c.csv", b"1,2\n3,4\xb0\n", 2),
    ("p.csv", b"x,y,z\n1,2,3\n1,2,3\xb5\n", 3),
    ("g.txt", b"0 1\n1 \xb2\n", 2),
])
def test_a_cell_in_another_encoding_is_refused_at_its_line_without_its_bytes(tmp_path, name, content, line):
    path = tmp_path / name
    path.write_bytes(content)
    err = refused(path)
    assert err.line == line and "\ufffd" in err.message and str(err).isprintable(), str(err)
    assert not any(ch in err.message for ch in "\xb0\xb5\xb2\u00c2"), str(err)  # never the bytes read one by one


def test_utf8_text_is_read_and_shown_as_written(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("# Kosten für Zeilen\n1,2\n3,4\n", encoding="utf-8")
    assert load(path).shape == (2, 2)
    path.write_text("1,2\n3,2€\n", encoding="utf-8")  # shown as written, not as its bytes read one by one
    assert refused(path).message == "non-numeric cell '2€' in column 2"
    path.write_text("\ufeff1,2\n3,4\n", encoding="utf-16")  # Windows tools' "Unicode text"
    assert (refused(path).line, refused(path).message) == (1, "the file is UTF-16 text; save it as UTF-8")
    ply = tmp_path / "p.ply"  # UTF-8 is text, but a PLY header is ASCII
    ply.write_text("ply\nformat ascii 1.0\ncomment é\nelement vertex 1\n" + PLY_XYZ + "end_header\n1 2 3\n")
    assert (refused(ply).line, refused(ply).message) == (3, "a PLY header must be ASCII text")
    ply.write_bytes(b"ply\nformat ascii 1.0\ncomment \xe9\nelement vertex 1\n" + PLY_XYZ.encode() + b"end_header\n1 2 3\n")
    assert (refused(ply).line, refused(ply).message) == (3, "a PLY header must be ASCII text")


def test_non_text_is_named_by_its_line_across_blocks_and_long_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(_text, "BLOCK_BYTES", 33)  # odd: blocks end inside two-byte characters
    monkeypatch.setattr(_text, "MAX_LINE_BYTES", 100)
    path = tmp_path / "g.txt"
    path.write_bytes(b"# \xc3\xa9\n" + b"0 1\n" * 40 + b"1 \x00\n")
    assert (refused(path).line, refused(path).message) == (42, NOT_TEXT)
    path.write_bytes(b"0 1\n" + b"\x00\x93" * 200)  # a binary tail without line ends: binary, not "too long"
    assert (refused(path).line, refused(path).message) == (2, NOT_TEXT)
    path.write_bytes(b"0 1\n" + "é".encode() * 200)  # a long line of text, cut inside a character
    assert refused(path).line == 2 and "longer than" in refused(path).message


def test_the_fast_matrix_market_reader_reads_and_refuses_what_the_checking_one_does(tmp_path, monkeypatch):
    from solvers.formats import matrix_market
    monkeypatch.setattr(matrix_market, "FAST_MIN_BYTES", 0)
    path = tmp_path / "m.mtx"
    path.write_bytes(MM_PATTERN.encode() + b"% \xe9t\xe9\n2 2 1\n1 2\n")
    assert load(path).shape == (2, 2)
    path.write_bytes(MM_PATTERN.encode() + b"% \x00\x01\n2 2 1\n1 2\n")
    assert (refused(path).line, refused(path).message) == (2, NOT_TEXT)


def test_track_files_that_are_not_text(tmp_path):
    from solvers.formats import tracks
    for name in ("t.csv", "t.json"):
        path = tmp_path / name
        path.write_bytes(_binary_files()["npy"])
        with pytest.raises(InputError) as caught:
            tracks.read(path)
        assert (caught.value.line, caught.value.message) == (1, NOT_TEXT)
    path = tmp_path / "t.csv"
    path.write_bytes(b"track,frame,index,x,y,z\n0,0,0,1,2,\xb3\n")  # Latin-1 in a cell: the cell's own error
    with pytest.raises(InputError) as caught:
        tracks.read(path)
    assert (caught.value.line, caught.value.message) == (2, "'\ufffd' is not a number")
    path.write_bytes(b"track,frame,index,x,y,z\n0,0,0,1,2,3\n0,1,0,1,2\n")
    with pytest.raises(InputError) as caught:
        tracks.read(path)
    assert (caught.value.line, caught.value.message) == (3, "expected 6 comma-separated values, found 5")


# ----------------------------------------------------------------------------- magnitudes

def test_costs_beyond_float64_are_refused_not_forbidden(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("1,inf,\n2,3,1e400\n")
    err = refused(path)
    assert err.line == 2 and "1e400" in err.message and "column 3" in err.message
    path.write_text("1,inf,,Infinity\n2,3,1e300,-1e300\n")  # inf, an empty cell, Infinity: forbidden
    costs = load(path).costs
    assert np.isinf(costs[0, 1:]).all() and costs[1, 2] == 1e300 and costs[1, 3] == -1e300
    npy = tmp_path / "d.npy"
    np.save(npy, np.array([[1, np.longdouble("1e400")]], dtype=np.longdouble))
    assert "beyond the range" in refused(npy).message


@pytest.mark.parametrize("value", [5e-324, 1e-300, 1e-20, 1e20, 1e300, -1e300])
def test_extreme_magnitudes_are_read_exactly(tmp_path, value):
    csv, mtx = tmp_path / "c.csv", tmp_path / "c.mtx"
    csv.write_text(f"{value!r},1\n")
    mtx.write_text(f"%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 {value!r}\n1 2 1\n")
    assert load(csv).costs[0, 0] == value
    assert load(mtx, "assignment").cost[0] == value


def test_capacity_extremes(tmp_path):
    path = tmp_path / "f.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 {2**63 - 1}\n")
    assert int(load(path, "flow").capacity[0]) == 2**63 - 1
    path.write_text(f"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 {2**63}\n")
    assert "out of range" in refused(path, "flow").message
    path.write_text("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 " + "9" * 5000 + "\n")
    err = refused(path, "flow")  # int() refuses 5000 digits; the message stays one short line
    assert err.line == 3 and len(str(err)) < 300


# ----------------------------------------------------------------------------- truncated, corrupt

def test_npy_trailing_bytes_and_malformed_headers(tmp_path):
    path = tmp_path / "d.npy"
    path.write_bytes(npy_header((2, 2)) + bytes(32) + b"junk")
    assert "follow" in refused(path).message
    path.write_bytes(npy_header((-1, 5)))
    err = refused(path)
    assert "negative" in err.message and "GiB" not in err.message
    path.write_bytes(npy_header((2,), "<U3") + bytes(24))
    assert "not numbers" in refused(path).message
    path.write_bytes(b"\x93NUMPY\x01\x00" + b"\x20\x00" + b"{'descr': <f8, 'shape': (3,)}      \n")
    assert "header is malformed" in refused(path).message


def test_damaged_archives_and_gzip(tmp_path):
    buf = io.BytesIO()
    np.savez(buf, points=np.arange(300.0).reshape(100, 3), frame_ptr=np.array([0, 100]))
    data = bytearray(buf.getvalue())
    data[1000] ^= 0xFF  # inside the points data: the checksum fails
    path = tmp_path / "s.npz"
    path.write_bytes(bytes(data))
    assert "damaged" in refused(path).message
    text = gzip.compress(MM_PATTERN.encode() + b"3 3 2\n1 1\n2 2\n" * 2000)
    broken = bytearray(text)
    broken[len(broken) // 2] ^= 0xFF
    gz = tmp_path / "m.mtx.gz"
    gz.write_bytes(bytes(broken))
    refused(gz)


def _binary_ply(tmp_path, vertices: int, extra: bytes = b"", faces: str = "") -> Path:
    header = (f"ply\nformat binary_little_endian 1.0\nelement vertex {vertices}\n" + PLY_XYZ + faces +
              "end_header\n").encode()
    path = tmp_path / "b.ply"
    path.write_bytes(header + np.arange(3 * 3, dtype="<f4").tobytes() + extra)
    return path


def test_binary_ply_truncated_or_with_trailing_bytes(tmp_path):
    path = _binary_ply(tmp_path, 4, faces="")  # 3 vertices of data for 4 declared
    err = refused(path)
    assert err.line == 3 and "'vertex'" in err.message
    path = _binary_ply(tmp_path, 3, extra=b"\0" * 5)
    assert "5 bytes follow the last element" in refused(path).message
    path = _binary_ply(tmp_path, 3, extra=b"\0" * 5, faces="element junk 2\nproperty uchar a\n")
    err = refused(path)
    assert "1 byte follow" in err.message or "bytes follow" in err.message
    path = _binary_ply(tmp_path, 3, extra=b"\0" * 1, faces="element junk 2\nproperty uchar a\n")
    err = refused(path)
    assert err.line == 7 and "'junk'" in err.message


def test_ascii_ply_row_counts(tmp_path):
    head = "ply\nformat ascii 1.0\nelement vertex 3\n" + PLY_XYZ
    path = tmp_path / "p.ply"
    path.write_text(head + "end_header\n" + "1 2 3\n" * 10)
    err = refused(path)
    assert err.line == 11 and "after the last element" in err.message
    path.write_text(head + "end_header\n" + "1 2 3\n" * 3 + "\n  \n")  # trailing blank lines are fine
    assert load(path).sizes == [3]
    path.write_text(head + "element face 2\nproperty list uchar int vertex_indices\nend_header\n"
                    + "1 2 3\n" * 3 + "3 0 1 2\n")
    err = refused(path)  # the 'element face' line
    assert err.line == 7 and "'face'" in err.message and "vertex 0" not in err.message
    path.write_text(head + "end_header\n1 2 3\n10 20\n1 2 3\n")  # rows are lines 8 to 10
    assert refused(path).line == 9
    path.write_text(head + "end_header\n1 2 3\n1 2 3 4\n1 2 3\n")
    assert refused(path).line == 9
    path.write_text(head + "property int frame\nend_header\n1 2 3 0\n1 2 3 1\n1 2 inf 0\n")
    assert refused(path).line == 11


def test_ply_header_faults(tmp_path):
    path = tmp_path / "p.ply"
    path.write_bytes(b"ply\nformat ascii 1.0\n" + b"comment " + b"x" * (2 << 20) + b"\n")
    assert "end_header" in refused(path).message
    path.write_text("ply\nformat ascii 1.0\nelement vertex -5\n" + PLY_XYZ + "end_header\n")
    assert refused(path).line == 3
    path.write_text("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nend_header\n1 2\n")
    assert "'z'" in refused(path).message


# ----------------------------------------------------------------------------- odd names

def test_a_name_too_long_is_one_line_for_load_and_save(tmp_path):
    long = tmp_path / ("a" * 300 + ".mtx")
    assert "too long" in refused(long).message
    graph = BipartiteGraph.from_edges([0], [1], 2, 2)
    with pytest.raises(InputError, match="cannot write file") as caught:
        save(graph, long)
    assert caught.value.path == str(long)
    longest = tmp_path / ("b" * 251 + ".mtx")  # 255 bytes, the most a name may have: it works
    save(graph, longest)
    assert load(longest).n_edges == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [longest.name]  # no temporary left


def test_a_missing_folder_is_named_by_every_writer(tmp_path):
    """`matchscope gen ... --out missing/x.mtx` said "No such file or directory" where `solve --out`
    named the missing folder: every writer now says it as the output check does."""
    from solvers.formats.batch import save_batch
    missing = tmp_path / "nowhere"
    graph = BipartiteGraph.from_edges([0], [1], 2, 2)
    for write, name in ((lambda path: save(graph, path), "x.mtx"),
                        (lambda path: save_batch(np.ones((2, 3, 3)), path), "b.npy")):
        with pytest.raises(InputError) as caught:
            write(missing / name)
        assert caught.value.message == f"cannot write file: no such folder {missing}"
    assert not missing.exists()


def test_odd_names_load_and_save(tmp_path):
    graph = BipartiteGraph.from_edges([0], [1], 2, 2)
    for name in ("-dash.mtx", "sp ace.mtx", "new\nline.mtx", "ünï cödé.mtx", ".hidden.mtx"):
        save(graph, tmp_path / name)
        assert load(tmp_path / name).n_edges == 1
    with pytest.raises(InputError, match="NUL"):
        load(str(tmp_path / "nul\0.mtx"))
    with pytest.raises(InputError, match="NUL"):
        save(graph, str(tmp_path / "nul\0.mtx"))
    (tmp_path / "folder.mtx").mkdir()
    assert "not a regular file" in refused(tmp_path / "folder.mtx").message
    with pytest.raises(InputError, match="cannot write file"):
        save(graph, tmp_path / "folder.mtx")
    with pytest.raises(InputError, match="cannot read file"):
        load(tmp_path / "-dash.mtx" / "inside.mtx")
    with pytest.raises(InputError, match="cannot write file"):
        save(graph, tmp_path / "-dash.mtx" / "inside.mtx")


def test_output_names_are_checked_before_work(tmp_path):
    """solvers.io_util.check_output_name: what a front end calls before a long solve."""
    from solvers.io_util import check_output_name
    check_output_name(tmp_path / "fine.csv")
    (tmp_path / "file").write_text("x")
    cases = [(tmp_path / ("d" * 300) / "x.csv", "too long"), (tmp_path / "no" / "x.csv", "no such folder"),
             (tmp_path / "file" / "x.csv", "not a folder"), (tmp_path / ("n" * 300 + ".csv"), "longer than"),
             (str(tmp_path / "a\0" / "x.csv"), "NUL")]
    for name, fragment in cases:
        with pytest.raises(InputError, match=fragment) as caught:
            check_output_name(name)
        shown = str(name).replace("\0", "?")  # unprintable characters of a name are shown as '?'
        assert caught.value.path == str(name) and str(caught.value).startswith(f"{shown}: cannot write file: ")


def test_a_fifo_is_not_opened(tmp_path):
    fifo = tmp_path / "pipe.mtx"
    os.mkfifo(fifo)
    assert "not a regular file" in refused(fifo).message  # opening it would block forever


# ----------------------------------------------------------------------------- writing over files

def test_a_read_only_file_is_not_replaced(tmp_path):
    graph = BipartiteGraph.from_edges([0], [1], 2, 2)
    target = tmp_path / "g.mtx"
    target.write_text("keep me\n")
    target.chmod(0o444)
    with pytest.raises(InputError, match="cannot write file: the file is read-only") as caught:
        save(graph, target)
    assert "\n" not in str(caught.value)
    assert target.read_text() == "keep me\n" and stat.S_IMODE(target.stat().st_mode) == 0o444
    assert [p.name for p in tmp_path.iterdir()] == ["g.mtx"]


def test_replacing_keeps_the_mode_and_follows_links(tmp_path):
    from solvers.io_util import atomic_write_bytes
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    target.chmod(0o640)
    atomic_write_bytes(target, b"new\n")
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    atomic_write_bytes(link, b"via link\n")
    assert link.is_symlink() and target.read_text() == "via link\n"
    fresh = tmp_path / "fresh.csv"
    umask = os.umask(0o027)
    try:
        atomic_write_bytes(fresh, b"x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640


def test_the_atomic_writer_raises_permission_error(tmp_path):
    from solvers.io_util import atomic_write_bytes
    target = tmp_path / "ro.bin"
    target.write_bytes(b"x")
    target.chmod(0o400)
    with pytest.raises(PermissionError) as caught:
        atomic_write_bytes(target, b"y")
    assert caught.value.errno == errno.EACCES


# ----------------------------------------------------------------------------- options, flow sizes, wording

def test_options_the_format_does_not_take(tmp_path):
    mtx = tmp_path / "g.mtx"
    mtx.write_text(MM_PATTERN + "3 3 1\n1 2\n")
    err = refused(mtx, source=1)  # a source means nothing to a matching
    assert "flow network" in err.message
    assert "n_rows" in refused(mtx, n_rows=3).message
    txt = tmp_path / "g.txt"
    txt.write_text("0 1\n")
    assert "options they take: n_rows, n_cols" in refused(txt, sink=2).message
    graph = BipartiteGraph.from_edges([0], [1], 2, 2)
    with pytest.raises(InputError, match="take no option bogus"):
        save(graph, tmp_path / "out.mtx", bogus=1)
    result = Result("matching", "test", "cpu", 1.0, 1, 0.0, Certificate("konig-cover", True, True),
                    row_match=np.array([1, -1]), col_match=np.array([-1, 0]))
    with pytest.raises(InputError, match="take no option series"):
        save(result, tmp_path / "out.csv", series=None)
    assert not (tmp_path / "out.mtx").exists() and not (tmp_path / "out.csv").exists()


def test_flow_network_sizes_and_ends(tmp_path):
    path = tmp_path / "f.mtx"
    for n in (0, 1):
        path.write_text(f"%%MatrixMarket matrix coordinate integer general\n{n} {n} 0\n")
        err = refused(path, "flow")
        assert err.line == 2 and "at least two vertices" in err.message and "-1" not in err.message
    path.write_text("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 4\n")
    assert "not one of the vertices 0..2" in refused(path, "flow", source=7).message
    assert "vertex number" in refused(path, "flow", sink="x").message
    assert "same vertex" in refused(path, "flow", source=2).message
    path.write_text("%%MatrixMarket matrix coordinate integer general\n%matchscope flow: source=9 sink=1\n"
                    "3 3 1\n1 2 4\n")
    assert refused(path, "flow").line == 2


def test_save_messages_are_plain_words(tmp_path):
    net = FlowNetwork.from_edges(3, [0, 1], [1, 2], [1, 1], 0, 2)
    with pytest.raises(InputError) as caught:
        save(net, tmp_path / "n.npy")
    assert caught.value.message == "a flow network cannot be saved as .npy; use .mtx or .max (add .gz to compress)"
    for obj, name in [(CostMatrix.from_array([[1.0]]), "c.ply"), (PointSeries.from_frames([np.zeros((1, 3))]), "p"),
                      (object(), "x.csv")]:
        with pytest.raises(InputError) as caught:
            save(obj, tmp_path / name)
        assert not UNPLAIN.search(caught.value.message) and "object" not in caught.value.message.split()[-1]


# ----------------------------------------------------------------------------- the command line

def test_the_cli_prints_one_error_line(tmp_path):
    path = tmp_path / "m.mtx"
    path.write_text(MM_PATTERN + "100000000 100000000 1\n1 1\n")
    env = dict(os.environ, PYTHONPATH=_pythonpath())
    proc = subprocess.run([sys.executable, "-m", "solvers", "solve", str(path), "--algo", "gpr", "--backend", "cpu"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {path}:2: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_damaged_track_files_are_named_plainly(tmp_path):
    from solvers.formats import tracks
    path = tmp_path / "t.json"
    for text, fragment, line in [('{"x": 1}', "no 'tracks' entry", None), ("{bad", "double quotes", 1),
                                 ('{"tracks": [{"frames": [1], "indices": [1], "points": "ab"}]}', "do not hold", None),
                                 ('\ufeff{"tracks": []}', None, None)]:
        path.write_text(text)
        if fragment is None:  # a byte-order mark before the JSON is fine
            assert tracks.read(path).tracks == []
            continue
        with pytest.raises(InputError, match=fragment) as caught:
            tracks.read(path)
        assert caught.value.line == line and not UNPLAIN.search(str(caught.value))


@pytest.mark.parametrize("name", ["m.mtx.gz", "c.csv.gz", "b.npy.gz"])
def test_a_cut_or_damaged_compressed_file_is_said_in_words(tmp_path, name):
    """gzip's own texts ("Compressed file ended before the end-of-stream marker was reached") are
    Python's: a cut .gz says its compressed data ends early, a corrupted one that it is damaged."""
    if name.startswith("b."):
        raw = io.BytesIO()
        np.save(raw, np.random.default_rng(0).random((2, 30, 30)))
        body = raw.getvalue()
    elif name.startswith("m."):
        body = ("%%MatrixMarket matrix coordinate pattern general\n40 40 40\n"
                + "".join(f"{i} {i}\n" for i in range(1, 41))).encode()
    else:
        body = "".join(f"{i},{i + 1}\n" for i in range(400)).encode()
    packed = gzip.compress(body)
    path = tmp_path / name
    path.write_bytes(packed[:len(packed) // 2])
    err = refused(path)
    assert "its compressed data ends early (truncated?)" in err.message and "end-of-stream" not in str(err), str(err)
    damaged = bytearray(packed)
    damaged[len(damaged) // 2] ^= 0xFF
    path.write_bytes(bytes(damaged))
    err = refused(path)
    assert re.search(r"compressed data (is damaged|ends early)|truncated|damaged", err.message), str(err)
    assert str(err).isprintable() and "Error" not in str(err) and "zlib" not in str(err), str(err)


def test_a_size_line_of_one_entry_says_entry(tmp_path):
    path = tmp_path / "one.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n")
    assert refused(path).message == "the size line declares 1 entry but the file has 0 (truncated?)"


@pytest.mark.parametrize("name", ["e.npz", "e.npy", "e.mtx", "e.csv"])
def test_an_empty_file_says_it_is_empty_whatever_its_format(tmp_path, name):
    """An empty .npz said "not a complete zip file (damaged or cut short?)" where the others say empty."""
    path = tmp_path / name
    path.write_bytes(b"")
    assert refused(path).message == "file is empty"
