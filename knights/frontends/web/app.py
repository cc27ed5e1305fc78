"""The Flask app: the page, the board library's files, and a small JSON API.

==========================================  ============================================
``GET  /``                                  the page (``static/index.html``)
``GET  /static/<file>``                     the page's own glue (HTML, CSS, JS)
``GET  /vendor/cm-chessboard/<file>``       the board library, from ``frontend/node_modules``
``GET  /api/options``                       evaluators, default, search depths
``POST /api/games``                         new game: color, evaluator, stochastic, seed,
                                            depth, movetime (201 and its state)
``GET  /api/games/<id>``                    the game's state
``POST /api/games/<id>/move``               ``{"move": "e2e4"}``: your move, then the bot's
``POST /api/games/<id>/bot``                the bot's move, when it is still to move (its
                                            search was cut short: a restart, a lost page)
``POST /api/games/<id>/undo``               take back your last move and the reply
``POST /api/games/<id>/resign``             you resign
``GET  /api/games/<id>/pgn``                the game as a PGN download
==========================================  ============================================

Every refusal is JSON ``{"error": "one clear line"}`` with a 4xx status: 400 for a
malformed request, 404 for an unknown game, 409 for a move out of turn or after
the end, 415 for a body that is not JSON, 422 for an illegal move; and 503 when the
games database cannot be written (a full or failing disk): the change is not made, and
reading the games goes on. Bodies are JSON
objects sent as ``application/json`` (which a page on another site cannot send
here without asking first), nested at most :data:`MAX_NESTING` deep.

Every change is written to the games database before the answer (the person's move
before the bot thinks, then the bot's), so a restarted server goes on with the game.
While the bot thinks, the server watches the request's connection: when the page has
gone, the search stops and its move is not played (the page asks ``/bot`` when back).
"""

from __future__ import annotations

import json
import logging
import select
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask, Response, abort, jsonify, request, send_from_directory
from werkzeug.exceptions import HTTPException

from knights.engine.user_input import EngineError
from knights.frontends.web.engines import page_options
from knights.frontends.web.errors import RequestError
from knights.frontends.web.games import BOT_MOVE_LOST, NEW_GAME_FIELDS, Game, GameStore
from knights.frontends.web.storage import StorageUnavailable

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
FRONTEND = HERE / "frontend"
BOARD_LIBRARY = FRONTEND / "node_modules" / "cm-chessboard"
BOARD_LIBRARY_PARTS = ("src/", "assets/")
INSTALL_HINT = "run 'make web', or 'npm ci --prefix knights/frontends/web/frontend'"
MAX_BODY = 16 * 1024
MAX_NESTING = 32
"""The deepest a request body's JSON may nest (the API's bodies are flat objects)."""
LOOK_EVERY = 0.05
"""Seconds between two looks at whether a thinking bot's page is still connected."""
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")

log = logging.getLogger(__name__)


def board_library_missing() -> str | None:
    """Why the page cannot show a board (the npm package is not installed), or ``None``."""
    if (BOARD_LIBRARY / "src" / "Chessboard.js").is_file():
        return None
    return f"the board library cm-chessboard is not installed in {BOARD_LIBRARY.parent}: {INSTALL_HINT}"


def _nesting(text: str) -> int:
    """How deep brackets nest in JSON ``text`` (outside strings), without parsing it."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _body(allowed: tuple[str, ...]) -> dict[str, Any]:
    """The request's JSON object (``{}`` for an empty body), with only ``allowed`` keys."""
    raw = request.get_data(cache=True)
    if not raw:
        return {}
    if not request.is_json:
        raise RequestError("send the body as JSON (Content-Type: application/json)", 415)
    example = "the body must be a JSON object, such as {\"move\": \"e2e4\"}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RequestError(f"the body is not UTF-8 text: {example}") from None
    if _nesting(text) > MAX_NESTING:
        raise RequestError(f"the body nests deeper than {MAX_NESTING} levels: {example}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise RequestError(f"the body is not valid JSON: {example}") from None
    if not isinstance(data, dict):
        raise RequestError(example)
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise RequestError(f"unknown field(s) {', '.join(map(repr, unknown))}; this request takes "
                           f"{', '.join(allowed) or 'no fields'}")
    return data


def client_gone(environ: dict[str, Any]) -> Callable[[], bool]:
    """Whether the request's client has closed its connection, asked at most every
    :data:`LOOK_EVERY` seconds (``False`` when the server gives no socket, as Flask's test
    client). A browser sends nothing more on a connection whose answer it awaits, so a
    readable socket with nothing to read is a closed one."""
    sock = environ.get("werkzeug.socket")
    if not isinstance(sock, socket.socket):
        return lambda: False
    seen = {"at": 0.0, "gone": False}

    def gone() -> bool:
        now = time.monotonic()
        if seen["gone"] or now - seen["at"] < LOOK_EVERY:
            return bool(seen["gone"])
        seen["at"] = now
        try:
            readable, _, _ = select.select([sock], [], [], 0)
            seen["gone"] = bool(readable) and not sock.recv(1, socket.MSG_PEEK)
        except (OSError, ValueError):
            seen["gone"] = True
        return bool(seen["gone"])

    return gone


def create_app(store: GameStore | None = None, *, trusted_hosts: list[str] | None = None) -> Flask:
    """The web app over ``store`` (a new :class:`~knights.frontends.web.games.GameStore` by default,
    in memory; ``knights serve`` gives one over its database file).
    ``trusted_hosts``: the Host names it answers (``None``: any), which keeps a page on
    another site from reaching a loopback server through a name of its own."""
    app = Flask(__name__, static_folder=str(STATIC), static_url_path="/static")
    # "/api/games//pgn" (an empty or blank game id) is a JSON 404, not a redirect to "/api/games/pgn"
    app.url_map.merge_slashes = False
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    if trusted_hosts is not None:
        app.config["TRUSTED_HOSTS"] = trusted_hosts
    games = store if store is not None else GameStore()
    app.extensions["knights_games"] = games

    def answer(game: Game, status: int = 200) -> tuple[Response, int]:
        return jsonify(game.state()), status

    @app.errorhandler(RequestError)
    def refused(exc: RequestError) -> tuple[Response, int]:
        return jsonify(error=str(exc)), exc.status

    @app.errorhandler(EngineError)
    def engine_refused(exc: EngineError) -> tuple[Response, int]:
        return jsonify(error=str(exc)), 422

    @app.errorhandler(StorageUnavailable)
    def unsaved(exc: StorageUnavailable) -> tuple[Response, int]:
        log.warning("%s %s: %s", request.method, request.path, exc)    # one line: the disk's trouble, not a bug
        return jsonify(error=str(exc)), 503

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> tuple[Response, int]:
        status = exc.code or 500
        return jsonify(error=f"{exc.name}: {exc.description}"), status

    @app.errorhandler(Exception)
    def failed(exc: Exception) -> tuple[Response, int]:
        log.exception("request failed: %s %s", request.method, request.path)
        return jsonify(error=f"the server failed on this request ({type(exc).__name__}: {exc})"), 500

    @app.get("/")
    def page() -> Response | tuple[Response, int]:
        missing = board_library_missing()
        if missing is not None:
            return jsonify(error=missing), 503
        return send_from_directory(STATIC, "index.html")

    @app.get("/vendor/cm-chessboard/<path:filename>")
    def board_library(filename: str) -> Response:
        if not filename.startswith(BOARD_LIBRARY_PARTS):
            abort(404)
        return send_from_directory(BOARD_LIBRARY, filename)

    @app.get("/api/options")
    def options() -> Response:
        return jsonify(page_options())

    @app.post("/api/games")
    def new_game() -> tuple[Response, int]:
        fields = _body(NEW_GAME_FIELDS)
        return answer(games.new_game(fields, client_gone(request.environ)), 201)

    @app.get("/api/games/<game_id>")
    def show(game_id: str) -> tuple[Response, int]:
        game = games.get(game_id)
        with game.lock:
            return answer(game)

    @app.post("/api/games/<game_id>/move")
    def move(game_id: str) -> tuple[Response, int]:
        data = _body(("move",))
        if "move" not in data:
            raise RequestError("say which move: {\"move\": \"e2e4\"}")
        game = games.get(game_id)
        with game.lock:
            game.play_human(data["move"])
            games.save(game, "your move was not played")
            if game.play_bot(client_gone(request.environ)):
                games.save(game, f"your move was saved, but {BOT_MOVE_LOST}")
            return answer(game)

    @app.post("/api/games/<game_id>/bot")
    def bot(game_id: str) -> tuple[Response, int]:
        _body(())
        game = games.get(game_id)
        with game.lock:
            if game.play_bot(client_gone(request.environ)):
                games.save(game, BOT_MOVE_LOST)
            return answer(game)

    def change(game_id: str, act: Callable[[Game], object], lost: str) -> tuple[Response, int]:
        """``act`` on the game under its lock, written to the database before the answer."""
        _body(())
        game = games.get(game_id)
        with game.lock:
            act(game)
            games.save(game, lost)
            return answer(game)

    @app.post("/api/games/<game_id>/undo")
    def undo(game_id: str) -> tuple[Response, int]:
        return change(game_id, Game.undo, "nothing was taken back")

    @app.post("/api/games/<game_id>/resign")
    def resign(game_id: str) -> tuple[Response, int]:
        return change(game_id, Game.resign, "you have not resigned")

    @app.get("/api/games/<game_id>/pgn")
    def pgn(game_id: str) -> Response:
        game = games.get(game_id)
        with game.lock:
            text = game.pgn()
        return Response(text, mimetype="application/x-chess-pgn", headers={
            "Content-Disposition": f"attachment; filename=knights-{game.id}.pgn"})

    return app
