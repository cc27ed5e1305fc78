"""``knights soak`` (knights.lab.arena.soak): clocks parsed, bad input refused, and real games on
a real clock through ``knights uci`` (and lichess-bot's homemade route when a lichess-bot
checkout is named by ``LICHESS_BOT_DIR``), tallied into the results file."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import chess
import pytest

from knights.cli import build_parser
from knights.lab.arena import soak


def test_clocks_are_base_plus_increment_in_seconds():
    assert soak.parse_clock("3+0") == (3.0, 0.0)
    assert soak.parse_clock("9+0.1") == (9.0, 0.1)
    assert soak.parse_clock("5") == (5.0, 0.0)
    assert soak.clock_name(9.0, 0.1) == "9s+0.1s"
    for bad in ("", "fast", "0+0", "-1+0", "3+-1", "nan+0", "3+x", "9999+0"):
        with pytest.raises(ValueError, match="clock"):
            soak.parse_clock(bad)


def _run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


def test_bad_requests_are_refused_before_any_game(tmp_path, monkeypatch):
    monkeypatch.delenv("LICHESS_BOT_DIR", raising=False)
    out = ["--out", str(tmp_path / "games"), "--results", str(tmp_path / "soak.json")]
    with pytest.raises(ValueError, match="unknown route"):
        _run(["soak", "--routes", "xboard", *out])
    with pytest.raises(ValueError, match="--games"):
        _run(["soak", "--games", "0", *out])
    with pytest.raises(ValueError, match="lichess-bot checkout"):
        _run(["soak", "--routes", "homemade", "--games", "1", *out])
    with pytest.raises(FileNotFoundError, match="not a lichess-bot checkout"):
        _run(["soak", "--routes", "homemade", "--games", "1", "--lichess-bot", str(tmp_path), *out])
    assert not (tmp_path / "soak.json").exists()


def _check_game(row: dict, max_plies: int) -> None:
    assert row["games"] == 1 and row["illegal"] == 0 and row["errors"] == 0 and row["time_losses"] == 0, row
    assert row["nan_scores"] == 0 and row["wins"] + row["draws"] + row["losses"] == 1
    board = chess.Board()
    for move in row["line"].split():       # the recorded game replays legally
        board.push_uci(move)
    assert len(board.move_stack) == row["plies"] <= max_plies
    assert row["moves"] >= 1 and row["least_left_ms"] > 0


@pytest.mark.slow
@pytest.mark.clock
def test_a_uci_game_on_a_real_clock_is_clean_and_tallied(tmp_path):
    """Two short games through ``knights uci`` on a 20 s + 0.2 s clock (the second resumes
    the log), then the results file from the log."""
    route = soak.UciRoute(seed=5)
    opponent = soak.start_opponent()
    log = soak.log_path(tmp_path, "uci", 20.0, 0.2)
    try:
        route.start()
        for index in range(2):
            row = soak.play_one(route, opponent, 20.0, 0.2, index, max_plies=30)
            _check_game(row, 30)
            assert row["ours"] == ("white" if index == 0 else "black")
            log.write_text(log.read_text() + json.dumps(row) + "\n" if log.exists() else json.dumps(row) + "\n")
    finally:
        route.close()
        opponent.quit()
    doc = soak.summarise(tmp_path, ["uci"], [(20.0, 0.2)], "test")
    assert doc["totals"]["games"] == 2 and doc["totals"]["time_losses"] == 0
    (row,) = doc["rows"]
    assert row["route"] == "uci" and row["clock"] == "20s+0.2s" and row["moves"] >= 2


MODULE_NAMES = {"pyyaml": "yaml"}
"""The module a lichess-bot requirement is imported as, where the two names differ."""


def lichess_bot_packages(checkout: Path) -> Path | None:
    """The site-packages of the venv lichess_bot/README.md has one make in the checkout (``venv/``, or
    ``.venv/``), when it is for this Python: lichess-bot's requirements are installed there, not here."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for venv in ("venv", ".venv"):
        site = checkout / venv / "lib" / version / "site-packages"
        if site.is_dir():
            return site
    return None


def missing_requirements(checkout: Path) -> list[str]:
    """The lines of the checkout's ``requirements.txt`` whose module cannot be imported here."""
    import importlib.util
    import re

    missing = []
    for line in (checkout / "requirements.txt").read_text().splitlines():
        name = re.match(r"\s*([A-Za-z0-9_.-]+)", line.split("#")[0])
        if name and importlib.util.find_spec(MODULE_NAMES.get(name[1].lower(), name[1].lower())) is None:
            missing.append(line.strip())
    return missing


@pytest.mark.slow
@pytest.mark.clock
@pytest.mark.skipif(not os.environ.get("LICHESS_BOT_DIR"), reason="LICHESS_BOT_DIR (a lichess-bot checkout) not set")
def test_a_homemade_game_through_lichess_bots_own_code(tmp_path, monkeypatch):
    """lichess-bot's requirements live in its own venv (lichess_bot/README.md), so the test failed with
    ``No module named 'backoff'`` for anyone who set it up that way: they are taken from there (after
    this venv's own packages, which stay first), or the test is skipped naming the command that
    installs what is missing here."""
    checkout = Path(os.environ["LICHESS_BOT_DIR"]).resolve()
    site = lichess_bot_packages(checkout)
    if site is not None:
        monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    missing = missing_requirements(checkout)
    if missing:
        looked = f"nor in {site}" if site else f"and {checkout} has no venv for Python {sys.version.split()[0]}"
        pytest.skip(f"lichess-bot's requirements {', '.join(missing)} are not importable here, {looked}: "
                    f"{sys.executable} -m pip install {' '.join(repr(line) for line in missing)}")
    soak._install(checkout)
    route = soak.HomemadeRoute(7, checkout, None)
    opponent = soak.start_opponent()
    try:
        route.start()
        _check_game(soak.play_one(route, opponent, 20.0, 0.2, 0, max_plies=30), 30)
        # a clock too short for a decision: the static quick move, still legal, still in time
        board = chess.Board()
        move, info = route.move(board, {chess.WHITE: 0.002, chess.BLACK: 10.0}, 0.0)
        assert move in board.legal_moves and info["depth"] == 0
    finally:
        route.close()
        opponent.quit()


def test_the_homemade_route_finds_the_repositorys_lichess_bot_folder():
    # without a lichess-bot checkout the homemade games skip, so this is what catches a wrong root: after the module
    # moved under knights/lab/arena/ it looked for knights/lichess_bot/install.py, and the route could not start
    assert (soak.LICHESS_BOT / "install.py").is_file()
    assert (soak.LICHESS_BOT / "config.yml").is_file()
    assert (soak.LICHESS_BOT.parent / "pyproject.toml").is_file()
