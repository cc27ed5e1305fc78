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
``POST /api/games/<id>/undo``               take back your last move and the reply
``POST /api/games/<id>/resign``             you resign
``GET  /api/games/<id>/pgn``                the game as a PGN download
==========================================  ============================================

Every refusal is JSON ``{"error": "one clear line"}`` with a 4xx status: 400 for a
malformed request, 404 for an unknown game, 409 for a move out of turn or after
the end, 415 for a body that is not JSON, 422 for an illegal move. Bodies are JSON
objects sent as ``application/json`` (which a page on another site cannot send
here without asking first).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from flask import Flask, Response, abort, jsonify, request, send_from_directory
from werkzeug.exceptions import HTTPException

from knights.play.user_input import EngineError
from knights.web.engines import page_options
from knights.web.errors import RequestError
from knights.web.games import NEW_GAME_FIELDS, Game, GameStore

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
FRONTEND = HERE / "frontend"
BOARD_LIBRARY = FRONTEND / "node_modules" / "cm-chessboard"
BOARD_LIBRARY_PARTS = ("src/", "assets/")
INSTALL_HINT = "run 'make web', or 'npm ci --prefix knights/web/frontend'"
MAX_BODY = 16 * 1024
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")

log = logging.getLogger(__name__)


def board_library_missing() -> str | None:
    """Why the page cannot show a board (the npm package is not installed), or ``None``."""
    if (BOARD_LIBRARY / "src" / "Chessboard.js").is_file():
        return None
    return f"the board library cm-chessboard is not installed in {BOARD_LIBRARY.parent}: {INSTALL_HINT}"


def _body(allowed: tuple[str, ...]) -> dict[str, Any]:
    """The request's JSON object (``{}`` for an empty body), with only ``allowed`` keys."""
    if not request.get_data(cache=True):
        return {}
    if not request.is_json:
        raise RequestError("send the body as JSON (Content-Type: application/json)", 415)
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise RequestError("the body must be a JSON object, such as {\"move\": \"e2e4\"}")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise RequestError(f"unknown field(s) {', '.join(map(repr, unknown))}; this request takes "
                           f"{', '.join(allowed) or 'no fields'}")
    return data


def create_app(store: GameStore | None = None, *, trusted_hosts: list[str] | None = None) -> Flask:
    """The web app over ``store`` (a new :class:`~knights.web.games.GameStore` by default).
    ``trusted_hosts``: the Host names it answers (``None``: any), which keeps a page on
    another site from reaching a loopback server through a name of its own."""
    app = Flask(__name__, static_folder=str(STATIC), static_url_path="/static")
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
        return answer(games.new_game(_body(NEW_GAME_FIELDS)), 201)

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
            game.play_bot()
            return answer(game)

    @app.post("/api/games/<game_id>/undo")
    def undo(game_id: str) -> tuple[Response, int]:
        _body(())
        game = games.get(game_id)
        with game.lock:
            game.undo()
            return answer(game)

    @app.post("/api/games/<game_id>/resign")
    def resign(game_id: str) -> tuple[Response, int]:
        _body(())
        game = games.get(game_id)
        with game.lock:
            game.resign()
            return answer(game)

    @app.get("/api/games/<game_id>/pgn")
    def pgn(game_id: str) -> Response:
        game = games.get(game_id)
        with game.lock:
            text = game.pgn()
        return Response(text, mimetype="application/x-chess-pgn", headers={
            "Content-Disposition": f"attachment; filename=knights-{game.id}.pgn"})

    return app
