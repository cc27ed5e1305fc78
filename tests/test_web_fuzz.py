"""The web API under generated input (hypothesis): whatever a client sends, the answer is
JSON with a 2xx or a 4xx status, never a 500, nothing is logged as a failure, and a game
only ever holds legal moves. Example counts are bounded so the suite stays quick (a few
seconds); the bot is the material evaluator, deterministic.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import chess
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knights.frontends.web.app import MAX_NESTING, create_app
from knights.frontends.web.games import NEW_GAME_FIELDS, GameStore

FAST = {"evaluator": "material", "stochastic": False, "depth": 1}
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
move_texts = st.one_of(
    st.text(max_size=14),
    st.sampled_from(["e2e4", "e7e5", "e4", "Nf3", "O-O", "e2e4q", "0000", "a7a8", "Ke2", " e4 ", "E2E4", "nf3"]),
    st.builds(lambda a, b, p: a + b + p, st.sampled_from([f + r for f in "abcdefgh" for r in "12345678"]),
              st.sampled_from([f + r for f in "abcdefgh" for r in "12345678"]), st.sampled_from(["", "q", "n", "x"])))


class FailureLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def api() -> Any:
    store = GameStore()
    client = create_app(store, trusted_hosts=["localhost"]).test_client()
    failures = FailureLog()
    logger = logging.getLogger("knights.frontends.web.app")
    logger.addHandler(failures)
    yield client, store
    logger.removeHandler(failures)
    assert not failures.records, [r.getMessage() for r in failures.records]


def check(response: Any) -> dict[str, Any]:
    """A 2xx or 4xx JSON answer; 4xx ones say why in one line."""
    assert response.status_code < 500, response.get_data(as_text=True)[:300]
    assert response.is_json, response.get_data(as_text=True)[:300]
    data: dict[str, Any] = response.get_json()
    if response.status_code >= 400:
        assert isinstance(data["error"], str) and data["error"] and "\n" not in data["error"]
    return data


def replays(state: dict[str, Any]) -> chess.Board:
    board = chess.Board()
    for uci in state["moves"]:
        move = chess.Move.from_uci(uci)
        assert move in board.legal_moves, (uci, board.fen())
        board.push(move)
    assert board.fen() == state["fen"]
    return board


@SETTINGS
@given(body=json_values, path=st.sampled_from(["/api/games", "move", "undo", "resign", "bot"]))
def test_any_json_body_is_answered_without_a_server_error(api: Any, body: Any, path: str) -> None:
    client, store = api
    url = path if path.startswith("/") else f"/api/games/{store.new_game(FAST).id}/{path}"
    check(client.post(url, data=json.dumps(body), content_type="application/json"))


@SETTINGS
@given(raw=st.binary(max_size=300), path=st.sampled_from(["/api/games", "move", "undo"]),
       kind=st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded", ""]))
def test_any_bytes_are_answered_without_a_server_error(api: Any, raw: bytes, path: str, kind: str) -> None:
    client, store = api
    url = path if path.startswith("/") else f"/api/games/{store.new_game(FAST).id}/{path}"
    check(client.post(url, data=raw, content_type=kind or None))


@SETTINGS
@given(depth=st.one_of(st.integers(1, 64), st.integers(900, 7000)), opener=st.sampled_from("[{"),
       inside=st.sampled_from(['', '"x"', '1', '{"a":']))
def test_deep_nesting_is_a_400_at_any_depth_past_the_limit(api: Any, depth: int, opener: str, inside: str) -> None:
    client, store = api
    closer = "]" if opener == "[" else "}"
    body = '{"move": ' + opener * depth + inside + closer * depth + "}"
    response = client.post(f"/api/games/{store.new_game(FAST).id}/move", data=body, content_type="application/json")
    data = check(response)
    assert response.status_code == 400                   # never a move: a list or an object
    levels = 1 + depth + (inside == '{"a":')
    assert ("nests deeper" in data["error"]) == (levels > MAX_NESTING), (levels, data)


@SETTINGS
@given(fields=st.dictionaries(st.sampled_from([*NEW_GAME_FIELDS, "colour", "x"]), json_values, max_size=6))
def test_any_new_game_fields_make_a_game_or_a_clear_refusal(api: Any, fields: dict[str, Any]) -> None:
    client, _ = api
    fields = {**FAST, **fields}
    if isinstance(fields.get("depth"), int) and not isinstance(fields["depth"], bool) and fields["depth"] > 1:
        fields["movetime"] = 0.05                 # a search, kept short
    response = client.post("/api/games", json=fields)
    data = check(response)
    assert response.status_code in (201, 400, 422), data
    if response.status_code == 201:
        replays(data)


@SETTINGS
@given(game_id=st.text(min_size=1, max_size=40).filter(lambda t: "/" not in t and t not in (".", "..")),
       action=st.sampled_from(["", "/pgn", "/move", "/undo", "/resign", "/bot"]))
def test_any_game_id_is_a_404_or_a_refusal(api: Any, game_id: str, action: str) -> None:
    client, _ = api
    url = f"/api/games/{game_id}{action}"
    response = client.get(url) if action in ("", "/pgn") else client.post(url, json={"move": "e2e4"}
                                                                          if action == "/move" else None)
    check(response)
    assert response.status_code in (400, 404, 405), response.get_json()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.one_of(st.tuples(st.just("move"), move_texts), st.tuples(st.just("legal"), st.integers(0, 60)),
                                st.tuples(st.sampled_from(["undo", "resign", "bot", "get", "pgn"]), st.none())),
                      max_size=14),
       color=st.sampled_from(["white", "black"]))
def test_a_game_driven_at_random_only_ever_holds_legal_moves(api: Any, steps: list[tuple[str, Any]],
                                                             color: str) -> None:
    client, _ = api
    state = check(client.post("/api/games", json={**FAST, "color": color}))
    gid = state["id"]
    for action, arg in steps:
        if action == "legal":
            if not state["legal"]:
                continue
            action, arg = "move", sorted(state["legal"])[arg % len(state["legal"])]
        if action == "move":
            response = client.post(f"/api/games/{gid}/move", json={"move": arg})
        elif action == "get":
            response = client.get(f"/api/games/{gid}")
        elif action == "pgn":
            response = client.get(f"/api/games/{gid}/pgn")
            assert response.status_code == 200 and response.mimetype == "application/x-chess-pgn"
            continue
        else:
            response = client.post(f"/api/games/{gid}/{action}")
        data = check(response)
        if response.status_code == 200:
            state = data
        else:
            assert response.status_code in (400, 409, 422), data
            assert check(client.get(f"/api/games/{gid}"))["moves"] == state["moves"]   # a refusal changes nothing
        board = replays(state)
        assert state["over"] or state["turn"] == state["human"]        # the bot has answered
        assert sorted(state["legal"]) == ([] if state["over"] else sorted(m.uci() for m in board.legal_moves))


@pytest.mark.parametrize("field", ["evaluator", "stochastic", "seed", "depth", "movetime", "color"])
def test_a_long_bad_value_is_quoted_by_a_short_prefix(api: Any, field: str) -> None:
    """Before: a 5,000-character value was echoed whole in the answer (a body may hold 16 KB)."""
    client, _ = api
    long = "e2e4" + "x" * 5000
    data = check(client.post("/api/games", json={**FAST, field: long}))
    assert len(data["error"]) < 400 and long[:30] in data["error"] and "\u2026" in data["error"], data
    game = check(client.post("/api/games", json=FAST))
    data = check(client.post(f"/api/games/{game['id']}/move", json={"move": long}))
    assert len(data["error"]) < 200 and "\u2026" in data["error"], data
    data = check(client.get(f"/api/games/{long}"))
    assert len(data["error"]) < 400 and "\u2026" in data["error"], data
