"""knights.common: the commit a results file records."""

import subprocess
from pathlib import Path

import pytest

from knights.common import commit

ROOT = Path(__file__).resolve().parent.parent


def test_commit_names_this_checkouts_head_from_any_folder(tmp_path, monkeypatch):
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    here = commit()
    assert here in (head, f"{head}-dirty")
    monkeypatch.chdir(tmp_path)   # a folder outside any checkout: still this checkout's commit
    assert commit() == here
