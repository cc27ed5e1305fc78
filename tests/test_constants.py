"""Each of the engine's numbers is defined once (knights.engine.constants, the piece table in knights.board.pieces),
and the compiled search holds the same values as the module it reads them from."""

from __future__ import annotations

import ast
import math
from pathlib import Path

from knights.board.pieces import CENTIPAWNS
from knights.engine import constants

PACKAGE = Path(__file__).resolve().parent.parent / "knights"
NAMES = {name for name, value in vars(constants).items() if name.isupper() and isinstance(value, int | float)}
PIECE_ROWS = ((100, 300, 300, 500, 900), (100, 310, 325, 490, 920), (100, 320, 330, 500, 950), (1, 3, 3, 5, 9))


def assignments() -> list[tuple[str, str, int]]:
    """Every module-level assignment in the package: (module file, name, line)."""
    out = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) else []
            out += [(str(path.relative_to(PACKAGE)), t.id, node.lineno) for t in targets if isinstance(t, ast.Name)]
    return out


def test_no_module_defines_an_engine_constant_again():
    again = [f"{path}:{line} {name}" for path, name, line in assignments()
             if name in NAMES and path != "engine/constants.py"]
    assert not again, f"defined again outside knights/engine/constants.py: {again}"


def test_no_module_writes_a_table_of_piece_values_again():
    """A run of five piece values in order (pawn to queen), in centipawns or pawns, is written only in
    knights/board/pieces.py."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "pieces.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Tuple | ast.List):
                numbers = tuple(e.value for e in node.elts if isinstance(e, ast.Constant)
                                and isinstance(e.value, int | float))
                if any(row == numbers[i:i + 5] for row in PIECE_ROWS for i in range(len(numbers) - 4)):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not found, found


def test_the_compiled_search_holds_the_constants_it_reads():
    from knights.engine import compiled

    assert compiled.frozen_constants() == (
        constants.INF, constants.MATE, constants.MATE_BOUND, constants.MAX_PLY, constants.DELTA,
        constants.FUTILITY_MARGIN, constants.REVERSE_FUTILITY_MARGIN, constants.REVERSE_FUTILITY_DEPTH,
        constants.NULL_MIN_DEPTH, constants.NULL_REDUCTION, constants.LMR_AFTER, CENTIPAWNS[2], constants.KING_SEE,
        constants.LMP_DEPTH, constants.LMP_BASE,
        int(constants.LMR_BASE + math.log(8) * math.log(20) / constants.LMR_DIVISOR), constants.HISTORY_LIMIT,
        constants.IIR_DEPTH, constants.LMR_HISTORY, constants.NULL_DEPTH_STEP, constants.NULL_MARGIN,
        constants.NULL_MARGIN_PLIES, constants.SEE_PRUNE_DEPTH, constants.SEE_QUIET_MARGIN,
        constants.SEE_CAPTURE_MARGIN, constants.MOPUP_FROM, constants.MOPUP_EDGE, constants.MOPUP_CLOSE)


def test_a_changed_constant_changes_the_cache_key(monkeypatch):
    key = constants.cache_key()
    monkeypatch.setattr(constants, "DELTA", constants.DELTA + 1)
    assert constants.cache_key() != key
