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


def test_commit_is_dirty_for_changed_code_not_for_changed_results(tmp_path):
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "report" / "results").mkdir(parents=True)
    (tmp_path / "report" / "results" / "run.json").write_text("{}")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "first")
    head = commit(tmp_path)
    assert head != "unknown" and not head.endswith("-dirty")
    (tmp_path / "report" / "results" / "run.json").write_text('{"runs": 1}')     # a run writing its results
    assert commit(tmp_path) == head
    (tmp_path / "code.py").write_text("x = 2\n")                                  # the code itself changed
    assert commit(tmp_path) == f"{head}-dirty"
