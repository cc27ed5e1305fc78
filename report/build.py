#!/usr/bin/env python3
"""Fill the report from the results: ``python report/build.py [--readme] [--out DIR]``.

Writes DIR/report.tex (default report/build/) from report/report.tex.j2 and its figures,
or fails naming every value that is not measured or that the results contradict
(reportgen/render.py says how). ``make report`` runs this, then LaTeX.
"""
import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from reportgen.render import BuildError, build  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=HERE / "build")
    p.add_argument("--readme", action="store_true", help="also rewrite README.md's generated results block")
    p.add_argument("--results", type=Path, default=HERE / "results", help="the results folder (default report/results)")
    p.add_argument("--models", type=Path, default=HERE.parent,
                   help="the folder holding models_EL/ and models_SL/ (default: the repository)")
    args = p.parse_args()
    try:
        tex = build(args.out, results=args.results, models=args.models,
                    readme_path=HERE.parent / "README.md" if args.readme else None)
    except BuildError as exc:
        print("report/build.py: the report cannot be built:", file=sys.stderr)
        for line in str(exc).splitlines():
            print(f"  - {line}", file=sys.stderr)
        return 1
    print(tex.relative_to(HERE.parent) if tex.is_relative_to(HERE.parent) else tex)
    return 0


if __name__ == "__main__":
    sys.exit(main())
