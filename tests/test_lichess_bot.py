"""``lichess_bot/`` against the lichess-bot interface it plugs into.

lichess-bot is not a package (and not a dependency of this project), so its interface
is recorded in ``tests/data/lichess_bot_interface.json``: written by
:func:`describe_lichess_bot` from a real checkout (the version and commit are in the
file; ``LICHESS_BOT_DIR=/path/to/lichess-bot pytest tests/test_lichess_bot.py``
compares the record with another checkout). The homemade class is checked against
that record: its ``__init__`` and ``search`` signatures, the base-class hooks it uses,
and the fields of the real python-chess ``PlayResult`` it returns. To load
``homemade.py`` the tests provide ``lib.engine_wrapper.MinimalEngine`` built from the
record (its constructor signature, the ``scores`` list and the
``offer_draw_or_resign(result, board)`` hook of lichess-bot's ``EngineWrapper``);
everything else (our engine, python-chess) is real. Complete games through
lichess-bot's own harness were played by hand: see lichess_bot/README.md."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import random
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import chess
import chess.engine
import pytest

ROOT = Path(__file__).resolve().parent.parent
HOMEMADE = ROOT / "lichess_bot" / "homemade.py"
INSTALL = ROOT / "lichess_bot" / "install.py"
INTERFACE = json.loads((ROOT / "tests" / "data" / "lichess_bot_interface.json").read_text())


def _parameters(function: ast.FunctionDef) -> list[str]:
    args = function.args
    names = [a.arg for a in args.posonlyargs + args.args]
    names += [f"*{args.vararg.arg}"] if args.vararg else []
    names += [a.arg for a in args.kwonlyargs]
    names += [f"**{args.kwarg.arg}"] if args.kwarg else []
    return names


def describe_lichess_bot(checkout: Path) -> dict[str, Any]:
    """The parts of lichess-bot's interface that ``lichess_bot/homemade.py`` relies on,
    read (not imported) from a checkout's source."""
    tree = ast.parse((checkout / "lib" / "engine_wrapper.py").read_text())
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}

    def method(cls: str, name: str) -> ast.FunctionDef:
        return next(n for n in classes[cls].body if isinstance(n, ast.FunctionDef) and n.name == name)

    wrapper_init = method("EngineWrapper", "__init__")
    targets = [t for n in ast.walk(wrapper_init) for t in getattr(n, "targets", [getattr(n, "target", None)])]
    attributes = sorted({t.attr for t in targets
                         if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"})
    create = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "create_engine")
    call = next(n for n in ast.walk(create) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and n.func.id == "Engine")
    wrapper_search = method("EngineWrapper", "search")
    test_homemade = ast.parse((checkout / "test_bot" / "homemade.py").read_text())
    versioning = (checkout / "lib" / "versioning.yml").read_text().splitlines()
    version = next(line.split(":", 1)[1].strip() for line in versioning if line.startswith("lichess_bot_version:"))
    return {
        "lichess_bot_version": version,
        "MinimalEngine.__init__": _parameters(method("MinimalEngine", "__init__")),
        "MinimalEngine.search": _parameters(method("MinimalEngine", "search")),
        "create_engine passes": {"positional": [ast.unparse(a) for a in call.args],
                                 "keywords": [k.arg for k in call.keywords]},
        "EngineWrapper.__init__ sets": attributes,
        "EngineWrapper.offer_draw_or_resign": _parameters(method("EngineWrapper", "offer_draw_or_resign")),
        "EngineWrapper.search calls offer_draw_or_resign": any(
            isinstance(n, ast.Attribute) and n.attr == "offer_draw_or_resign" for n in ast.walk(wrapper_search)),
        "PlayResult fields used": sorted({n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                                          and n.attr in ("move", "ponder", "info", "draw_offered", "resigned")}),
        "test_bot/homemade.py imports from homemade": sorted(
            a.name for n in test_homemade.body if isinstance(n, ast.ImportFrom) and n.module == "homemade"
            for a in n.names),
    }


def _recorded_base() -> type:
    """lichess-bot's ``MinimalEngine`` as far as the record describes it: a constructor
    with the recorded parameters, the ``scores`` and ``draw_or_resign`` attributes set by
    ``EngineWrapper.__init__`` and the ``offer_draw_or_resign(result, board)`` hook
    (here it records its calls and returns the result as given)."""
    names = INTERFACE["MinimalEngine.__init__"]
    signature = inspect.Signature(
        [inspect.Parameter(n.lstrip("*"), inspect.Parameter.VAR_KEYWORD if n.startswith("**")
                           else inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    assert {"scores", "draw_or_resign"} <= set(INTERFACE["EngineWrapper.__init__ sets"])

    class MinimalEngine:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            bound = signature.bind(self, *args, **kwargs)   # TypeError when the call does not fit
            self.engine_name = self.__class__.__name__
            self.scores: list[chess.engine.PovScore] = []
            self.draw_or_resign = bound.arguments["draw_or_resign"]
            self.decided: list[chess.engine.PlayResult] = []

        def offer_draw_or_resign(self, result: chess.engine.PlayResult, board: chess.Board) -> chess.engine.PlayResult:
            self.decided.append(result)
            return result

    return MinimalEngine


@pytest.fixture
def homemade(monkeypatch):
    lib = types.ModuleType("lib")
    lib.__path__ = []  # a package
    wrapper = types.ModuleType("lib.engine_wrapper")
    wrapper.MinimalEngine = _recorded_base()
    lib.engine_wrapper = wrapper
    monkeypatch.setitem(sys.modules, "lib", lib)
    monkeypatch.setitem(sys.modules, "lib.engine_wrapper", wrapper)
    spec = importlib.util.spec_from_file_location("homemade_under_test", HOMEMADE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make(homemade, **options):
    """Constructed as lichess-bot's create_engine does: six positional arguments
    (the sixth is ``cfg.debug``) and ``cwd=`` (the recorded call)."""
    options.setdefault("Evaluator", "material")
    passes = INTERFACE["create_engine passes"]
    assert len(passes["positional"]) == 6 and passes["positional"][5] == "cfg.debug"
    return homemade.KnightsKernels(["knights"], options, None, {"offer_draw_enabled": False}, None, False,
                                   **{k: "." for k in passes["keywords"]})


CLOCK = chess.engine.Limit(white_clock=15, black_clock=15, white_inc=0, black_inc=0)   # 0.5 s a move
NO_MOVE = chess.engine.PlayResult(None, None)   # what lichess-bot passes when no book/tablebase move


def test_signatures_match_the_recorded_interface(homemade):
    """The sixth parameter was ``name`` (receiving lichess-bot's ``debug``), with defaults
    lichess-bot does not have: this failed on the class before the fix."""
    ours = inspect.signature(homemade.KnightsKernels.__init__)
    recorded = INTERFACE["MinimalEngine.__init__"]
    assert [("**" if p.kind is p.VAR_KEYWORD else "") + p.name for p in ours.parameters.values()] == recorded
    assert all(p.default is p.empty for p in ours.parameters.values())
    assert list(inspect.signature(homemade.KnightsKernels.search).parameters) == INTERFACE["MinimalEngine.search"]
    # the real python-chess PlayResult carries every field lichess-bot reads
    result = chess.engine.PlayResult(chess.Move.from_uci("e2e4"), None, {})
    assert all(hasattr(result, field) for field in INTERFACE["PlayResult fields used"])
    # lichess-bot's tests import ExampleEngine from its homemade.py: it must stay in place
    assert INTERFACE["test_bot/homemade.py imports from homemade"] == ["ExampleEngine"]


@pytest.mark.skipif(not os.environ.get("LICHESS_BOT_DIR"), reason="LICHESS_BOT_DIR (a lichess-bot checkout) not set")
def test_the_record_matches_a_checkout():
    described = describe_lichess_bot(Path(os.environ["LICHESS_BOT_DIR"]))
    recorded = {k: v for k, v in INTERFACE.items() if not k.startswith("_") and k != "commit"}
    assert described == recorded


@pytest.mark.clock     # the next move must be searched within a 3 s clock's budget
def test_the_decision_is_timed_when_built_and_one_slow_move_does_not_make_the_rest_quick(homemade):
    """The first use of the compiled search loads and compiles (half a second here); timed then, when the engine
    is built, it no longer counts as a move's cost. Before, one slow decision left the estimate above every later
    budget of a game on a clock without increment, and every later move was the static quick move."""
    bot = make(homemade, Seed=1, Depth=64)
    built = bot.decision_cost.seconds
    assert built is not None and 0.0 < built < 2.0
    bot.decision_cost.note(30.0)             # one decision that took far longer than any budget of this game
    clock = chess.engine.Limit(white_clock=3, black_clock=3, white_inc=0, black_inc=0)
    board = chess.Board()
    result = bot.search(board, clock, False, False, NO_MOVE)
    assert result.move in board.legal_moves and result.info["depth"] >= 1      # searched, not the quick move
    bot.decision_cost.note(30.0)             # most decisions so far slow (3 of 5): the machine is slow, the quick move
    bot.decision_cost.note(30.0)
    board.push(result.move)
    assert bot.search(board, clock, False, False, NO_MOVE).info["depth"] == 0


# the searched game (about 40 moves of 0.1 s) is an end-to-end run: make test plays it
@pytest.mark.parametrize("depth", [1, pytest.param(64, marks=[pytest.mark.slow, pytest.mark.clock])])
def test_search_plays_legal_moves_for_whole_games(homemade, depth):
    """Depth 1: the one-ply bot (every answer at depth 1); 64: the search, on a clock."""
    bot = make(homemade, Seed=1, Depth=depth)
    assert bot.engine_name == "KnightsKernels"
    clock = CLOCK if depth == 1 else chess.engine.Limit(white_clock=3, black_clock=3, white_inc=0, black_inc=0)
    for seed in range(3 if depth == 1 else 1):   # one searched game: about 40 moves of 0.1 s
        rng = random.Random(seed)
        board = chess.Board()
        while not board.is_game_over(claim_draw=True) and len(board.move_stack) < 160:
            if board.turn == (seed % 2 == 0):
                result = bot.search(board.copy(), clock, False, False, NO_MOVE)
                assert isinstance(result, chess.engine.PlayResult)
                assert result.move in board.legal_moves
                assert result.info["depth"] == 1 if depth == 1 else result.info["depth"] >= 1
                assert isinstance(result.info["score"], chess.engine.PovScore)
                board.push(result.move)
            else:
                board.push(rng.choice(list(board.legal_moves)))


@pytest.mark.parametrize(("option", "value", "says"), [
    ("Depth", "x", "the Depth option must be an integer from 1"), ("Depth", 0, "the Depth option"),
    ("Seed", "abc", "the Seed option"), ("CaptureBonus", "lots", "the CaptureBonus option"),
    ("CaptureBonus", 500, "from 0 to 100"), ("Stochastic", "maybe", "the Stochastic option must be true or false")])
def test_a_bad_option_is_named(homemade, option, value, says):
    with pytest.raises(ValueError, match=says):
        make(homemade, **{option: value})


def test_root_moves_are_honoured(homemade):
    bot = make(homemade, Seed=2)
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    only = [chess.Move.from_uci("h2h3"), chess.Move.from_uci("g2g3")]
    for _ in range(10):
        assert bot.search(board, chess.engine.Limit(time=0.2), False, False, list(only)).move in only
    # no list (a PlayResult without a move, or an empty list): all moves; the mate is found
    assert bot.search(board, CLOCK, False, False, NO_MOVE).move == chess.Move.from_uci("a1a8")
    result = bot.search(board, CLOCK, False, False, [])
    assert result.move == chess.Move.from_uci("a1a8")
    assert result.info["score"] == chess.engine.PovScore(chess.engine.Mate(1), chess.WHITE)


def test_draws_are_left_to_lichess_bots_rules(homemade):
    """Before the fix a draw offer was accepted whenever the own eval was below zero
    (``draw_offered=True`` for the losing side), whatever ``draw_or_resign`` said. Now
    every result goes, with its score, through lichess-bot's configured rules
    (``offer_draw_or_resign``) and the class itself never sets draw_offered/resigned."""
    assert INTERFACE["EngineWrapper.search calls offer_draw_or_resign"]
    assert INTERFACE["EngineWrapper.offer_draw_or_resign"] == ["self", "result", "board"]
    bot = make(homemade, stochastic="false", SEED=3, capturebonus=15)
    assert bot.knights.stochastic is False and bot.knights.capture_bonus == pytest.approx(0.15)
    losing = chess.Board("4k3/8/8/3q4/8/8/8/4K3 w - - 0 1")     # White to move, a queen down
    winning = chess.Board("4k3/8/8/3q4/8/8/8/4K3 b - - 0 1")    # Black to move, a queen up
    for board in (losing, winning, losing):
        result = bot.search(board, CLOCK, False, True, NO_MOVE)
        assert result.move in board.legal_moves
        assert result.draw_offered is False and result.resigned is False
        assert bot.decided[-1] is result and bot.scores[-1] == result.info["score"]
    assert bot.scores[0].relative.score() < 0 < bot.scores[1].relative.score()
    assert len(bot.decided) == len(bot.scores) == 3


def test_a_missing_dependency_is_named(tmp_path):
    """With KNIGHTS_HOME set and a dependency missing, the error used to say "set
    KNIGHTS_HOME"; now it names the import that failed."""
    home = tmp_path / "home"
    (home / "knights" / "evaluate").mkdir(parents=True)
    (home / "knights" / "__init__.py").write_text("")
    (home / "knights" / "evaluate" / "__init__.py").write_text("import numpy_missing_for_this_test\n")
    script = (f"import sys, types; lib = types.ModuleType('lib'); lib.__path__ = []; "
              f"w = types.ModuleType('lib.engine_wrapper'); w.MinimalEngine = object; "
              f"sys.modules['lib'] = lib; sys.modules['lib.engine_wrapper'] = w; "
              f"import runpy; runpy.run_path({str(HOMEMADE)!r})")
    run = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True,
                         timeout=120, env={**os.environ, "KNIGHTS_HOME": str(home)})
    assert run.returncode != 0
    assert "No module named 'numpy_missing_for_this_test'" in run.stderr and "dependency" in run.stderr
    assert "set KNIGHTS_HOME" not in run.stderr


def _fake_checkout(tmp_path: Path) -> Path:
    """A folder laid out as a lichess-bot checkout (the two files install.py checks)."""
    checkout = tmp_path / "lichess-bot"
    checkout.mkdir()
    (checkout / "lichess-bot.py").write_text("# lichess-bot\n")
    (checkout / "homemade.py").write_text("from lib.engine_wrapper import MinimalEngine\n\n\n"
                                          "class ExampleEngine(MinimalEngine):\n    pass\n")
    return checkout


def _install(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(INSTALL), *args], check=False, capture_output=True, text=True,
                          timeout=60)


def test_install_keeps_lichess_bots_homemade_and_is_idempotent(tmp_path):
    """The README used to say: copy homemade.py over lichess-bot's (its tests then fail
    to import ExampleEngine) or append the class (a SyntaxError: ``from __future__``
    mid-file). install.py keeps lichess-bot's file and adds one import line."""
    checkout = _fake_checkout(tmp_path)
    original = (checkout / "homemade.py").read_text()
    first = _install(str(checkout), "--config")
    assert first.returncode == 0, first.stderr
    text = (checkout / "homemade.py").read_text()
    assert text.startswith(original) and text.count("from knights_homemade import KnightsKernels") == 1
    ast.parse(text)
    assert (checkout / "knights_homemade.py").read_text().endswith(HOMEMADE.read_text())
    assert (checkout / "engines").is_dir() and (checkout / "config.yml").read_text() == (
        ROOT / "lichess_bot" / "config.yml").read_text()
    (checkout / "config.yml").write_text("mine\n")
    again = _install(str(checkout), "--config")
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert (checkout / "homemade.py").read_text() == text and (checkout / "config.yml").read_text() == "mine\n"


def test_install_refuses_bad_targets_in_one_line(tmp_path):
    missing = _install(str(tmp_path / "nope"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no such directory" in missing.stderr
    not_bot = _install(str(tmp_path))
    assert not_bot.returncode == 2 and "not a lichess-bot checkout" in not_bot.stderr
    assert "Traceback" not in not_bot.stderr
    checkout = _fake_checkout(tmp_path)
    (checkout / "knights_homemade.py").write_text("# somebody else's\n")
    taken = _install(str(checkout))
    assert taken.returncode == 2 and "not written by this script" in taken.stderr
    assert (checkout / "knights_homemade.py").read_text() == "# somebody else's\n"
    assert "knights_homemade" not in (checkout / "homemade.py").read_text()


def test_the_config_example_has_no_token():
    text = (HOMEMADE.parent / "config.yml").read_text()
    assert 'token: ""' in text and "LICHESS_BOT_TOKEN" in text
    assert 'name: "KnightsKernels"' in text and 'protocol: "homemade"' in text and 'protocol: "uci"' in text
    assert "offer_draw_enabled: false" in text and "falls back" not in text
    launcher = HOMEMADE.parent / "knights-uci"
    assert launcher.read_text().startswith("#!/bin/sh") and "knights.cli uci" in launcher.read_text()


def _make_says(*variables: str, show: str = "@echo \"[$(PYTHON)]\"") -> subprocess.CompletedProcess[str]:
    """The Makefile's interpreter choice, evaluated by make itself (nothing is built)."""
    return subprocess.run(["make", "-s", "-C", str(ROOT), *variables, "--eval", f"probe-python: ; {show}",
                           "probe-python"], check=False, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(subprocess.run(["make", "--version"], check=False, capture_output=True).returncode != 0,
                    reason="no make")
def test_make_picks_a_supported_python(tmp_path):
    """lichess-bot's environment and the project's .venv need the same Python: 3.11-3.13.
    Before, requires-python refused 3.13 and the Makefile took plain `python3` whatever
    its version. Now `make` takes the first candidate that runs and is in the range, or
    says which one to install."""
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11,<3.14"
    too_old = tmp_path / "python3.10"
    too_old.write_text("#!/bin/sh\nexit 1\n")      # runs, but fails the version check
    too_old.chmod(0o755)
    chosen = _make_says(f"PYTHON_CANDIDATES={tmp_path / 'missing'} {too_old} {sys.executable}")
    assert chosen.stdout.strip() == f"[{sys.executable}]", chosen.stderr
    none = _make_says(f"PYTHON_CANDIDATES={tmp_path / 'missing'} {too_old}", show="@$(NEED_PYTHON)")
    assert none.returncode != 0 and "no Python 3.11-3.13 found" in none.stderr and "python3.11" in none.stderr
    named = _make_says(f"PYTHON={too_old}", show="@$(NEED_PYTHON)")
    assert named.returncode != 0 and f"PYTHON={too_old} is not a runnable Python 3.11-3.13" in named.stderr
