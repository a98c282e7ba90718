"""Declared algorithm options: values are converted to the declared type and checked against the
declared choices and ranges when they are given (CLI, explorer form, API), with one plain line."""
from __future__ import annotations

import math

import pytest

import solvers
from solvers.errors import InputError
from solvers.registry import Option


def parse(algorithm: str, **given):
    return solvers.algorithms()[algorithm].parse_options(given)


def refused(algorithm: str, **given) -> str:
    with pytest.raises(InputError) as info:
        parse(algorithm, **given)
    text = str(info.value)
    assert "<options" not in text and "'" not in text and "\n" not in text, text  # no prefix, no reprs
    return text


def test_every_numeric_option_declares_a_range_its_default_satisfies():
    for algo in solvers.algorithms().values():
        for opt in algo.options:
            if opt.kind in ("int", "float"):
                assert opt.low is not None and opt.high is not None, (algo.name, opt.name)
                assert opt.parse(opt.default) == opt.default, (algo.name, opt.name)
                assert opt.range_text(), (algo.name, opt.name)


@pytest.mark.parametrize("algorithm, given, expected", [
    ("wbpr", {"cycles": "99999999999999999999"}, "option cycles must be 0 to 2147483647, not 99999999999999999999"),
    ("wbpr", {"cycles": "-1"}, "option cycles must be 0 to 2147483647, not -1"),
    ("wbpr", {"cycles": "2.5"}, "option cycles must be a whole number, not 2.5"),
    ("auction", {"eps": "-1"}, "option eps must be at least 0, not -1"),
    ("auction", {"eps": "inf"}, "option eps must be a finite number, at least 0, not inf"),
    ("auction", {"eps": "nan"}, "option eps must be a number, not nan"),
    ("auction", {"eps_factor": "-1e15"}, "option eps_factor must be more than 1 and at most 1e+06, not -1e15"),
    ("auction", {"eps_factor": 1.0}, "option eps_factor must be more than 1 and at most 1e+06, not 1.0"),
    ("auction", {"eps_factor": "inf"}, "option eps_factor must be more than 1 and at most 1e+06, not inf"),
    ("gpr", {"k": True}, "option k must be a number, not True"),
    ("gpr", {"sync_every": False}, "option sync_every must be a whole number, not False"),
    ("gpr", {"final_check": 1}, "option final_check must be true or false, not 1"),
    ("gpr", {"final_check": "maybe"}, "option final_check must be true or false, not maybe"),
    ("gpr", {"variant": "fast"}, "option variant must be one of first, noshrink, shrink, not fast"),
    ("hungarian", {"bogus": 1}, "hungarian has no option bogus (its options: variant, device_loop)"),
])
def test_bad_values_are_refused_with_one_plain_line(algorithm, given, expected):
    assert refused(algorithm, **given) == expected


def test_good_values_are_converted_to_the_declared_type():
    assert parse("wbpr", cycles="1e3")["cycles"] == 1000 and isinstance(parse("wbpr", cycles="1e3")["cycles"], int)
    assert parse("auction", eps="0.25", eps_factor="4")["eps_factor"] == 4.0
    assert parse("gpr", final_check="off")["final_check"] is False
    assert parse("gpr", k=0)["k"] == 0.0  # 0 = the strategy's default, at the range's closed end
    assert math.isinf(parse("pr-seq", k="inf")["k"])  # pr-seq documents inf: only the first relabel
    assert refused("pr-seq", k=0) == "option k must be more than 0, not 0"


def test_unknown_algorithm_is_one_plain_line():
    with pytest.raises(InputError) as info:
        solvers.solve(solvers.generate("random-bipartite", rows=3, cols=3, degree=1), "no-such-algo")
    assert str(info.value).startswith("there is no algorithm called no-such-algo; choose from ")


def test_range_text_reads_naturally():
    assert Option("a", 1, low=0, high=10).range_text() == "0 to 10"
    assert Option("a", 2.0, low=1.0, low_open=True, high=math.inf).range_text() == "more than 1"
    assert Option("a", 2.0, low=0.0, high=math.inf).range_text() == "at least 0"
