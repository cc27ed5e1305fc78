"""``knights play`` at the edges (issue 25): bad ``--movetime``/``--depth`` and a full disk."""

from __future__ import annotations

import errno
import io
import sys

import pytest

from knights import cli
from knights.play import terminal


@pytest.mark.parametrize("flag,value", [("--movetime", "nan"), ("--movetime", "inf"), ("--movetime", "-1"),
                                        ("--movetime", "0"), ("--depth", "0"), ("--depth", "-3")])
def test_bad_movetime_and_depth_are_argparse_errors(flag, value, capsys):
    """``--movetime nan`` (or inf) used to hang without moving; ``-1`` and ``--depth 0`` were accepted."""
    with pytest.raises(SystemExit) as leave:
        cli.build_parser().parse_args(["play", flag, value])
    assert leave.value.code == 2
    assert f"argument {flag}" in capsys.readouterr().err


def test_a_full_disk_leaves_no_empty_pgn_and_prints_the_headers(tmp_path, monkeypatch, capsys):
    """On a full disk the game file used to be left at 0 bytes and the PGN printed instead
    lost its headers."""
    real_open = open

    class Full(io.TextIOWrapper):
        def write(self, _text):
            raise OSError(errno.ENOSPC, "No space left on device")

    def full_open(path, mode="r", *args, **kwargs):
        handle = real_open(path, mode, *args, **kwargs)
        if "w" in mode:
            handle.close()
            return Full(real_open(path, "wb"), encoding="utf-8")
        return handle

    monkeypatch.setattr(terminal, "open", full_open, raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO("e2e4\nquit\n"))
    games = tmp_path / "games"
    code = cli.main(["play", "--evaluator", "material", "--depth", "1", "--seed", "1", "--games-dir", str(games)])
    captured = capsys.readouterr()
    assert code != 0
    assert not games.exists() or not any(games.iterdir()), list(games.iterdir())
    assert "No space left on device" in captured.err and str(games) in captured.err
    assert '[White "You"]' in captured.out and '[Event "Knights and Kernels: terminal game"]' in captured.out
    assert "1. e4" in captured.out
