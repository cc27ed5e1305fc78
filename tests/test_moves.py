"""Move networks (source_SL): legal masks, the loss, the metrics, the four versions."""

from __future__ import annotations

import random

import chess
import numpy as np
import pytest
import torch
from torch import nn

from knights.board.arrays import board_from_arrays, parse_fens_full
from knights.data.chunks import Encoded, move_index
from knights.features.inputs import InputSpec
from knights.learn import moves, registry
from knights.learn.experiment import SAMPLE_DATA, held_out_metrics, run_version, version_task

SAMPLE = registry.REPO_ROOT / SAMPLE_DATA
START = chess.STARTING_FEN
E2E4 = chess.E2 * 64 + chess.E4


def encode(fens: list[str], ucis: list[str] | None = None) -> Encoded:
    parsed = parse_fens_full(fens)
    assert parsed["valid"].all()
    n = len(fens)
    ucis = ucis or [""] * n
    return Encoded(squares=parsed["squares"], white=parsed["white"].astype(np.int8),
                   check=np.array([chess.Board(f).is_check() for f in fens], dtype=np.int8),
                   capture=np.zeros(n, np.int8), target=np.zeros(n, np.float32),
                   move=np.array([move_index(u) for u in ucis], dtype=np.int16),
                   castling=parsed["castling"], ep=parsed["ep"])


def pairs(fen: str) -> set[int]:
    return {m.from_square * 64 + m.to_square for m in chess.Board(fen).legal_moves}


def random_positions(n: int, seed: int = 1) -> list[str]:
    """FENs met in seeded random games (castling rights, en passant, promotions)."""
    rng = random.Random(seed)
    fens: list[str] = []
    while len(fens) < n:
        b = chess.Board()
        while not b.is_game_over() and b.ply() < 160 and len(fens) < n:
            fens.append(b.fen())
            b.push(rng.choice(list(b.legal_moves)))
    return fens


# -- legal_mask ----------------------------------------------------------------------
def test_start_position_has_exactly_the_twenty_moves():
    mask = moves.legal_mask(encode([START]))
    assert mask.shape == (1, 4096) and mask.dtype == torch.bool
    expected = {f * 64 + f + d for f in range(chess.A2, chess.H2 + 1) for d in (8, 16)}
    expected |= {chess.B1 * 64 + chess.A3, chess.B1 * 64 + chess.C3, chess.G1 * 64 + chess.F3, chess.G1 * 64 + chess.H3}
    assert len(expected) == 20
    assert set(torch.nonzero(mask[0]).flatten().tolist()) == expected
    assert mask[0, E2E4]


def test_castling_rights_decide_castling_moves():
    with_rights = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"
    without = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w kq - 0 1"
    only_black = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b Qk - 0 1"
    mask = moves.legal_mask(encode([with_rights, without, only_black]))
    e1g1, e1c1 = chess.E1 * 64 + chess.G1, chess.E1 * 64 + chess.C1
    e8g8, e8c8 = chess.E8 * 64 + chess.G8, chess.E8 * 64 + chess.C8
    assert mask[0, e1g1] and mask[0, e1c1]
    assert not mask[1, e1g1] and not mask[1, e1c1]
    assert mask[2, e8g8] and not mask[2, e8c8]
    for row, fen in enumerate([with_rights, without, only_black]):
        assert set(torch.nonzero(mask[row]).flatten().tolist()) == pairs(fen)


def test_en_passant_only_with_the_square():
    with_ep = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"
    without = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3"
    mask = moves.legal_mask(encode([with_ep, without]))
    e5f6, e5d6 = chess.E5 * 64 + chess.F6, chess.E5 * 64 + chess.D6
    assert mask[0, e5f6] and not mask[1, e5f6]
    assert not mask[0, e5d6]   # d5 was not the pawn that just moved
    assert set(torch.nonzero(mask[0]).flatten().tolist()) == pairs(with_ep)


def test_promotions_share_one_cell():
    fen = "1n5k/P7/8/8/8/8/8/7K w - - 0 1"
    board = chess.Board(fen)
    assert len([m for m in board.legal_moves if m.promotion]) == 8   # a8=Q/R/B/N and axb8=Q/R/B/N
    mask = moves.legal_mask(encode([fen], ["a7a8q"]))
    assert mask[0, chess.A7 * 64 + chess.A8] and mask[0, chess.A7 * 64 + chess.B8]
    assert int(mask.sum()) == len(pairs(fen)) == board.legal_moves.count() - 6


def test_masks_match_python_chess_on_random_games_and_the_cache_is_exact():
    fens = random_positions(600)
    block = encode(fens)
    cache = moves.LegalMoveCache()
    mask = moves.legal_mask(block, cache)
    for row, fen in enumerate(fens):
        assert set(torch.nonzero(mask[row]).flatten().tolist()) == pairs(fen), fen
    computed = cache.computed
    assert computed == len(set(fens_without_counters(fens)))   # each distinct position once
    again = moves.legal_mask(block.take(np.arange(len(fens))[::-1].copy()), cache)
    assert cache.computed == computed and torch.equal(again, mask.flip(0))
    # the fast board rebuild is the shared one
    for b, i in zip(moves.boards(block), range(0, len(fens)), strict=False):
        ref = board_from_arrays(block.squares[i], block.white[i], block.castling[i], block.ep[i])
        assert b.fen() == ref.fen()


def fens_without_counters(fens: list[str]) -> list[str]:
    return [" ".join(f.split()[:4]) for f in fens]


def test_cache_bound_restarts_cleanly():
    fens = random_positions(50, seed=3)
    cache = moves.LegalMoveCache(max_entries=30)
    first = moves.legal_mask(encode(fens[:20]), cache)
    whole = moves.legal_mask(encode(fens), cache)    # overflows: starts again, still exact
    assert torch.equal(whole[:20], first) and len(cache) <= 50


# -- MoveTask ------------------------------------------------------------------------
SPEC = InputSpec(planes="none", scalars=("turn", "check"))


def test_loss_formula_and_rows_without_a_move():
    block = encode([START, START], ["e2e4", ""])
    out = torch.zeros(2, 4096)
    out[0, E2E4] = 0.5                       # legal, played: (0.5 - 1)^2
    out[0, 0] = 2.0                          # a1a1, illegal: 2^2 + penalty * 2^2
    out[0, 1] = -3.0                         # illegal but negative: MSE only
    out[1, 5] = 100.0                        # row without a move: ignored
    task = moves.MoveTask(SPEC, penalty=10.0)
    mse, illegal = task.terms(out, block, torch.device("cpu"))
    assert float(mse) == pytest.approx((0.25 + 4 + 9) / 4096)
    assert float(illegal) == pytest.approx(4 / 4096)
    assert float(task.loss(out, block, torch.device("cpu"))) == pytest.approx((13.25 + 40) / 4096)
    none = encode([START], [""])
    assert task.loss(torch.ones(1, 4096, requires_grad=True), none, torch.device("cpu")).item() == 0.0


def test_a_large_penalty_drives_output_off_illegal_moves():
    fens = random_positions(16, seed=7)
    board_moves = [next(iter(chess.Board(f).legal_moves)).uci() for f in fens]
    block = encode(fens, board_moves)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(66, 4096))
    with torch.no_grad():
        model[0].bias.fill_(0.3)             # start with mass everywhere
    start = {k: v.clone() for k, v in model.state_dict().items()}
    x = SPEC.tensors(block)[1]
    dev = torch.device("cpu")

    def illegal_after(penalty: float) -> tuple[float, float]:
        model.load_state_dict(start)
        task = moves.MoveTask(SPEC, penalty=penalty)
        opt = torch.optim.SGD(model.parameters(), lr=0.005)
        before = task.terms(model(x), block, dev)[1].item()
        for _ in range(10):
            loss = task.loss(model(x), block, dev)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return before, task.terms(model(x), block, dev)[1].item()

    before, large = illegal_after(1000.0)
    _, none = illegal_after(0.0)
    assert large < 0.2 * before and none > 0.8 * before


# -- move_metrics --------------------------------------------------------------------
class AlwaysE2E4(nn.Module):
    def forward(self, planes: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(extra.shape[0], 4096)
        out[:, E2E4] = 1.0
        return out


def test_metrics_of_a_model_that_always_plays_e2e4():
    fens = random_positions(300, seed=5)
    played = [next(iter(chess.Board(f).legal_moves)).uci() for f in fens]
    played[0] = "e2e4"                       # fens[0] is the start position
    block = encode(fens, played)
    block.move[-1] = -1                      # one row without a move
    legal = np.array([E2E4 in pairs(f) for f in fens])
    assert 0 < legal.sum() < len(fens)
    m = moves.move_metrics(AlwaysE2E4(), SPEC, block, batch=64)
    assert m["rows"] == 300 and m["rows_with_move"] == 299
    assert m["legal_share"] == legal.mean()
    assert m["top1_played"] == pytest.approx(sum(p == "e2e4" for p in played[:-1]) / 299)


# -- the versions --------------------------------------------------------------------
SL = registry.all_versions("SL")


def test_four_versions_with_the_original_facts():
    assert [v.number for v in SL] == [1, 2, 3, 4]
    libs = {v.number: v.library for v in SL}
    assert [libs[i].PENALTY for i in (1, 2, 3, 4)] == [5000, 5000, 5000, 250]
    assert [libs[i].TRAIN.lr for i in (1, 2, 3, 4)] == [0.001, 0.001, 0.003, 0.75]
    assert all(lib.TRAIN.optimizer == "sgd" and lib.TRAIN.momentum == 0.9 and lib.TRAIN.epochs == 10
               for lib in libs.values())
    assert all("j" not in lib.DATA["train"] + lib.DATA["val"] for lib in libs.values())
    # widths: V1 FC(66, ...), V2/V3 FC(64*8*8+2, ...), V4 FC(64+2, ...)
    widths = [v.build().n_flat + libs[v.number].INPUTS.n_extra for v in SL]
    assert widths == [66, 64 * 8 * 8 + 2, 64 * 8 * 8 + 2, 64 + 2]
    assert isinstance(v3 := registry.get("SL/v3").build().head[1], nn.Tanh), v3


@pytest.mark.parametrize("version", SL, ids=[v.name for v in SL])
def test_version_forward_loss_and_metrics(version):
    lib = version.library
    block = encode(random_positions(5, seed=11), ["e2e4"] + [""] * 4)
    model = version.build()
    with torch.no_grad():
        out = model(*lib.INPUTS.tensors(block))
    assert out.shape == (5, 4096) and torch.isfinite(out).all()
    task = version_task(version)
    assert isinstance(task, moves.MoveTask) and task.penalty == lib.PENALTY
    assert torch.isfinite(task.loss(out, block, torch.device("cpu")))
    metrics = held_out_metrics(version, model, block)
    assert metrics["rows"] == 5 and 0 <= metrics["legal_share"] <= 1


# -- end to end on the committed sample ---------------------------------------------------
@pytest.mark.slow
def test_sl_v1_quick_run_end_to_end(tmp_path):
    if not (SAMPLE / "Sample_l").exists():
        pytest.fail(f"committed sample missing: {SAMPLE}/Sample_a..Sample_l")
    result = run_version("SL/v1", quick=True, train="a", out_dir=tmp_path, progress=False)
    model, meta = registry.get("SL/v1").load(tmp_path)
    assert meta["test"] == result.meta["test"]
    assert 0 <= meta["test"]["legal_share"] <= 1 and meta["test"]["rows"] > 0
    assert meta["data"]["train"]["letters"] == "a"
    from knights.data.cache import ChunkCache, load_encoded
    from knights.data.chunks import select_chunks

    test = load_encoded(select_chunks(SAMPLE, "k"), ChunkCache(tmp_path / "cache"))
    with torch.no_grad():
        out = model(*registry.get("SL/v1").library.INPUTS.tensors(test.take(slice(0, 256))))
    assert out.shape == (256, 4096) and torch.isfinite(out).all()
    # every recorded move of the sample is legal on the rebuilt board
    has = test.move >= 0
    mask = moves.legal_mask(test)
    assert bool(mask[torch.from_numpy(np.flatnonzero(has)), torch.from_numpy(test.move[has].astype(np.int64))].all())
