#!/usr/bin/env python3
"""Statistics of the full dataset, computed once and committed for the report.

    python report/data_stats.py data/full        # -> report/results/data_stats.json

Run it after ``make data``. Without that file the report computes the same
statistics from the committed sample (data/sample) and says so.
"""
import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from reportgen import datastats  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", help="folder of CSSLab chunk files, e.g. data/full")
    p.add_argument("--out", default=str(HERE / "results" / "data_stats.json"))
    args = p.parse_args()
    t0 = time.perf_counter()
    stats = datastats.compute(args.folder)
    stats["folder"] = Path(args.folder).as_posix()
    stats["generated"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(stats, indent=1) + "\n")
    print(f"{out}: {stats['rows']:,} positions, {stats['games']:,} games ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
