"""The web app's JSON API (knights.frontends.web), through Flask's test client and one real server.

The bot plays with the material evaluator, deterministically, so each answer is quick
and the same every run; the rules are python-chess's, checked here independently.
"""

from __future__ import annotations

import io
import json
import logging
import socket
import sqlite3
import time
import urllib.error
import urllib.request

import chess
import chess.pgn
import pytest

from knights.cli import build_parser
from knights.engine.search import SearchLimits
from knights.engine.spec import SEARCH_NETWORK
from knights.frontends.web import engines
from knights.frontends.web.app import board_library_missing, create_app
from knights.frontends.web.engines import EngineSettings, engine_for
from knights.frontends.web.errors import RequestError
from knights.frontends.web.games import GameStore, what_the_bot_saw
from knights.frontends.web.server import build_server, start, url_of
from knights.frontends.web.storage import DEFAULT_DB, MAX_SEEN, GameDatabase, StorageError

FAST = {"evaluator": "material", "stochastic": False, "depth": 1}


@pytest.fixture
def store():
    return GameStore()


@pytest.fixture
def client(store):
    return create_app(store, trusted_hosts=["localhost", "127.0.0.1"]).test_client()


def new_game(client, **fields):
    response = client.post("/api/games", json={**FAST, **fields})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def move(client, game_id, uci):
    return client.post(f"/api/games/{game_id}/move", json={"move": uci})


def replay(moves):
    board = chess.Board()
    for uci in moves:
        move = chess.Move.from_uci(uci)
        assert move in board.legal_moves, f"{uci} is not legal in {board.fen()}"
        board.push(move)
    return board


# -- a game ----------------------------------------------------------------------------------
def test_a_new_game_starts_from_the_start_position_with_every_legal_move(client):
    state = new_game(client)
    assert state["fen"] == chess.STARTING_FEN
    assert state["human"] == "white" and state["turn"] == "white" and not state["over"]
    assert sorted(state["legal"]) == sorted(m.uci() for m in chess.Board().legal_moves)
    assert state["saw"] is None and state["moves"] == [] and state["result"] == "*"
    assert state["settings"] == {"evaluator": "material", "stochastic": False, "seed": None, "depth": 1,
                                 "movetime": None}


def test_a_legal_move_is_answered_by_a_legal_bot_move_and_the_bot_saw_every_legal_move(client):
    game = new_game(client)
    response = move(client, game["id"], "e2e4")
    assert response.status_code == 200
    state = response.get_json()
    assert len(state["moves"]) == 2 and state["moves"][0] == "e2e4"
    board = replay(state["moves"])                      # the bot's reply is legal
    assert state["fen"] == board.fen() and state["turn"] == "white"
    before = replay(state["moves"][:1])
    assert state["san"] == ["e4", before.san(board.peek())]
    saw = state["saw"]
    assert saw["fen"] == before.fen() and saw["uci"] == state["moves"][1]
    assert sorted(c["uci"] for c in saw["candidates"]) == sorted(m.uci() for m in before.legal_moves)
    scores = [c["score"] for c in saw["candidates"]]
    assert scores == sorted(scores)                     # best first for Black: lowest (White's view) first
    assert saw["candidates"][saw["rank"]]["uci"] == saw["uci"] and saw["rank"] == 0   # deterministic: the best
    assert sorted(state["legal"]) == sorted(m.uci() for m in board.legal_moves)


def test_the_bot_takes_a_rook_left_hanging(client, store):
    game = new_game(client)
    store.get(game["id"]).board = chess.Board("4k3/8/q7/8/8/8/8/4K2R w K - 0 1")
    state = move(client, game["id"], "h1h6").get_json()     # the rook steps next to the queen's rank
    assert state["moves"] == ["h1h6", "a6h6"]
    saw = state["saw"]
    assert saw["uci"] == "a6h6" and saw["score"] == min(c["score"] for c in saw["candidates"]) < -4


def test_an_illegal_move_is_refused_with_422_and_changes_nothing(client):
    game = new_game(client)
    for bad in ("e2e5", "e7e5", "0000", "Ke2", "a1a1"):
        response = move(client, game["id"], bad)
        assert response.status_code == 422, bad
        assert "illegal move" in response.get_json()["error"]
    assert client.get(f"/api/games/{game['id']}").get_json()["moves"] == []


def test_a_promotion_needs_its_piece(client, store):
    game = new_game(client)
    store.get(game["id"]).board = chess.Board("4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    response = move(client, game["id"], "a7a8")
    assert response.status_code == 422 and "a7a8q" in response.get_json()["error"]
    state = move(client, game["id"], "a7a8n").get_json()
    assert state["moves"][0] == "a7a8n" and state["san"][0] == "a8=N"


def test_malformed_requests_get_clear_4xx_json(client):
    game = new_game(client)
    url = f"/api/games/{game['id']}/move"
    cases = [
        (client.post(url, data="{not json", content_type="application/json"), 400, "JSON object"),
        (client.post(url, data="[1, 2]", content_type="application/json"), 400, "JSON object"),
        (client.post(url, data='{"move": "e2e4"}', content_type="text/plain"), 415, "application/json"),
        (client.post(url, json={}), 400, "which move"),
        (client.post(url, json={"move": 42}), 400, "move must be"),
        (client.post(url, json={"move": "e2e4", "extra": 1}), 400, "unknown field"),
        (client.post(url, json={"move": "x" * 5000}), 400, "move must be"),
        (client.post(url, data="x" * 20_000, content_type="application/json"), 413, "Too Large"),
        (client.get(url), 405, "Method Not Allowed"),
        (client.get("/api/nothing-here"), 404, "Not Found"),
        (client.post(f"/api/games/{game['id']}/undo", json={"steps": 2}), 400, "unknown field"),
        (client.post(url, data=b"\xff\xfe", content_type="application/json"), 400, "UTF-8"),
    ]
    for response, status, words in cases:
        assert response.status_code == status, (status, response.get_json())
        assert response.is_json and words in response.get_json()["error"], response.get_json()


def test_json_nested_five_thousand_deep_is_400_without_a_traceback(client, caplog):
    game = new_game(client)
    deep = "[" * 5000 + "]" * 5000
    with caplog.at_level(logging.DEBUG):
        for url in (f"/api/games/{game['id']}/move", "/api/games"):
            for body in (deep, '{"move": ' + deep + "}", "{" * 5000):
                response = client.post(url, data=body, content_type="application/json")
                assert response.status_code == 400, (url, body[:20], response.get_json())
                assert "nests deeper" in response.get_json()["error"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    brackets = '{"move": "e2e4]]]]]]]]]]][[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"["}'
    response = client.post(f"/api/games/{game['id']}/move", data=brackets, content_type="application/json")
    assert response.status_code == 400 and "move must be" in response.get_json()["error"]   # in a string: no nesting


@pytest.mark.parametrize(("fields", "words"), [
    ({"color": "green"}, "color must be"),
    ({"evaluator": "EL/v999"}, "unknown evaluator"),
    ({"evaluator": 3}, "evaluator must be"),
    ({"stochastic": "yes"}, "stochastic must be"),
    ({"seed": -1}, "seed must be"),
    ({"depth": 0}, "depth must be"),
    ({"depth": True}, "depth must be"),
    ({"depth": 99}, "depth must be"),
    ({"movetime": 0}, "movetime must be"),
    ({"movetime": "1s"}, "movetime must be"),
    ({"colour": "white"}, "unknown field"),
])
def test_bad_game_settings_are_refused_with_400(client, fields, words):
    response = client.post("/api/games", json={**FAST, **fields})
    assert response.status_code == 400
    assert words in response.get_json()["error"]


def test_an_unknown_game_id_is_404(client):
    for response in (client.get("/api/games/nope"), move(client, "nope", "e2e4"),
                     client.post("/api/games/nope/undo"), client.get("/api/games/nope/pgn")):
        assert response.status_code == 404
        assert "no game with id 'nope'" in response.get_json()["error"]


def test_an_empty_or_blank_game_id_is_a_json_404_not_a_redirect(client):
    # the web fuzz test found "/api/games/\n/pgn" redirected (308) to "/api/games/pgn"
    for url in ("/api/games//pgn", "/api/games/\n/pgn", "/api/games//undo"):
        response = client.get(url) if url.endswith("pgn") else client.post(url)
        assert response.status_code == 404 and response.is_json, (url, response.status_code)


def test_two_games_do_not_mix(client):
    one, two = new_game(client), new_game(client)
    assert one["id"] != two["id"]
    move(client, one["id"], "e2e4")
    move(client, two["id"], "d2d4")
    first = client.get(f"/api/games/{one['id']}").get_json()
    second = client.get(f"/api/games/{two['id']}").get_json()
    assert first["moves"][0] == "e2e4" and second["moves"][0] == "d2d4"
    assert len(first["moves"]) == len(second["moves"]) == 2
    assert first["saw"]["fen"] != second["saw"]["fen"]


def test_the_store_forgets_the_least_recently_used_game(tmp_path):
    store = GameStore(limit=2, db=tmp_path / "games.sqlite3")
    a, b = store.new_game(FAST), store.new_game(FAST)
    store.get(a.id)                        # a is used again: b is now the oldest
    store.new_game(FAST)
    assert len(store) == 2 and store.get(a.id) is a
    with pytest.raises(RequestError, match="no game"):
        store.get(b.id)
    assert b.id not in GameDatabase(tmp_path / "games.sqlite3").ids()   # gone from the file too


# -- the games database -------------------------------------------------------------------
def test_every_change_is_written_and_a_new_store_on_the_file_goes_on(tmp_path):
    path = tmp_path / "games.sqlite3"
    store = GameStore(db=path)
    client = create_app(store, trusted_hosts=["localhost"]).test_client()
    game = new_game(client)
    move(client, game["id"], "e2e4")
    state = move(client, game["id"], "d2d4").get_json()
    again = create_app(GameStore(db=path), trusted_hosts=["localhost"]).test_client()   # a restarted server
    assert again.get(f"/api/games/{game['id']}").get_json() == state
    assert again.post(f"/api/games/{game['id']}/undo").get_json()["moves"] == state["moves"][:2]
    third = create_app(GameStore(db=path), trusted_hosts=["localhost"]).test_client()
    assert third.get(f"/api/games/{game['id']}").get_json()["moves"] == state["moves"][:2]   # the undo was kept
    assert third.post(f"/api/games/{game['id']}/resign").get_json()["result"] == "0-1"
    assert GameStore(db=path).get(game["id"]).state()["reason"] == "white resigns"


def test_a_database_that_refuses_writes_is_503_for_changes_and_reads_go_on(tmp_path, caplog):
    """Before: every request, reads included, answered 500 'disk I/O error' with a traceback in the
    log. Here SQLite itself refuses every write (query_only, as a full or read-only disk would),
    and the server tests/test_web_restart.py runs meets a real disk I/O error."""
    path = tmp_path / "games.sqlite3"
    store = GameStore(db=path)
    client = create_app(store, trusted_hosts=["localhost"]).test_client()
    game = new_game(client)
    state = move(client, game["id"], "e2e4").get_json()
    store.db._db.execute("PRAGMA query_only = ON")
    caplog.set_level(logging.INFO, logger="knights.frontends.web")
    assert client.get(f"/api/games/{game['id']}").get_json() == state
    assert client.get(f"/api/games/{game['id']}/pgn").status_code == 200
    assert client.get("/api/options").status_code == 200
    refused = [(f"/api/games/{game['id']}/move", {"move": "d2d4"}, "your move was not played"),
               (f"/api/games/{game['id']}/undo", None, "nothing was taken back"),
               (f"/api/games/{game['id']}/resign", None, "you have not resigned"),
               ("/api/games", FAST, "no game was started")]
    for url, body, lost in refused:
        response = client.post(url, json=body)
        assert response.status_code == 503, response.get_json()
        assert response.get_json()["error"] == (f"the games database {path} cannot be written (attempt to write a "
                                                f"readonly database): {lost}")
        assert client.get(f"/api/games/{game['id']}").get_json() == state     # as stored: nothing half-done
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == len(refused) and not any(r.exc_info for r in warnings)
    assert all("cannot be written" in r.getMessage() and "\n" not in r.getMessage() for r in warnings)
    store.db._db.execute("PRAGMA query_only = OFF")       # the disk is back: the game goes on
    after = move(client, game["id"], "d2d4").get_json()
    assert after["moves"][:3] == [*state["moves"], "d2d4"]
    assert GameDatabase(path).load(game["id"]).moves == after["moves"]


def test_a_game_set_up_from_a_position_is_stored_with_it(tmp_path, client, store):
    path = tmp_path / "games.sqlite3"
    store = GameStore(db=path)
    game = store.new_game(FAST)
    game.board = chess.Board("4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    game.play_human("a7a8q")
    store.save(game)
    assert GameStore(db=path).get(game.id).board.fen() == game.board.fen()


def test_the_database_is_bounded_by_count_and_by_idle_days(tmp_path):
    path = tmp_path / "games.sqlite3"
    store = GameStore(limit=3, db=path, idle_days=30)
    games = [store.new_game(FAST) for _ in range(5)]
    assert len(store) == 3 and set(store.db.ids()) == {g.id for g in games[2:]}
    with sqlite3.connect(path) as con:      # games[2] was last used 31 days ago
        con.execute("UPDATE games SET used = ? WHERE id = ?", (time.time() - 31 * 86400, games[2].id))
    reopened = GameStore(limit=3, db=path, idle_days=30)   # pruned when opened
    assert set(reopened.db.ids()) == {g.id for g in games[3:]}
    with pytest.raises(RequestError, match="no game"):
        reopened.get(games[2].id)


def test_what_the_bot_saw_is_kept_for_its_last_moves_only(monkeypatch, tmp_path):
    import knights.frontends.web.games

    assert MAX_SEEN == 64
    monkeypatch.setattr(knights.frontends.web.games, "MAX_SEEN", 3)
    store = GameStore(db=tmp_path / "games.sqlite3")
    game = store.new_game(FAST)
    for uci in ("a2a3", "b2b3", "c2c3", "d2d3", "e2e3"):
        game.play_human(uci)
        game.play_bot()
    assert sorted(game.seen) == [5, 7, 9]
    store.save(game)
    again = GameStore(db=tmp_path / "games.sqlite3").get(game.id)
    assert sorted(again.seen) == [5, 7, 9] and again.state()["saw"] == game.state()["saw"]
    again.undo()
    again.undo()
    again.undo()
    assert again.state()["saw"] is None and again.state()["bot_moves"] == 2   # older than what is kept


def test_a_damaged_or_newer_database_is_refused_naming_the_file(tmp_path):
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StorageError, match=r"junk\.sqlite3"):
        GameStore(db=junk)
    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as con:
        con.execute("PRAGMA user_version = 99")
    with pytest.raises(StorageError, match="newer version"):
        GameStore(db=newer)


def test_a_stored_game_that_cannot_go_on_is_409_with_the_reason(tmp_path):
    path = tmp_path / "games.sqlite3"
    store = GameStore(db=path)
    game = store.new_game(FAST)
    with sqlite3.connect(path) as con:
        con.execute("UPDATE games SET moves = 'e2e5' WHERE id = ?", (game.id,))
    client = create_app(GameStore(db=path), trusted_hosts=["localhost"]).test_client()
    response = client.get(f"/api/games/{game.id}")
    assert response.status_code == 409 and "e2e5" in response.get_json()["error"]


def test_playing_black_the_bot_opens_and_saw_all_twenty_moves(client):
    state = new_game(client, color="black")
    assert state["human"] == "black" and state["turn"] == "black" and len(state["moves"]) == 1
    assert sorted(c["uci"] for c in state["saw"]["candidates"]) == sorted(m.uci() for m in chess.Board().legal_moves)
    assert state["can_undo"] is False
    assert client.post(f"/api/games/{state['id']}/undo").status_code == 409


def test_undo_takes_back_your_move_and_the_reply(client):
    game = new_game(client)
    move(client, game["id"], "e2e4")
    after = move(client, game["id"], "d2d4").get_json()
    assert len(after["moves"]) == 4
    state = client.post(f"/api/games/{game['id']}/undo").get_json()
    assert state["moves"] == after["moves"][:2] and state["turn"] == "white"
    assert state["saw"]["uci"] == after["moves"][1]        # what the bot saw goes back with it
    state = client.post(f"/api/games/{game['id']}/undo").get_json()
    assert state["moves"] == [] and state["saw"] is None and state["can_undo"] is False
    response = client.post(f"/api/games/{game['id']}/undo")
    assert response.status_code == 409 and "nothing to undo" in response.get_json()["error"]


def test_resigning_ends_the_game(client):
    game = new_game(client)
    state = client.post(f"/api/games/{game['id']}/resign").get_json()
    assert state["over"] and state["result"] == "0-1" and state["reason"] == "white resigns"
    assert state["legal"] == []
    for response in (move(client, game["id"], "e2e4"), client.post(f"/api/games/{game['id']}/resign"),
                     client.post(f"/api/games/{game['id']}/undo")):
        assert response.status_code == 409 and "over" in response.get_json()["error"]


def test_a_mate_by_you_ends_the_game_without_a_bot_move(client, store):
    game = new_game(client)
    store.get(game["id"]).board = chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    state = move(client, game["id"], "a1a8").get_json()
    assert state["over"] and state["reason"] == "checkmate" and state["result"] == "1-0"
    assert state["moves"] == ["a1a8"] and state["check"] == "g8"
    assert move(client, game["id"], "g1f1").status_code == 409


def test_the_pgn_downloads_and_parses(client):
    game = new_game(client)
    move(client, game["id"], "e2e4")
    moves = move(client, game["id"], "g1f3").get_json()["moves"]
    response = client.get(f"/api/games/{game['id']}/pgn")
    assert response.status_code == 200 and response.mimetype == "application/x-chess-pgn"
    assert f"knights-{game['id']}.pgn" in response.headers["Content-Disposition"]
    parsed = chess.pgn.read_game(io.StringIO(response.get_data(as_text=True)))
    assert parsed is not None and not parsed.errors
    assert [m.uci() for m in parsed.mainline_moves()] == moves
    assert parsed.headers["White"] == "You" and "material" in parsed.headers["Black"]
    assert parsed.headers["Result"] == "*"


# -- engines ----------------------------------------------------------------------------------
def build_engine(evaluator: str | None, **fields):
    """The web page's bot for a request of ``evaluator`` and ``fields``, as a new game builds it."""
    return engine_for(EngineSettings.from_json({"evaluator": evaluator, **fields}))


def test_build_engine_depth_one_is_the_one_ply_bot():
    engine = build_engine("material", stochastic=False, seed=1, depth=1)
    assert engine.depth == 1 and engine.stochastic is False
    assert engine.choose(chess.Board("4k3/8/8/8/8/8/3q4/3RK3 w - - 0 1")).move.uci() in ("d1d2", "e1d2")
    with pytest.raises(RequestError, match="unknown evaluator"):
        build_engine("nonsense")


def test_deeper_search_is_built(client):
    from knights.engine.search import SearchEngine

    engine = build_engine("material", stochastic=False, depth=3)
    assert isinstance(engine, SearchEngine) and engine.depth == 3 and engine.movetime == engines.SEARCH_MOVETIME
    response = client.post("/api/games", json={**FAST, "depth": 2, "movetime": 5})
    assert response.status_code == 201
    assert client.get("/api/options").get_json()["search_available"] is True
    state = move(client, response.get_json()["id"], "e2e4").get_json()
    replay(state["moves"])
    assert state["settings"]["depth"] == 2 and state["settings"]["movetime"] == 5.0


def test_options_list_the_evaluators_and_the_default(client):
    options = client.get("/api/options").get_json()
    assert "material" in options["evaluators"] and options["default_evaluator"] in options["evaluators"]
    assert options["depths"][0] == 1


def test_the_default_bot_is_the_one_every_route_plays():
    """A request that names no evaluator and no depth gets the bot as the terminal, knights uci
    and lichess-bot build it: the compiled search over SEARCH_NETWORK, a second a move; at depth 1 the
    one-ply bot over the one-ply default; 'default' is what the page offers first."""
    from knights.engine.compiled_search import FastSearchEngine, default_net_source
    from knights.engine.constants import UNLIMITED_DEPTH as PLAY_DEPTH
    from knights.engine.spec import ONE_PLY_EVALUATOR, PLAY_MOVETIME

    settings = EngineSettings.from_json({})
    assert settings.evaluator == "default" and settings.depth == PLAY_DEPTH
    engine = engines.engine_for(settings)
    if default_net_source() is not None:
        assert isinstance(engine, FastSearchEngine) and engine.net_label == SEARCH_NETWORK
    assert engine.movetime == PLAY_MOVETIME and engine.depth == PLAY_DEPTH
    one_ply = build_engine(None, depth=1)
    assert one_ply.depth == 1 and one_ply.one_ply.evaluator.name == ONE_PLY_EVALUATOR
    options = engines.page_options()
    assert options["evaluators"][0] == options["default_evaluator"] == "default"
    assert options["default_depth"] == PLAY_DEPTH and PLAY_DEPTH in options["depths"]
    decision = engine.choose(chess.Board())
    assert decision.move in chess.Board().legal_moves and decision.depth >= 2


def test_settings_round_trip():
    settings = EngineSettings.from_json({"evaluator": "Material", "seed": 7, "depth": 1, "movetime": 0.5})
    assert settings.as_json() == {"evaluator": "material", "stochastic": True, "seed": 7, "depth": 1,
                                  "movetime": 0.5}


# -- the page and its files ---------------------------------------------------------------------
def test_the_page_and_the_board_library_are_served(client):
    page = client.get("/")
    if board_library_missing():
        assert page.status_code == 503 and "npm ci" in page.get_json()["error"]
        return
    assert page.status_code == 200 and b'id="board"' in page.data
    assert client.get("/static/app.js").status_code == 200
    library = client.get("/vendor/cm-chessboard/src/Chessboard.js")
    assert library.status_code == 200 and b"class Chessboard" in library.data
    assert client.get("/vendor/cm-chessboard/assets/pieces/standard.svg").status_code == 200
    for outside in ("package.json", "README.md", "../package-lock.json", "src/../../package-lock.json"):
        assert client.get(f"/vendor/cm-chessboard/{outside}").status_code == 404, outside


def test_a_foreign_host_name_is_refused(client):
    assert client.get("/api/options", headers={"Host": "evil.example"}).status_code == 400
    assert client.get("/api/options", headers={"Host": "127.0.0.1:8000"}).status_code == 200


# -- the real server and `knights serve` ------------------------------------------------------
def test_knights_serve_parses_its_options_and_its_help_names_the_database():
    args = build_parser().parse_args(["serve", "--port", "0"])
    assert (args.host, args.port, args.open, args.db) == ("127.0.0.1", 0, False, DEFAULT_DB)
    assert str(DEFAULT_DB) == "runs/web/games.sqlite3"
    assert build_parser().parse_args(["serve", "--db", "x.sqlite3"]).db.name == "x.sqlite3"
    assert args.func.__module__ == "knights.frontends.web.server"
    parser = build_parser()
    serve = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == "serve")[1]
    assert "runs/web/games.sqlite3" in " ".join(serve.format_help().split())


@pytest.mark.parametrize("host", ["no-such-host.invalid", "10.254.254.254", "300.1.1.1"])
def test_a_bad_host_is_named_as_a_bad_host_not_a_taken_port(host):
    with pytest.raises(RuntimeError) as refused:
        build_server(host, 0)
    message = str(refused.value)
    assert f"bad --host {host!r}" in message and "port is taken" not in message and "--port" not in message


def test_the_page_is_told_the_search_s_choice_first_not_better_looking_shallow_scores():
    """Before: the candidates were sorted by the scores shown, so after a search cut short the
    played move sat below moves whose one-ply scores read better (34...Bd5 "choice 17 of 36").
    A real search stopped after 50 nodes: it plays Bxh7+, -1.00 once searched, while Bxb5 keeps
    its one-ply +2.00; the page is told the engine's order, the played move first."""
    board = chess.Board("r2q1rk1/1b2bppp/p1n1pn2/1p6/3P4/P1NBPN2/1P3PPP/R1BQ1RK1 w - - 0 12")
    engine = build_engine("material", stochastic=False, depth=8)
    decision = engine.choose(board, limits=SearchLimits(nodes=50))
    assert decision.move.uci() == "d3h7" and decision.nodes > 0
    saw = what_the_bot_saw(board, decision)
    assert [c["uci"] for c in saw["candidates"]] == [m.uci() for m, _ in decision.candidates]
    assert saw["rank"] == decision.rank == 0 and saw["candidates"][0]["uci"] == saw["uci"] == "d3h7"
    assert saw["searched"] and saw["score"] == -1.0 and saw["line"] == [{"uci": "d3h7", "san": "Bxh7+"}]
    assert max(c["score"] for c in saw["candidates"]) == 2.0     # better-looking scores listed below it


def test_a_search_s_line_is_told_in_san_and_the_one_ply_bot_is_not_a_search():
    board = chess.Board("6k1/5ppp/8/8/3b4/8/5PPP/3R2K1 b - - 0 34")
    decision = build_engine("material", stochastic=False, depth=3).choose(board, limits=SearchLimits(depth=3))
    saw = what_the_bot_saw(board, decision)
    replay = board.copy()
    for step, move in zip(saw["line"], decision.pv, strict=True):
        assert step == {"uci": move.uci(), "san": replay.san(move)}
        replay.push(move)
    assert saw["searched"] and len(saw["line"]) >= 2 and saw["line"][0]["uci"] == saw["uci"]
    one_ply = build_engine("material", stochastic=False, depth=1).choose(board)
    saw = what_the_bot_saw(board, one_ply)
    assert not saw["searched"] and saw["line"] == [{"uci": one_ply.move.uci(), "san": board.san(one_ply.move)}]
    scores = [c["score"] for c in saw["candidates"]]
    assert scores == sorted(scores) and saw["rank"] == 0          # Black's best (White's lowest) first


def test_a_depth_two_game_tells_the_page_the_search_s_move_first(client):
    game = new_game(client, depth=2, movetime=5)
    saw = move(client, game["id"], "e2e4").get_json()["saw"]
    assert saw["searched"] and saw["rank"] == 0 and saw["candidates"][0]["uci"] == saw["uci"]
    assert saw["line"][0]["uci"] == saw["uci"]


@pytest.mark.clock
def test_a_search_whose_page_has_gone_stops_and_leaves_the_bot_to_move():
    """A page asks for a move at depth 8 with a minute to think, then closes its
    connection: the search stops within a second or so (so another game's bot, which
    waits for it, answers at once) and its move is not played; ``/bot`` plays it later."""
    server, thread = start("127.0.0.1", 0)
    try:
        url = url_of(server)
        store = server.app.extensions["knights_games"]
        slow = store.new_game({**FAST, "depth": 8, "movetime": 60})
        body = json.dumps({"move": "e2e4"}).encode()
        with socket.create_connection(("127.0.0.1", server.server_port), timeout=10) as sock:
            sock.sendall(f"POST /api/games/{slow.id}/move HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            deadline = time.monotonic() + 20
            while slow.board.move_stack == [] and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.5)                      # the bot is thinking now
        quick = store.new_game(FAST)
        started = time.monotonic()
        request = urllib.request.Request(f"{url}api/games/{quick.id}/move", data=json.dumps({"move": "d2d4"}).encode(),
                                         method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            assert len(json.load(response)["moves"]) == 2
        assert time.monotonic() - started < 15, "the abandoned search ran on"
        with slow.lock:
            assert [m.uci() for m in slow.board.move_stack] == ["e2e4"] and slow.bot_to_move
            slow.settings = engines.EngineSettings.from_json({**FAST, "depth": 2, "movetime": 1})
            slow.engine = engines.engine_for(slow.settings)
        request = urllib.request.Request(f"{url}api/games/{slow.id}/bot", data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=60) as response:
            state = json.load(response)
        assert len(state["moves"]) == 2 and not state["bot_to_move"]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_bot_moves_only_when_it_is_to_move(client):
    game = new_game(client)
    state = client.post(f"/api/games/{game['id']}/bot").get_json()
    assert state["moves"] == [] and state["bot_to_move"] is False


@pytest.mark.skipif(bool(board_library_missing()), reason="the board library is not installed (make browser)")
def test_a_real_server_answers_on_loopback_and_a_taken_port_is_one_clear_error():
    server, thread = start("127.0.0.1", 0)
    try:
        url = url_of(server)
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "api/options", timeout=10) as response:
            assert "material" in json.load(response)["evaluators"]
        request = urllib.request.Request(url + "api/games", data=b"{", method="POST",
                                         headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 400
        with pytest.raises(RuntimeError, match=r"cannot listen on 127\.0\.0\.1"):
            build_server("127.0.0.1", server.server_port)
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_the_bot_is_named_by_what_plays(client):
    """A network judged where the captures end plays one ply as named; searched deeper it is that network's
    compiled search, and the page and the PGN say so."""
    from knights.learn import registry

    network = registry.FAST_NETWORKS[-1]
    if not registry.get(network).is_trained():
        pytest.skip(f"{network} is not trained here")
    one_ply = new_game(client, evaluator=f"{network}+quiesce", depth=1)
    assert one_ply["bot"] == f"Knights and Kernels [{network}+quiesce]"
    deeper = new_game(client, evaluator=f"{network}+quiesce", depth=2)
    assert deeper["bot"] == f"Knights and Kernels [{network}, depth 2]"
