#!/usr/bin/env python3
"""Make the report's figures, tables and numbers: ``python report/build.py --help``.

``make report`` runs this, then LaTeX. See reportgen/__init__.py for the modules.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reportgen.build import main

if __name__ == "__main__":
    sys.exit(main())
