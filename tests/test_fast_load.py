"""Loading at disk speed (issue 13): a large Matrix Market file is read by scipy's threaded reader
after a strict compiled check of its body, and must give exactly the problem the checking reader
gives; a file the check refuses, or any damaged file, must end exactly as it does in the checking
reader (the same one-line error, the same line), and nothing is allocated for entries a header
declares but the file does not hold."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

from solvers.errors import InputError
from solvers.formats import _mtx_check, load
from solvers.formats import matrix_market as mm
from tests.conftest import ROOT
from tests.test_formats_errors import TEXT_CASES

FIELDS = ("pattern", "integer", "real")
BANNER = "%%MatrixMarket matrix coordinate {field} {symmetry}\n"


@pytest.fixture
def fast(monkeypatch):
    """Every file, however small, goes the fast way (when the check lets it)."""
    monkeypatch.setattr(mm, "FAST_MIN_BYTES", 0)


def outcome(path, problem=None, *, fast_reader: bool):
    """('ok', the problem's fields) or ('error', message, line) of one load."""
    saved = mm.FAST_MIN_BYTES
    mm.FAST_MIN_BYTES = 0 if fast_reader else 1 << 62
    try:
        loaded = load(path, problem=problem)
    except InputError as e:
        assert "\n" not in str(e) and e.path == str(path), str(e)
        return ("error", e.message, e.line)
    finally:
        mm.FAST_MIN_BYTES = saved
    return ("ok", type(loaded).__name__, [(f.name, _plain(getattr(loaded, f.name)))
                                           for f in dataclasses.fields(loaded)])


def _plain(value):
    if isinstance(value, np.ndarray):
        return (str(value.dtype), value.shape, value.tobytes())  # dtype and bits: -0.0 and 0.0 differ
    return value


def assert_same_ending(path, problem=None):
    assert outcome(path, problem, fast_reader=True) == outcome(path, problem, fast_reader=False)


# ----------------------------------------------------------------------------- generated files

def _value_text(rng, field: str) -> str:
    if field == "integer":
        v = int(rng.integers(-10**6, 10**6))
        return rng.choice([str(v), f"{'-' if v < 0 else ''}{'0' * int(rng.integers(1, 4))}{abs(v)}",
                           "-0", str(int(rng.integers(-10**17, 10**17)))])
    x = float(rng.normal() * 10.0 ** int(rng.integers(-8, 9)))
    return str(rng.choice([repr(x), f"{x:.3e}", f"{x:E}", f"{x:.20g}", f"{abs(x):.6f}", ".5", "-.25", "5.", "-0",
                           "1e-310", "4.9406564584124654e-324", "1.7976931348623157e308", "2.4703282292062328e-324",
                           "0.1000000000000000055511151231257827021181583404541015625", "123456789012345678901234",
                           "1E+5", "7e-0"]))


def mtx_text(rng, field: str, symmetry: str, n_rows: int, n_cols: int, n_entries: int, *,
             unique: bool, odd_layout: bool) -> str:
    """A Matrix Market file in the fast reader's grammar; ``odd_layout``: blanks, tabs, CRLF,
    leading zeros, header comments and blank lines, all of which the grammar allows."""
    if symmetry == "symmetric":
        n_cols = n_rows
    if unique:  # no more entries than distinct pairs
        n_entries = min(n_entries, n_rows * (n_rows + 1) // 2 if symmetry == "symmetric" else n_rows * n_cols)
    pairs = set()
    lines = []
    while len(lines) < n_entries:
        r, c = int(rng.integers(1, n_rows + 1)), int(rng.integers(1, n_cols + 1))
        if symmetry == "symmetric" and c > r:
            r, c = c, r
        if unique and (r, c) in pairs:
            continue
        pairs.add((r, c))
        fields = [str(r), str(c)] + ([] if field == "pattern" else [_value_text(rng, field)])
        if odd_layout:
            fields[0] = "0" * int(rng.integers(0, 3)) + fields[0]
            seps = [rng.choice([" ", "  ", "\t", " \t "]) for _ in fields]
            line = rng.choice(["", " ", "\t"]) + "".join(f + s for f, s in zip(fields, seps)).rstrip(" \t")
            line += rng.choice(["", " ", "\t "]) + rng.choice(["", "\r"])
        else:
            line = " ".join(fields)
        lines.append(line)
    head = BANNER.format(field=field, symmetry=symmetry)
    if odd_layout:
        head += "% a comment\n\n   % an indented one\n"
    return head + f"{n_rows} {n_cols} {n_entries}\n" + "".join(line + "\n" for line in lines)


@pytest.mark.parametrize("symmetry", ["general", "symmetric"])
@pytest.mark.parametrize("field", FIELDS)
def test_the_fast_reader_gives_the_checking_readers_problem(tmp_path, sweep, field, symmetry):
    for seed in range(sweep(300, 12)):
        rng = np.random.default_rng([seed, FIELDS.index(field), symmetry == "symmetric"])
        n_rows, n_cols = int(rng.integers(2, 40)), int(rng.integers(2, 40))
        if seed % 3 == 0:
            n_cols = n_rows
        n_entries = int(rng.integers(1, 3 * min(n_rows, n_cols)))
        path = tmp_path / f"m{seed}.mtx"
        path.write_text(mtx_text(rng, field, symmetry, n_rows, n_cols, n_entries, unique=seed % 2 == 0,
                                 odd_layout=seed % 4 >= 2), newline="")
        mm.FAST_MIN_BYTES, saved = 0, mm.FAST_MIN_BYTES
        try:
            assert mm._read_fast(path) is not None, path.read_text()[:500]  # the fast reader did read it
        finally:
            mm.FAST_MIN_BYTES = saved
        for problem in (None, "assignment", "flow"):  # refusals too: duplicates, fractions, a pattern's costs
            assert_same_ending(path, problem)


def test_a_file_of_a_mebibyte_goes_the_fast_way_by_default(tmp_path):
    rng = np.random.default_rng(5)
    n = 60_000
    rows, cols = rng.integers(1, 5001, n), rng.integers(1, 3001, n)
    values = rng.normal(size=n) * 1e3
    body = "".join(f"{r} {c} {float(v)!r}\n" for r, c, v in zip(rows, cols, values))
    path = tmp_path / "big.mtx"
    path.write_text(BANNER.format(field="real", symmetry="general") + f"5000 3000 {n}\n" + body)
    assert path.stat().st_size >= mm.FAST_MIN_BYTES
    header, fast_rows, fast_cols, fast_values = mm._read_fast(path)
    np.testing.assert_array_equal(fast_rows, rows - 1)
    np.testing.assert_array_equal(fast_cols, cols - 1)
    assert fast_values.tobytes() == values.tobytes()  # repr round-trips: the same doubles, bit for bit
    assert_same_ending(path)


@pytest.mark.parametrize("field", ["pattern", "integer"])
def test_exact_integer_files_are_parsed_without_scipys_reader(tmp_path, monkeypatch, field):
    rng = np.random.default_rng(9)
    n = 120_000
    rows, cols = rng.integers(1, 70_001, n), rng.integers(1, 90_001, n)
    values = rng.integers(-10**17, 10**17, n)
    text = "".join(f"{r} {c}\n" for r, c in zip(rows, cols)) if field == "pattern" else \
        "".join(f"{r} {c} {v}\n" for r, c, v in zip(rows, cols, values))
    path = tmp_path / "big.mtx"
    path.write_text(BANNER.format(field=field, symmetry="general") + f"70000 90000 {n}\n" + text)
    assert path.stat().st_size >= mm.FAST_MIN_BYTES

    def no_mmread(*args, **kwargs):
        raise AssertionError("scipy's reader was called for a file of exact integers")
    import scipy.io
    monkeypatch.setattr(scipy.io, "mmread", no_mmread)
    header, fast_rows, fast_cols, fast_values = mm._read_fast(path)
    assert fast_rows.dtype == fast_cols.dtype == np.int32  # no int64 coordinates to narrow later
    np.testing.assert_array_equal(fast_rows, rows - 1)
    np.testing.assert_array_equal(fast_cols, cols - 1)
    if field == "pattern":
        assert fast_values is None
    else:
        np.testing.assert_array_equal(fast_values, values)  # 18 digits: exact in int64
    assert_same_ending(path)
    assert_same_ending(path, "assignment")


def test_the_warmed_check_serves_a_files_body_without_compiling(tmp_path, fast):
    from solvers.warmup import watch_compiles
    _mtx_check.warm()
    path = tmp_path / "m.mtx"
    path.write_text(BANNER.format(field="integer", symmetry="general") + "2 2 2\n1 1 4\n2 2 5\n")
    with watch_compiles(backend="cpu") as watch:
        assert load(path).n_edges == 2
    assert watch.compiled == 0


# ----------------------------------------------------------------------------- damaged files

_JUNK = [b" ", b"\t", b"\r", b"\n", b"%", b"+", b"-", b".", b"e", b"E", b"0", b"9", b"x", b"\x00", b"\xff", b"1.5",
         b"inf", b"nan", b"99999999999999999999", b"\r\n", b" 7", b"\n\n"]


def _damage(rng, data: bytes, start: int = 0) -> bytes:
    """1 to 3 insertions, deletions, replacements or cuts at or after byte ``start``."""
    for _ in range(int(rng.integers(1, 4))):
        at = int(rng.integers(min(start, len(data)), len(data) + 1))
        action = int(rng.integers(0, 4))
        if action == 0:
            data = data[:at] + _JUNK[int(rng.integers(len(_JUNK)))] + data[at:]
        elif action == 1:
            data = data[:at] + data[at + int(rng.integers(1, 4)):]
        elif action == 2:
            data = data[:at] + _JUNK[int(rng.integers(len(_JUNK)))] + data[at + 1:]
        else:
            data = data[:max(at, 1)]  # cut short, maybe mid-line, maybe without a final newline
    return data


def _after_size_line(text: str) -> int:
    lines = text.split("\n")
    size_line = next(i for i, line in enumerate(lines) if line.strip() and not line.strip().startswith("%"))
    return sum(len(line) + 1 for line in lines[:size_line + 1])


def test_any_damage_ends_the_same_way_in_both_readers(tmp_path, sweep):
    for seed in range(sweep(3000, 240)):
        rng = np.random.default_rng([seed, 77])
        field = FIELDS[seed % 3]
        symmetry = "symmetric" if seed % 5 == 0 else "general"
        n = int(rng.integers(2, 8))
        text = mtx_text(rng, field, symmetry, n, n + (seed % 2) * (symmetry == "general"), int(rng.integers(1, 9)),
                        unique=True, odd_layout=seed % 7 == 0)
        path = tmp_path / f"d{seed}.mtx"
        body_at = _after_size_line(text)
        path.write_bytes(_damage(rng, text.encode(), 0 if seed % 4 == 0 else body_at))  # mostly the entries
        for problem in (None, "assignment", "flow"):
            assert outcome(path, problem, fast_reader=True) == outcome(path, problem, fast_reader=False), \
                (problem, path.read_bytes())


@pytest.mark.parametrize("case", [c for c in TEXT_CASES if c[1].endswith(".mtx")], ids=lambda c: c[0])
def test_malformed_files_give_the_checking_readers_line_through_the_fast_route(tmp_path, fast, case):
    _, name, content, problem, options, line, fragment = case
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        load(path, problem=problem, **options)
    assert caught.value.line == line and fragment in caught.value.message, str(caught.value)
    assert str(caught.value).startswith(f"{path}:{line}:" if line else f"{path}:")


_CRASHERS = [  # last lines that crash fast_matrix_market (scipy 1.17) when it is handed them
    "1 1 1\r", "1 1 1 ", "1 1 1\t", "1 1 1\x00\n", "1 1 1\x00", "1 1 1\n2 2 2 ", "1 1 1\n2 2 2\r",
]


def test_last_lines_that_crash_scipys_reader_never_reach_it(tmp_path):
    """In a child process, so that a regression is a failed test, not a crashed test run."""
    paths = []
    for i, body in enumerate(_CRASHERS):
        path = tmp_path / f"c{i}.mtx"
        entries = body.count("\n") + (not body.endswith("\n"))
        path.write_bytes((BANNER.format(field="real", symmetry="general") + f"2 2 {entries}\n" + body).encode())
        paths.append(str(path))
    child = textwrap.dedent("""
        import json, sys
        from solvers.errors import InputError
        from solvers.formats import load, matrix_market as mm
        mm.FAST_MIN_BYTES = 0
        out = []
        for path in json.loads(sys.argv[1]):
            try:
                out.append(["ok", load(path).n_edges])
            except InputError as e:
                out.append(["error", e.message, e.line])
        print(json.dumps(out))
    """)
    proc = subprocess.run([sys.executable, "-c", child, json.dumps(paths)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    checking = [outcome(p, fast_reader=False) for p in paths]
    expected = [list(o) if o[0] == "error" else ["ok", load(p).n_edges] for o, p in zip(checking, paths)]
    assert json.loads(proc.stdout.splitlines()[-1]) == expected


# ----------------------------------------------------------------------------- memory follows the bytes

def test_entries_declared_but_absent_cost_nothing(tmp_path, fast, monkeypatch):
    import scipy.io
    calls = []
    real_mmread = scipy.io.mmread
    monkeypatch.setattr(scipy.io, "mmread", lambda *a, **k: calls.append(a) or real_mmread(*a, **k))
    path = tmp_path / "m.mtx"
    path.write_text(BANNER.format(field="real", symmetry="general") + "3 3 50000000\n1 1 1\n2 2 2\n3 3 3\n")
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as caught:
            load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.line == 2 and "declares 50,000,000 entries but the file has 3" in caught.value.message
    assert peak < 64 << 20 and calls == []  # the checking reader reads 16 MiB blocks; 50M entries need 400 MiB+
    # as many lines as declared, but one of them is not an entry: scipy's reader is not asked either
    path.write_text(BANNER.format(field="pattern", symmetry="general") + "3 3 4\n1 1\n% not an entry\n2 2\n3 3\n"
                    + "1 2\n")
    assert outcome(path, fast_reader=True) == outcome(path, fast_reader=False)
    assert calls == []


def test_a_compressed_or_marked_file_is_read_by_the_checking_reader(tmp_path, fast):
    import gzip
    text = BANNER.format(field="pattern", symmetry="general") + "2 2 2\n1 1\n2 2\n"
    gz, bom = tmp_path / "m.mtx.gz", tmp_path / "b.mtx"
    gz.write_bytes(gzip.compress(text.encode()))
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert mm._read_fast(gz) is None and mm._read_fast(bom) is None
    assert load(gz).n_edges == load(bom).n_edges == 2
