"""The web page in a real browser: Debian's headless Chromium, driven by Playwright.

The real server (knights.web.server.start) runs on a free loopback port in a thread;
each test clicks and drags pieces on the page as a person would (the mouse on the
board's squares), then checks what the page shows against python-chess. Screenshots
go to the test's ``tmp_path``. ``make browser`` installs what this needs (Chromium
from Debian, the board library from npm); without it these tests skip, except under
``CI=true``, where a missing browser fails them.

The README's screenshot, docs/web.png, is made by the last test:
``KNIGHTS_WRITE_SCREENSHOT=1 .venv/bin/python -m pytest tests/test_web_browser.py -k readme``.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

from knights.evaluate.names import DEFAULT_EVALUATOR, available_evaluators
from knights.web.app import board_library_missing

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("KNIGHTS_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
README_SHOT = ROOT / "docs" / "web.png"
MAX_SHOT_BYTES = 150_000
VIEWPORT = {"width": 1080, "height": 760}
WAIT_MS = 30_000

pytestmark = pytest.mark.slow


def _what_is_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed (the venv's `test` extra)"
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"Chromium is not installed at {CHROMIUM}"
    return board_library_missing()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    missing = _what_is_missing()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}; under CI=true the browser tests must run ('make browser' installs it)")
        pytest.skip(f"{missing}: run 'make browser' (as root it installs Chromium and the board library)")
    from knights.web.server import start, url_of

    httpd, thread = start("127.0.0.1", 0)
    yield url_of(httpd)
    httpd.shutdown()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(server: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    yield ctx
    ctx.close()


def open_page(context: Any, url: str) -> Any:
    """A new tab on the page, with the page's own errors collected in ``page.errors``."""
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(url)
    wait_for_your_turn(page)
    return page


@pytest.fixture
def page(context: Any, server: str) -> Iterator[Any]:
    tab = open_page(context, server)
    yield tab
    assert not tab.errors, f"the page raised: {tab.errors}"


# -- what a person does ---------------------------------------------------------------------
def square_center(page: Any, square: str) -> tuple[float, float]:
    box = page.locator(f"#board rect[data-square='{square}']").bounding_box()
    assert box is not None, f"no square {square} on the board"
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def click(page: Any, square: str) -> None:
    page.mouse.click(*square_center(page, square))


def click_move(page: Any, source: str, target: str) -> None:
    click(page, source)
    click(page, target)


def drag_move(page: Any, source: str, target: str) -> None:
    page.mouse.move(*square_center(page, source))
    page.mouse.down()
    page.mouse.move(*square_center(page, target), steps=8)
    page.mouse.up()


def phase(page: Any) -> str:
    return str(page.locator("#status").get_attribute("data-phase"))


def wait_for_your_turn(page: Any, previous_fen: str | None = None) -> None:
    """Wait until the page waits for the person (or the game is over), on a new position
    when ``previous_fen`` is given."""
    page.wait_for_function(
        """fen => {
            const phase = document.getElementById("status").dataset.phase
            return (phase === "your-move" || phase === "over") && document.getElementById("fen").value !== fen
        }""", arg=previous_fen or "", timeout=WAIT_MS)


def game_id(page: Any) -> str:
    return str(page.evaluate("sessionStorage.getItem('knights-game-id')"))


def start_game(page: Any, *, color: str = "white", evaluator: str = "material", stochastic: bool = False) -> None:
    """Choose the settings in the form and press New game."""
    before = game_id(page)
    page.select_option("#color", color)
    page.select_option("#evaluator", evaluator)
    page.set_checked("#stochastic", stochastic)
    page.click("#new")
    page.wait_for_function("id => sessionStorage.getItem('knights-game-id') !== id", arg=before, timeout=WAIT_MS)
    wait_for_your_turn(page)


def shown_game(page: Any) -> tuple[chess.Board, list[str]]:
    """The game the move list shows, replayed with python-chess (an illegal move fails),
    and its SAN moves."""
    sans = " ".join(page.locator("#moves li").all_inner_texts()).split()
    board = chess.Board()
    for san in sans:
        board.push_san(san)
    return board, sans


def served_state(url: str, page: Any) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}api/games/{game_id(page)}", timeout=10) as response:
        state: dict[str, Any] = json.load(response)
        return state


def piece_on(page: Any, square: str) -> str | None:
    found = page.locator(f"#board g[data-square='{square}'][data-piece]")
    return found.first.get_attribute("data-piece") if found.count() else None


def check_what_the_bot_saw(page: Any, board: chess.Board) -> None:
    """The list has a row for every legal move of the position before the bot's move,
    the played one marked; three arrows show its top three."""
    before = board.copy()
    played = before.pop()
    rows = page.locator("#saw tbody tr")
    listed = [rows.nth(i).get_attribute("data-uci") for i in range(rows.count())]
    assert sorted(listed) == sorted(m.uci() for m in before.legal_moves)
    assert page.locator("#saw tbody tr.played").get_attribute("data-uci") == played.uci()
    assert page.locator("#board .arrows .arrow").count() == min(3, len(listed))
    assert re.fullmatch("[+\u2212]([0-9]+[.][0-9]|M)", page.locator("#evalbar-text").inner_text().strip())


# -- the tests --------------------------------------------------------------------------------
def test_a_short_game_by_clicking_and_dragging(page: Any, tmp_path: Path) -> None:
    start_game(page)
    page.screenshot(path=tmp_path / "start.png")
    click(page, "e2")                                  # picked up: the legal squares are hinted
    hints = page.locator("#board .markers g[data-square] .marker-dot")
    assert sorted(hints.nth(i).locator("xpath=..").get_attribute("data-square") for i in range(hints.count())) \
        == ["e3", "e4"]
    page.screenshot(path=tmp_path / "hints.png")
    fen = page.input_value("#fen")
    click(page, "e4")
    wait_for_your_turn(page, fen)
    board, sans = shown_game(page)
    assert sans[0] == "e4" and len(sans) == 2          # the bot answered with a legal move
    assert page.input_value("#fen") == board.fen()
    check_what_the_bot_saw(page, board)
    page.screenshot(path=tmp_path / "after-e4.png")

    fen = page.input_value("#fen")
    drag_move(page, "g1", "f3")
    wait_for_your_turn(page, fen)
    board, sans = shown_game(page)
    assert sans[2] == "Nf3" and len(sans) == 4
    assert page.input_value("#fen") == board.fen() and piece_on(page, "f3") == "wn"
    check_what_the_bot_saw(page, board)
    page.screenshot(path=tmp_path / "after-nf3.png")


def test_an_illegal_click_or_drag_is_refused(page: Any, server: str, tmp_path: Path) -> None:
    start_game(page)
    fen = page.input_value("#fen")
    click_move(page, "e2", "e5")
    assert phase(page) == "illegal" and "Illegal move e2-e5" in page.inner_text("#status")
    assert piece_on(page, "e2") == "wp" and piece_on(page, "e5") is None
    page.screenshot(path=tmp_path / "illegal-click.png")
    drag_move(page, "g1", "g3")
    assert phase(page) == "illegal" and "Illegal move g1-g3" in page.inner_text("#status")
    assert piece_on(page, "g1") == "wn" and piece_on(page, "g3") is None
    click(page, "a1")                                   # a rook with no move
    assert phase(page) == "illegal" and "no legal move" in page.inner_text("#status")
    page.screenshot(path=tmp_path / "illegal-drag.png")
    assert page.input_value("#fen") == fen
    assert served_state(server, page)["moves"] == []    # nothing reached the game


def test_the_pgn_downloads_and_parses(page: Any, tmp_path: Path) -> None:
    start_game(page)
    for source, target in (("d2", "d4"), ("c2", "c4")):
        fen = page.input_value("#fen")
        click_move(page, source, target)
        wait_for_your_turn(page, fen)
    board, _ = shown_game(page)
    with page.expect_download() as download:
        page.click("#pgn")
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    assert path.suffix == ".pgn"
    game = chess.pgn.read_game(io.StringIO(path.read_text()))
    assert game is not None and not game.errors
    assert list(game.mainline_moves()) == board.move_stack
    assert game.headers["White"] == "You" and game.headers["Result"] == "*"


def test_tabs_keep_their_own_games(context: Any, server: str, tmp_path: Path) -> None:
    one, two = open_page(context, server), open_page(context, server)
    for tab, (source, target) in ((one, ("e2", "e4")), (two, ("d2", "d4"))):
        start_game(tab)
        fen = tab.input_value("#fen")
        click_move(tab, source, target)
        wait_for_your_turn(tab, fen)
    assert game_id(one) != game_id(two)
    for tab, first in ((one, "e4"), (two, "d4")):
        tab.reload()
        wait_for_your_turn(tab)
        board, sans = shown_game(tab)
        assert sans[0] == first and len(sans) == 2 and tab.input_value("#fen") == board.fen()
    two.screenshot(path=tmp_path / "second-tab.png")
    assert not one.errors and not two.errors


def test_as_black_with_flip_undo_and_resign(page: Any, tmp_path: Path) -> None:
    start_game(page, color="black")
    board, sans = shown_game(page)
    assert len(sans) == 1                               # the bot opened
    check_what_the_bot_saw(page, board)
    assert square_center(page, "a8")[1] > square_center(page, "a1")[1]   # Black at the bottom
    page.click("#flip")
    page.wait_for_function("() => !document.getElementById('evalbar').classList.contains('flipped')")
    assert square_center(page, "a8")[1] < square_center(page, "a1")[1]
    page.click("#flip")
    page.wait_for_function("() => document.getElementById('evalbar').classList.contains('flipped')")
    after_open = page.input_value("#fen")
    source, target = ("e7", "e5") if chess.Move.from_uci("e7e5") in board.legal_moves else ("g8", "f6")
    click_move(page, source, target)
    wait_for_your_turn(page, after_open)
    assert len(shown_game(page)[1]) == 3
    fen = page.input_value("#fen")
    page.click("#undo")
    wait_for_your_turn(page, fen)
    assert page.input_value("#fen") == after_open and len(shown_game(page)[1]) == 1
    assert page.locator("#undo").is_disabled()
    page.click("#resign")
    page.wait_for_function("() => document.getElementById('status').dataset.phase === 'over'", timeout=WAIT_MS)
    assert "black resigns" in page.inner_text("#status") and "White wins (1-0)" in page.inner_text("#status")
    page.screenshot(path=tmp_path / "resigned.png")


def test_readme_screenshot(page: Any, tmp_path: Path) -> None:
    """The README's picture: a few moves against the default bot, its view on the right.
    Written to docs/web.png when KNIGHTS_WRITE_SCREENSHOT is set; kept small either way."""
    from PIL import Image

    evaluator = DEFAULT_EVALUATOR if DEFAULT_EVALUATOR in available_evaluators() else "material"
    start_game(page, evaluator=evaluator)
    for source, target in (("e2", "e4"), ("g1", "f3"), ("f1", "c4")):
        fen = page.input_value("#fen")
        if page.locator(f"#board g[data-square='{source}'][data-piece]").count() == 0:
            break
        click_move(page, source, target)
        if phase(page) == "illegal":
            break
        wait_for_your_turn(page, fen)
    page.mouse.move(0, 0)
    raw = tmp_path / "page.png"
    page.screenshot(path=raw)
    small = tmp_path / "web.png"
    Image.open(raw).convert("RGB").quantize(colors=96).save(small, optimize=True)
    assert small.stat().st_size < MAX_SHOT_BYTES
    if os.environ.get("KNIGHTS_WRITE_SCREENSHOT"):
        README_SHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(small, README_SHOT)
    assert README_SHOT.is_file() and README_SHOT.stat().st_size < MAX_SHOT_BYTES, \
        "docs/web.png is missing or too big: KNIGHTS_WRITE_SCREENSHOT=1 pytest tests/test_web_browser.py -k readme"
