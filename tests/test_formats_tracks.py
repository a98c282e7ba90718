"""Track exports (solvers.formats.tracks): Track CSV ``track,frame,index,x,y,z[,id]`` and Track
JSON (summary, frame stats, tracks), chosen by extension, written atomically, read back."""
from __future__ import annotations

import csv
import gzip
import json

import numpy as np
import pytest

import solvers
from solvers.errors import InputError
from solvers.formats import tracks as track_files
from solvers.problems import PointSeries


@pytest.fixture(scope="module")
def tracked():
    series = solvers.generate("particles", n=30, frames=5, speed=0.03, enter_rate=0.15, leave_rate=0.15, seed=7)
    return series, solvers.track(series, "lsa", backend="cpu")


def expected_rows(series, result):
    rows = []
    for k, tr in enumerate(result.tracks):
        for f, i in tr:
            rows.append([k, f, i, *series.frames[f][i], int(series.ids[f][i])])
    return rows


@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz", "T.CSV"])
def test_csv_content(tmp_path, tracked, name):
    series, result = tracked
    path = tmp_path / name
    solvers.save(result, path)
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if name.endswith(".gz") else raw).decode()
    rows = list(csv.reader(text.splitlines()))
    assert rows[0] == ["track", "frame", "index", "x", "y", "z", "id"]
    body = [[int(r[0]), int(r[1]), int(r[2]), float(r[3]), float(r[4]), float(r[5]), int(r[6])] for r in rows[1:]]
    assert body == expected_rows(series, result)  # coordinates exactly: shortest round-trip floats
    assert len(body) == sum(series.sizes)
    # every link of the result joins consecutive rows of one track
    owner = {(f, i): k for k, f, i, *_ in body}
    for t, links in enumerate(result.links):
        assert all(owner[(t, int(a))] == owner[(t + 1, int(b))] for a, b in links)


@pytest.mark.parametrize("name", ["t.csv", "t.json", "t.json.gz"])
def test_round_trip(tmp_path, tracked, name):
    series, result = tracked
    path = tmp_path / name
    solvers.save(result, path)
    table = track_files.read(path)
    assert table.tracks == [list(tr) for tr in result.tracks]
    for tr, xyz, ids in zip(table.tracks, table.points, table.ids):
        assert np.array_equal(xyz, np.array([series.frames[f][i] for f, i in tr]).reshape(-1, 3))
        assert np.array_equal(ids, [series.ids[f][i] for f, i in tr])
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_json_summary_and_frame_stats(tmp_path, tracked):
    series, result = tracked
    path = tmp_path / "t.json"
    solvers.save(result, path)
    record = json.loads(path.read_text())
    assert record["format"] == "matchscope tracks"
    assert record["summary"]["tracks"] == len(result.tracks) and record["summary"]["gating"] == "auto"
    assert record["summary"]["max_distance"] == pytest.approx(result.max_distance)
    assert record["summary"]["accuracy"] == pytest.approx(result.accuracy)
    assert len(record["frame_stats"]) == series.n_frames - 1
    assert all(s["certified"] and "gap" in s for s in record["frame_stats"])
    first = record["tracks"][0]
    assert set(first) == {"track", "frames", "indices", "points", "ids"}


def test_without_ground_truth_there_is_no_id_column(tmp_path):
    rng = np.random.default_rng(3)
    series = PointSeries.from_frames([rng.random((4, 3)), rng.random((5, 3)), rng.random((3, 3))])
    result = solvers.track(series, "hungarian", backend="cpu", max_distance="off")
    solvers.save(result, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text().splitlines()[0] == "track,frame,index,x,y,z"
    assert track_files.read(tmp_path / "t.csv").ids is None
    solvers.save(result, tmp_path / "t.json")
    assert "ids" not in json.loads((tmp_path / "t.json").read_text())["tracks"][0]


def test_overwrites_atomically(tmp_path, tracked):
    _, result = tracked
    path = tmp_path / "t.csv"
    path.write_text("old\n")
    solvers.save(result, path)
    assert path.read_text().startswith("track,frame,index")


def test_series_given_separately(tmp_path, tracked):
    series, result = tracked
    import dataclasses
    bare = dataclasses.replace(result, series=None)
    with pytest.raises(TypeError, match="series"):
        solvers.save(bare, tmp_path / "t.csv")
    solvers.save(bare, tmp_path / "t.csv", series=series)
    assert track_files.read(tmp_path / "t.csv").tracks == [list(t) for t in result.tracks]
    other = solvers.generate("particles", n=5, frames=2, seed=1)
    with pytest.raises(ValueError, match="not the point series"):
        solvers.save(bare, tmp_path / "u.csv", series=other)
    assert not (tmp_path / "u.csv").exists()
    # the right number of points, each in range, but one point twice and another never
    tracks = [list(t) for t in result.tracks]
    long = next(t for t in tracks if len(t) > 1)
    long[-1] = tracks[0][0] if tracks[0][0] not in long else tracks[1][0]
    twice = dataclasses.replace(bare, tracks=tracks)
    with pytest.raises(ValueError, match="not the point series"):
        solvers.save(twice, tmp_path / "v.csv", series=series)


@pytest.mark.parametrize("name", ["t.mtx", "t.txt", "t.npz"])
def test_bad_extension(tmp_path, tracked, name):
    with pytest.raises(InputError, match="a tracking result cannot be saved as .* use .csv or .json"):
        solvers.save(tracked[1], tmp_path / name)
    assert not (tmp_path / name).exists()


def test_a_name_without_extension_gets_track_csv(tmp_path, tracked):
    solvers.save(tracked[1], tmp_path / "tracks")
    assert (tmp_path / "tracks").read_text().splitlines()[0].startswith("track,frame,index,x,y,z")


def test_unwritable_path(tmp_path, tracked):
    with pytest.raises(InputError, match="cannot write file"):
        solvers.save(tracked[1], tmp_path / "no-such-folder" / "t.csv")


def test_reader_rejects_other_files(tmp_path):
    (tmp_path / "a.csv").write_text("row,col\n0,1\n")
    with pytest.raises(InputError, match="header"):
        track_files.read(tmp_path / "a.csv")
    (tmp_path / "b.json").write_text('{"pairs": []}')
    with pytest.raises(InputError, match="track JSON"):
        track_files.read(tmp_path / "b.json")
    (tmp_path / "c.csv").write_text("track,frame,index,x,y,z\n0,0,0,1,2,oops\n")
    with pytest.raises(InputError, match="c.csv:2: .oops. is not a number"):
        track_files.read(tmp_path / "c.csv")
