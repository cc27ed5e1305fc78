"""Sibling ranking (knights.learn.siblings, EL/v26): the children it compares, its cross-entropy, its task."""

import chess
import numpy as np
import pytest
import torch

from knights.board.positions import positions_from_boards
from knights.data.chunks import select_chunks
from knights.features.attacks import quiet
from knights.features.sparse import SparseSpec
from knights.learn import registry
from knights.learn.experiment import run_version
from knights.learn.nnue import SparseNet
from knights.learn.siblings import RankedNet, SiblingTask, fitted_scale, gather, played_positions, siblings_of
from knights.learn.training import WinProbTask

ITALIAN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
HANGING = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5Q2/PPPP1PPP/RNB1KBNR w KQkq - 0 2"   # Qxf7+ is check: not quiet


def test_siblings_are_the_quiet_children_with_the_played_one_marked():
    board = chess.Board(ITALIAN)
    move = chess.Move.from_uci("f1b5")
    family = siblings_of([(board, move)])
    spec = SparseSpec()
    children = []
    for m in board.legal_moves:
        b = board.copy()
        b.push(m)
        children.append(b)
    pos = positions_from_boards(children)
    calm = quiet(pos.squares, pos.white, pos.check)
    assert len(family) == 1 and family.first.tolist() == [0, int(calm.sum())]
    stm, _, _ = spec.encode(pos)
    assert (np.sort(family.stm, axis=1) == np.sort(stm[calm], axis=1)).all()     # the quiet ones, in move order
    moves = list(board.legal_moves)
    assert [moves[i] for i in family.move_index] == [m for m, c in zip(moves, calm, strict=True) if c]
    after = board.copy()
    after.push(move)
    mine, _, _ = spec.encode(positions_from_boards([after]))
    assert (np.sort(family.stm[family.played[0]]) == np.sort(mine[0])).all()


def test_a_parent_whose_move_is_not_quiet_is_left_out_and_an_illegal_move_is_refused():
    board = chess.Board(HANGING)
    family = siblings_of([(board, chess.Move.from_uci("f3f7")), (chess.Board(ITALIAN), chess.Move.from_uci("f1c4"))])
    assert len(family) == 1                                   # only the Italian's parent stays
    after = chess.Board(ITALIAN)
    after.push(chess.Move.from_uci("f1c4"))
    mine, _, _ = SparseSpec().encode(positions_from_boards([after]))
    assert (np.sort(family.stm[family.played[0]]) == np.sort(mine[0])).all()   # and its played child is Bc4's
    with pytest.raises(ValueError, match="e2e5 is not a legal move"):
        siblings_of([(chess.Board(ITALIAN), chess.Move.from_uci("e2e5"))])
    assert len(siblings_of([])) == 0


def test_cross_entropy_is_each_parents_softmax_toward_the_played_child():
    torch.manual_seed(0)
    boards = [chess.Board(ITALIAN), chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")]
    family = siblings_of([(boards[0], chess.Move.from_uci("f1b5")), (boards[1], chess.Move.from_uci("d2d3"))])
    ranked = RankedNet(SparseNet(hidden=16, head=(8,)), scale=3.0)
    stm, other, lens, played = family.batch(np.arange(2))
    got = ranked.cross_entropy(stm, other, lens, played).detach()
    z = ranked.net.logit(stm, other).detach().numpy()
    for p in range(2):
        s = -z[family.first[p]:family.first[p + 1]] * 3.0
        want = np.log(np.exp(s - s.max()).sum()) + s.max() - s[family.played[p]]
        assert float(got[p]) == pytest.approx(float(want), rel=1e-4)


def test_a_trained_network_scores_a_free_queen_highest_and_the_temperature_is_fitted():
    """The sign, with a real network: Black's queen stands on d5 where White's e-pawn takes it for nothing; among
    the quiet children, EL/v25 must put the one after exd5 first by far."""
    board = chess.Board("rnb1kbnr/ppp1pppp/8/3q4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3")
    family = siblings_of([(board, chess.Move.from_uci("e4d5"))])
    net, _ = registry.get("EL/v25").load()
    stm, other, lens, played = family.batch(np.arange(1))
    with torch.inference_mode():
        loss = RankedNet(net, scale=4.0).cross_entropy(stm, other, lens, played)
    assert float(loss[0]) < 0.1                               # exd5 is the network's move, by far
    scale = fitted_scale(net, siblings_of(list(played_positions(select_chunks("data/sample", "a")))[:200]))
    assert 0.3 < scale < 30                                   # inside the grid, not stuck at an end


def test_sibling_task_adds_the_weighted_cross_entropy_in_training_only():
    torch.manual_seed(0)
    pairs = list(played_positions(select_chunks("data/sample", "a")))[:60]
    family = siblings_of(pairs)
    assert len(family) > 10
    from knights.data.cache import ChunkCache, load_encoded

    block = load_encoded(select_chunks("data/sample", "b"), ChunkCache()).take(np.arange(64))
    ranked = RankedNet(SparseNet(hidden=16, head=(8,)))
    task = SiblingTask(SparseSpec(), siblings=family, weight=0.5, per_batch=8, seed=1)
    inputs = task.inputs(block, torch.device("cpu"))
    assert len(inputs) == 7 and len(inputs[5]) == 8            # values' three, then eight parents' children
    ranked.train()
    out = ranked(*inputs)
    value = WinProbTask(SparseSpec()).loss(out[:64], block, torch.device("cpu"))
    assert out.shape == (64 + 8,)
    want = (value + 0.5 * out[64:].mean()).detach()
    assert float(task.loss(out, block, torch.device("cpu")).detach()) == pytest.approx(float(want))
    ranked.eval()
    assert ranked(*inputs).shape == (64,)                        # validation: the value loss alone
    again = SiblingTask(SparseSpec(), siblings=family, weight=0.5, per_batch=8, seed=1).inputs(block, "cpu")
    assert torch.equal(again[3], inputs[3])                      # the parents drawn follow the seed


def test_a_ranked_version_trains_and_records_its_ranking(tmp_path):
    """EL/v26's recipe on the committed sample (a quick run shows the mechanics): the shipped file is the plain
    network, the run's record says how many parents it compared and the temperature it learned."""
    assert registry.get("EL/v26").library.RANKING.weight > 0
    result = run_version("EL/v26", quick=True, train="a-b", epochs=1, out_dir=tmp_path, progress=False)
    info = result.meta["ranking"]
    assert info["parents"] > 100 and info["children"] >= 2 * info["parents"] and info["folders"] == ["data/sample"]
    assert 0.3 < info["starting_scale"] < 30 and info["learned_scale"] != info["starting_scale"]   # it learned
    assert set(torch.load(result.weights, weights_only=True)) == set(SparseNet(hidden=256, head=(32, 32)).state_dict())
    assert "sibling cross-entropy" in result.meta["loss"]["train"]
    assert gather(select_chunks("data/sample", "a"), 5, progress=False).first[-1] > 0


def test_a_checkpoint_is_tied_to_the_ranking():
    """Changing the ranking's weight (or its parents) must not resume another run's checkpoint."""
    from knights.learn.training import TrainConfig, config_key

    family = siblings_of([(chess.Board(ITALIAN), chess.Move.from_uci("f1b5"))])
    model = RankedNet(SparseNet(hidden=16, head=(8,)))
    cfg = TrainConfig()
    keys = {config_key(cfg, model, 100, SiblingTask(SparseSpec(), siblings=family, weight=w)) for w in (0.01, 0.02)}
    assert len(keys) == 2
    assert config_key(cfg, model, 100, WinProbTask(SparseSpec())) not in keys
