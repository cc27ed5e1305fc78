"""The flake meter's counting (knights.lab.flake): JUnit files in, failure rate per test out."""

from pathlib import Path

from knights.lab.flake import outcomes, table

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_a" name="test_ok" time="0.1"/>
<testcase classname="tests.test_a" name="test_bad" time="0.1"><failure message="boom">x</failure></testcase>
<testcase classname="tests.test_b" name="test_err" time="0.1"><error message="setup">y</error></testcase>
<testcase classname="tests.test_b" name="test_skip" time="0.0"><skipped message="no"/></testcase>
</testsuite></testsuites>
"""


def test_outcomes_read_passes_failures_and_errors_and_leave_out_skips(tmp_path: Path):
    junit = tmp_path / "run.xml"
    junit.write_text(JUNIT)
    assert outcomes(junit) == {"tests.test_a::test_ok": True, "tests.test_a::test_bad": False,
                               "tests.test_b::test_err": False}


def test_table_gives_failures_over_runs_worst_first():
    runs = [{"a::x": True, "a::y": False}, {"a::x": False, "a::y": False}, {"a::x": True, "a::y": False}]
    lines = table(runs).splitlines()
    assert lines[0] == "2 tests, 3 runs, 4 failures"
    assert lines[1].split()[:3] == ["3/3", "100.0%", "a::y"]
    assert lines[2].split()[:3] == ["1/3", "33.3%", "a::x"]
    assert table([{"a::x": True}]) == "1 tests, 1 runs, 0 failures"
