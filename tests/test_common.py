"""knights.common: the commit a results file records."""

import os
import subprocess
from pathlib import Path

from knights.common import commit

ROOT = Path(__file__).resolve().parent.parent


def test_commit_names_this_checkouts_head_from_any_folder(tmp_path):
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    here = commit()
    assert here in (head, f"{head}-dirty")
    before = Path.cwd()
    os.chdir(tmp_path)   # a folder outside any checkout: still this checkout's commit
    try:
        assert commit() == here
    finally:
        os.chdir(before)
