"""``knights play`` at the edges (issues 25 and 51): bad ``--movetime``/``--depth``, a full disk, a
closed terminal and the signals that end a game."""

from __future__ import annotations

import errno
import io
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import chess
import chess.pgn
import pytest

from knights import cli
from knights.frontends import terminal

REPO = Path(__file__).resolve().parent.parent


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


# -- issue 51: the game is saved however the terminal goes, and a signal ends the process promptly ---------------
def _read_until(fd: int, marker: bytes, count: int, seen: bytes = b"", timeout: float = 120) -> bytes:
    """Output of ``fd`` until ``marker`` has come ``count`` times in all."""
    deadline = time.monotonic() + timeout
    while seen.count(marker) < count:
        assert time.monotonic() < deadline, seen.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, seen.decode(errors="replace")
            seen += chunk
    return seen


def _check_saved(folder: Path) -> None:
    files = list(folder.glob("*.pgn"))
    assert len(files) == 1, files
    with open(files[0], encoding="utf-8") as fh:
        game = chess.pgn.read_game(fh)
    assert game is not None and game.headers["Result"] == "*"
    moves = list(game.mainline_moves())
    assert len(moves) == 2 and moves[0] == chess.Move.from_uci("e2e4")


PLAY = [sys.executable, "-m", "knights.cli", "play", "--evaluator", "material", "--seed", "3", "--ascii"]


# one real process a signal; both go through the same handler, SIGHUP in make test's clock part
@pytest.mark.clock
@pytest.mark.parametrize("signame", [pytest.param("SIGHUP", marks=pytest.mark.slow), "SIGTERM"])
def test_closing_the_terminal_saves_the_game(tmp_path, signame):
    """A real ``knights play`` process is sent SIGHUP (terminal closed) or SIGTERM while it
    waits for a move: the game so far is in ``--games-dir`` and the exit code is 128 + the signal.
    It used to end only after the interpreter's teardown of torch and numba, seconds on a busy
    machine (the SIGTERM'd process once did not end within 60 s beside notebooks and training);
    its input is read with ``select()`` and a signal wake-up, so a signal the kernel hands to
    another thread wakes it too."""
    signum = getattr(signal, signame)
    folder = tmp_path / "games"
    proc = subprocess.Popen([*PLAY, "--games-dir", str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        seen = _read_until(proc.stdout.fileno(), b"Your move", 1)
        proc.stdin.write(b"e4\n")
        proc.stdin.flush()
        _read_until(proc.stdout.fileno(), b"Your move", 2, seen)   # the bot has replied; we wait for move 2
        os.kill(proc.pid, signum)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 128 + signum, proc.stderr.read() if proc.stderr else code
    _check_saved(folder)


@pytest.mark.parametrize("controlling", [True, False], ids=["its terminal", "a terminal"])
def test_a_closed_terminal_saves_the_game(tmp_path, controlling):
    """``knights play`` in tmux, ``e4``, then ``tmux kill-session``: no PGN. Reading the closed
    terminal raised ``OSError: [Errno 5] Input/output error``, which the game loop did not catch,
    so the game was never saved; the hang-up then came as an uncaught ``Hangup``. Here the master
    side of a pseudo-terminal is closed while the game waits for move 2: as the process's own
    terminal (the hang-up and the failing read both come, in either order) and as a terminal it
    only reads (the failing read, or an end of input once the kernel has hung it up). The game is
    saved, whichever comes first, and the process ends without a traceback."""
    folder = tmp_path / "games"
    master, slave = os.openpty()
    command = [*PLAY, "--games-dir", str(folder)]
    if controlling:          # in a new session, the pseudo-terminal becomes the process's terminal, then it plays
        command = [sys.executable, "-c", "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
                   "os.execv(sys.argv[1], sys.argv[1:])", *command]
    proc = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=subprocess.PIPE, cwd=REPO,
                            start_new_session=True)
    os.close(slave)
    try:
        seen = _read_until(master, b"Your move", 1)
        assert seen.startswith(b"Knights and Kernels: loading the bot...")   # at a terminal, never a silent start
        os.write(master, b"e4\n")
        _read_until(master, b"Your move", 2, seen)
        os.close(master)
        master = -1
        code = proc.wait(timeout=60)
    finally:
        if master >= 0:
            os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert "Traceback" not in err, err
    assert code in (0, 128 + signal.SIGHUP, -signal.SIGHUP), (code, err)
    _check_saved(folder)
