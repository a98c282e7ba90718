"""print(result) is one plain line: what was solved, how, the value and its proof; never the
dataclass's dump of arrays and tolerances (found by a newcomer pass)."""
from __future__ import annotations

import numpy as np

import solvers


def assert_plain(text: str) -> None:
    assert "\n" not in text and "array(" not in text and "Result(" not in text and "{" not in text, text


def test_an_assignment_prints_as_one_plain_line():
    result = solvers.solve([[4, 1, 3], [2, 0, 5], [3, 2, 2]], "lsa", backend="cpu")
    text = str(result)
    assert_plain(text)
    assert text.startswith("assignment solved by lsa on cpu in ") and ": value 5; " in text
    assert text.endswith(result.certificate.summary()) and "certified optimal" in text


def test_a_matching_and_a_failed_proof_say_so():
    result = solvers.solve(np.eye(4), "hopcroft-karp", backend="cpu")
    assert_plain(str(result))
    assert "matching solved by hopcroft-karp on cpu" in str(result) and "value 4;" in str(result)
    certificate = solvers.result.Certificate("dual-potentials", True, False, gap=2.5, reason="no dual closes it")
    assert str(certificate) == "dual-potentials: valid, not proven optimal, gap 2.5 (no dual closes it)"


def test_a_tracked_series_prints_as_one_plain_line():
    rng = np.random.default_rng(0)
    frames = [rng.random((30, 3))]
    frames += [frames[-1] + 0.01, frames[-1] + 0.02]
    tracks = solvers.track(frames, "lsa", backend="cpu")
    text = str(tracks)
    assert_plain(text)
    assert text == "3 frames, 60 links in 30 tracks; 2 of 2 frame pairs certified (lsa)"


def test_a_point_series_prints_as_one_plain_line():
    """print(series) says its frames, points and ids; it dumped every frame's array."""
    series = solvers.PointSeries.from_frames([np.zeros((3, 3)), np.ones((2, 3))], [np.arange(3), np.arange(2)],
                                             source="x.csv")
    assert str(series) == repr(series) == ("PointSeries(2 frames of 2 to 3 points (5 in all), with ground-truth ids, "
                                           "from x.csv)")
    big = solvers.PointSeries.from_frames([np.zeros((1500, 3))] * 400)
    assert_plain(str(big))
    assert str(big) == "PointSeries(400 frames of 1,500 points, no ids)"
    assert str([solvers.PointSeries.from_frames([np.zeros((1, 3))])]) == "[PointSeries(1 frame of 1 point, no ids)]"
