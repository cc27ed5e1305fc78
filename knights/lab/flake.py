"""The flake meter: run chosen tests N times in a clean clone and print each test's failure rate.

    python -m knights.lab.flake --runs 10                  # the clock tests (pytest -m clock), 10 times
    python -m knights.lab.flake --runs 5 -- -n 2 tests/test_uci.py
    make flake RUNS=10 TESTS="-m clock"

The clone is ``git clone`` of this repository's committed ``HEAD`` into a temporary folder (``--keep`` to look at
it afterwards); ``make setup browser`` runs there once, as ``make test`` does (minutes: a fresh virtual
environment, the compiled search, the web page's board library), then the tests run ``--runs`` times, each run
with the test outputs of the last one removed (``git clean`` of everything but what that setup made, which a user
keeps between runs too).
Each run writes a JUnit file; the table gives, per test that failed at least once, its failures over the runs
it ran, and the run's wall time. The exit status is 1 when any test failed in any run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from knights.common import commit

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TESTS = ["-m", "clock"]
KEEP_BETWEEN_RUNS = [".venv", "knights/engine/__pycache__", "data", "knights/frontends/web/frontend/node_modules"]


def outcomes(junit: Path) -> dict[str, bool]:
    """``{test id: passed}`` for every test case a JUnit file records (skipped ones left out)."""
    result: dict[str, bool] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("skipped") is not None:
            continue
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        result[name] = case.find("failure") is None and case.find("error") is None
    return result


def table(runs: list[dict[str, bool]]) -> str:
    """Failure rate per test over ``runs``: the tests that failed at least once, worst first."""
    ran: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    for run in runs:
        for name, passed in run.items():
            ran[name] += 1
            failed[name] += not passed
    lines = [f"{len(ran)} tests, {len(runs)} runs, {sum(failed.values())} failures"]
    for name, n in sorted(failed.items(), key=lambda kv: (-kv[1], kv[0])):
        if n:
            lines.append(f"  {n}/{ran[name]}  {n / ran[name]:6.1%}  {name}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m knights.lab.flake", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="how many times to run the tests (default 10)")
    parser.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    parser.add_argument("pytest_args", nargs="*", help="pytest's arguments after -- (default: -m clock)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, not {args.runs}")
    if commit().endswith("-dirty"):
        print("note: the clone takes the committed HEAD; uncommitted changes are not measured", file=sys.stderr)
    folder = Path(tempfile.mkdtemp(prefix="knights-flake-"))
    clone = folder / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    print(f"clean clone of HEAD in {clone}; make setup browser there (minutes)...", flush=True)
    setup = subprocess.run(["make", "setup", "browser"], cwd=clone, capture_output=True, text=True, check=False)
    if setup.returncode != 0:          # pip's and make's chatter is shown only when the setup fails
        print(setup.stdout[-4000:] + setup.stderr[-4000:], file=sys.stderr)
        print(f"make setup browser failed in {clone} (exit {setup.returncode})", file=sys.stderr)
        return 2
    tests = args.pytest_args or DEFAULT_TESTS
    runs: list[dict[str, bool]] = []
    for i in range(args.runs):
        excluded = [arg for keep in KEEP_BETWEEN_RUNS for arg in ("-e", keep)]
        subprocess.run(["git", "clean", "-xdfq", *excluded], cwd=clone, check=True)
        junit = folder / f"run{i}.xml"
        started = time.perf_counter()
        subprocess.run([".venv/bin/python", "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
                        *tests], check=False, cwd=clone, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not junit.exists():
            print(f"run {i + 1}: pytest wrote no results (arguments {tests!r})", file=sys.stderr)
            return 2
        runs.append(outcomes(junit))
        bad = sum(not ok for ok in runs[-1].values())
        print(f"run {i + 1}/{args.runs}: {len(runs[-1])} tests, {bad} failed, "
              f"{time.perf_counter() - started:.0f} s", flush=True)
    print(table(runs))
    if args.keep:
        print(f"kept: {folder}")
    else:
        subprocess.run(["rm", "-rf", str(folder)], check=False)
    return int(any(not ok for run in runs for ok in run.values()))


if __name__ == "__main__":
    sys.exit(main())
