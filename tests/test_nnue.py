"""EL V13's pieces: sparse features seen from each side, the network, the win-probability loss."""

import chess
import numpy as np
import pytest
import torch

from knights.board.positions import positions_from_boards
from knights.features.sparse import KING_ZONE, MAX_PIECES, PAD, SparseSpec, feature_index, view_features
from knights.learn import registry
from knights.learn.nnue import BucketedSparseNet, SparseNet
from knights.learn.targets import PAWN_LOGIT, pawns_from_probability, win_probability
from knights.learn.training import EvalTask, TrainConfig, WinProbTask, fit

FENS = [
    chess.STARTING_FEN,
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "8/5k2/8/3P4/8/8/5K2/8 b - - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
]


def boards() -> list[chess.Board]:
    return [chess.Board(f) for f in FENS]


def test_feature_index_counts_each_piece_once_from_each_side() -> None:
    white_view, black_view = view_features(positions_from_boards(boards()).squares)
    for board, w, b in zip(boards(), white_view, black_view, strict=True):
        n = len(board.piece_map())
        assert (w != PAD).sum() == n and (b != PAD).sum() == n
        assert len(set(w[w != PAD].tolist())) == n      # no two pieces share a feature
    # White's king on e1 (a8 = 0 numbering: square 60) is "own king on e1" from White's view,
    # and Black's king on e8 (square 4) is the same feature from Black's view
    assert feature_index(6, 60, True) == feature_index(-6, 4, False) == 5 * 64 + 60
    assert feature_index(-6, 4, True) == 384 + 5 * 64 + 4


def test_view_features_list_the_pieces_in_board_order_then_pads() -> None:
    squares = positions_from_boards(boards()).squares
    empty = np.zeros((1, 64), dtype=squares.dtype)
    white_view, black_view = view_features(np.concatenate([squares, empty]))
    for row, w, b in zip(np.concatenate([squares, empty]), white_view, black_view, strict=True):
        occupied = np.flatnonzero(row)
        assert w[:len(occupied)].tolist() == [feature_index(int(row[s]), int(s), True) for s in occupied]
        assert b[:len(occupied)].tolist() == [feature_index(int(row[s]), int(s), False) for s in occupied]
        assert (w[len(occupied):] == PAD).all() and (b[len(occupied):] == PAD).all()
    too_many = np.ones((1, 64), dtype=squares.dtype)
    too_many[0, :MAX_PIECES] = 0
    view_features(too_many)        # 32 pieces fill the lists exactly
    too_many[0, 0] = 1
    with pytest.raises(ValueError, match="more than 32 pieces"):
        view_features(too_many)


def test_mirrored_position_has_the_other_sides_features() -> None:
    for board in boards():
        mirrored = board.mirror()     # colours swapped, ranks flipped, the other side to move
        a = SparseSpec().encode(positions_from_boards([board]))
        b = SparseSpec().encode(positions_from_boards([mirrored]))
        assert sorted(a[0][0].tolist()) == sorted(b[0][0].tolist())   # the mover sees the same
        assert sorted(a[1][0].tolist()) == sorted(b[1][0].tolist())
        assert a[2][0] != b[2][0]


def test_king_zones_add_each_piece_again_in_its_own_kings_zone() -> None:
    """With king_zones every piece is its plain feature and that feature moved up by 768 times
    one plus the zone where the perspective's own king stands (castled short on the back rank, in
    the centre of the second rank, up the board, ...); colours mirrored see the same lists."""
    spec = SparseSpec(king_zones=True)
    assert spec.n_features == 768 * 9 and SparseSpec().n_features == 768
    plain = SparseSpec().encode(positions_from_boards(boards()))
    zoned = spec.encode(positions_from_boards(boards()))
    for view in (0, 1):
        p, z = plain[view], zoned[view]
        assert z.shape == (len(FENS), 2 * MAX_PIECES)
        assert ((z[:, :MAX_PIECES] == spec.n_features) == (p == PAD)).all()     # the same pads, renamed
        assert (z[:, :MAX_PIECES][p != PAD] == p[p != PAD]).all()              # the plain features first
        shift = z[:, MAX_PIECES:] - z[:, :MAX_PIECES]
        for row, pieces in zip(shift, p != PAD, strict=True):
            assert len(set(row[pieces].tolist())) == 1                       # one zone for all the pieces
    # the start position: both kings on their own back rank's centre (zone 1); the ending of FENS[2],
    # White's king on f2 (second rank, kingside: zone 5), Black's on f7 = f2 seen from Black (zone 5),
    # the fourth: both kings uncastled on e1/e8 (zone 1)
    def zone(view: np.ndarray) -> int:
        return int(view[MAX_PIECES] - view[0]) // 768 - 1
    assert [zone(row) for row in zoned[0]] == [1, 1, 5, 1]
    assert KING_ZONE[chess.square_mirror(chess.G1)] == 2     # castled short (a8 = 0 numbering: g1 is 62)
    swap = np.array([2, 1, 0, 5, 4, 3, 6, 7])    # files mirrored: queenside and kingside change places
    assert (KING_ZONE.reshape(8, 8)[:, ::-1] == swap[KING_ZONE.reshape(8, 8)]).all()
    for board in boards():
        a = spec.encode(positions_from_boards([board]))
        b = spec.encode(positions_from_boards([board.mirror()]))
        assert sorted(a[0][0].tolist()) == sorted(b[0][0].tolist())
        assert sorted(a[1][0].tolist()) == sorted(b[1][0].tolist())


def test_a_network_on_king_zones_sums_both_columns_of_every_piece() -> None:
    """The accumulator of a zoned network is, for every piece, its plain column plus its
    zone's column; only the columns of the pieces present (in the kings' zones) learn."""
    torch.manual_seed(4)
    spec = SparseSpec(king_zones=True)
    net = SparseNet(hidden=8, head=(4,), n_features=spec.n_features)
    mover, other, white = spec.tensors(positions_from_boards(boards()))
    acc = net.accumulator(mover)
    dense = torch.stack([net.columns[row[row != spec.n_features]].sum(0) for row in mover]) + net.bias
    assert torch.allclose(acc, dense, atol=1e-5)
    net(mover, other, white).sum().backward()
    assert net.columns.grad is not None
    used = torch.unique(torch.cat([mover, other]))
    learned = torch.nonzero(net.columns.grad.abs().sum(1) > 0).flatten()
    assert set(learned.tolist()) <= set(used.tolist()) - {spec.n_features}
    assert learned.numel() > 2 * MAX_PIECES
    plain = SparseSpec().tensors(positions_from_boards(boards()))
    with pytest.raises(ValueError, match="another SparseSpec"):      # a spec that is not the network's
        net(*plain)
    with pytest.raises(ValueError, match="another SparseSpec"):
        SparseNet(hidden=8, head=(4,))(mover, other, white)
    kingless = positions_from_boards([chess.Board("8/8/8/8/8/8/8/K7 w - - 0 1")])
    kingless.squares[0][kingless.squares[0] == 6] = 0
    with pytest.raises(ValueError, match="without both kings"):
        spec.encode(kingless)
    bucketed = BucketedSparseNet(hidden=8, head=(4,), buckets=8, n_features=spec.n_features)
    assert bucketed.bucket(mover).tolist() == [7, 7, 0, 7]           # men counted on the plain half
    net.eval()
    with torch.no_grad():
        mirrored = net(*spec.tensors(positions_from_boards([b.mirror() for b in boards()])))
        assert torch.allclose(net(mover, other, white), -mirrored, atol=1e-6)


def test_network_answers_pawns_for_white_and_is_colour_symmetric() -> None:
    torch.manual_seed(1)
    net = SparseNet(hidden=16, head=(8, 8)).eval()
    spec = SparseSpec()
    with torch.no_grad():
        own = net(*spec.tensors(positions_from_boards(boards())))
        mirrored = net(*spec.tensors(positions_from_boards([b.mirror() for b in boards()])))
    assert own.shape == (len(FENS),)
    assert torch.allclose(own, -mirrored, atol=1e-6)
    assert float(own.abs().max()) <= 10.0


def test_a_bucketed_network_judges_each_position_by_the_head_of_its_men() -> None:
    """Eight heads by men on the board: 2-4 men head 0, ..., 29-32 head 7; every position's
    value is its own head on the shared accumulators, colour symmetry holds, and only the
    heads of the batch's positions learn."""
    torch.manual_seed(3)
    net = BucketedSparseNet(hidden=16, head=(8, 8), buckets=8)
    spec = SparseSpec()
    mover, other, white = spec.tensors(positions_from_boards(boards()))
    assert net.bucket(mover).tolist() == [7, 7, 0, 7]        # 32, 32, 3 and 30 men
    mover_rows = torch.full((6, MAX_PIECES), PAD, dtype=mover.dtype)
    for i, men in enumerate((2, 4, 5, 8, 9, 32)):
        mover_rows[i, :men] = torch.arange(men)
    assert net.bucket(mover_rows).tolist() == [0, 0, 1, 1, 2, 7]
    z = net.logit(mover, other)
    both = net.accumulator(torch.cat([mover, other]))
    x = torch.cat([both[:4], both[4:]], dim=1).clamp(0, 1)
    for i, b in enumerate(net.bucket(mover).tolist()):
        assert torch.allclose(z[i], net.heads[b](x[i:i + 1]).squeeze(), atol=1e-6)
    z.sum().backward()
    learned = [h[0].weight.grad is not None and bool(h[0].weight.grad.abs().sum() > 0) for h in net.heads]
    assert learned == [True, False, False, False, False, False, False, True]
    net.eval()
    with torch.no_grad():
        own = net(mover, other, white)
        mirrored = net(*spec.tensors(positions_from_boards([b.mirror() for b in boards()])))
    assert torch.allclose(own, -mirrored, atol=1e-6)


def test_sparse_product_equals_a_dense_sum_of_columns_and_its_gradient() -> None:
    torch.manual_seed(2)
    net = SparseNet(hidden=8, head=(4,))
    feats = torch.from_numpy(view_features(positions_from_boards(boards()).squares)[0].astype(np.int64))
    acc = net.accumulator(feats)
    dense = torch.stack([net.columns[row[row != PAD]].sum(0) for row in feats]) + net.bias
    assert torch.allclose(acc, dense, atol=1e-6)
    acc.sum().backward()
    counts = torch.bincount(feats[feats != PAD], minlength=768).float()
    assert net.columns.grad is not None
    assert torch.allclose(net.columns.grad, counts[:, None].expand(-1, 8))
    # a different upstream gradient per row: each column gets the sum over the rows that hold it
    net.columns.grad = None
    upstream = torch.randn(len(feats), 8)
    net.accumulator(feats).backward(upstream)
    one_hot = torch.zeros(len(feats), 769)
    one_hot.scatter_(1, feats, 1.0)
    assert torch.allclose(net.columns.grad, one_hot[:, :768].t() @ upstream, atol=1e-5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_sparse_product_on_a_gpu_equals_the_cpu_and_trains() -> None:
    """The CUDA path (sparse matrices on the GPU, the sort of int16 indices) gives the CPU's
    accumulator, output and gradients; and fit() runs there."""
    from knights.board.arrays import material_balance
    from knights.data.chunks import Encoded

    torch.manual_seed(3)
    cpu = SparseNet(hidden=16, head=(8,))
    gpu = SparseNet(hidden=16, head=(8,))
    gpu.load_state_dict(cpu.state_dict())
    gpu.cuda()
    pos = positions_from_boards(boards() * 50)
    spec = SparseSpec()
    upstream = torch.randn(len(pos))
    for net, device in ((cpu, "cpu"), (gpu, "cuda")):
        net(*spec.tensors(pos, device)).backward(upstream.to(device))
    assert torch.allclose(cpu(*spec.tensors(pos)), gpu(*spec.tensors(pos, "cuda")).cpu(), atol=1e-5)
    for (name, a), (_, b) in zip(cpu.named_parameters(), gpu.named_parameters(), strict=True):
        assert a.grad is not None and b.grad is not None, name
        assert torch.allclose(a.grad, b.grad.cpu(), atol=1e-4), name
    cfg = TrainConfig(optimizer="adam", lr=0.01, epochs=2, batch_size=64, flip_files=True)
    n = len(pos)
    data = Encoded(pos.squares, pos.white, pos.check, pos.capture, material_balance(pos.squares).astype(np.float32),
                   np.full(n, -1, np.int16), np.zeros(n, np.int8), np.full(n, -1, np.int8))
    history = fit(SparseNet(hidden=16, head=(8,)), WinProbTask(spec), data, None, cfg, device="cuda", progress=False)
    assert history.device.startswith("cuda") and all(np.isfinite(history.train_loss))


def test_win_probability_loss_is_zero_on_target_and_small_for_decided_positions() -> None:
    task = WinProbTask(SparseSpec())
    block = type("B", (), {"target": np.array([0.0, 8.0, -10.0], np.float32)})()
    exact = task.loss(torch.tensor([0.0, 8.0, -10.0]), block, torch.device("cpu"))   # type: ignore[arg-type]
    one_off_level = task.loss(torch.tensor([1.0, 8.0, -10.0]), block, torch.device("cpu"))  # type: ignore[arg-type]
    one_off_won = task.loss(torch.tensor([0.0, 9.0, -10.0]), block, torch.device("cpu"))  # type: ignore[arg-type]
    assert float(exact) == 0.0
    assert float(one_off_level) > 10 * float(one_off_won)   # a pawn at 0 costs far more than at +8
    p = win_probability(np.array([-3.0, 0.0, 2.0]))
    assert np.allclose(pawns_from_probability(p), [-3.0, 0.0, 2.0])
    assert abs(float(win_probability(np.array([1.0]))[0]) - 1 / (1 + np.exp(-PAWN_LOGIT))) < 1e-12


def test_training_in_win_probability_space_learns_material() -> None:
    """A few epochs on positions labelled by material: the loss falls and the sign is learned."""
    from knights.board.arrays import material_balance
    from knights.data.chunks import Encoded

    rng = np.random.default_rng(0)
    games = []
    for _ in range(60):
        b = chess.Board()
        for _ in range(int(rng.integers(4, 60))):
            moves = list(b.legal_moves)
            if not moves:
                break
            b.push(moves[int(rng.integers(len(moves)))])
        games.append(b)
    pos = positions_from_boards(games)
    n = len(games)
    target = material_balance(pos.squares).astype(np.float32)
    data = Encoded(pos.squares, pos.white, pos.check, pos.capture, target, np.full(n, -1, np.int16),
                   np.zeros(n, np.int8), np.full(n, -1, np.int8))
    torch.manual_seed(0)
    net = SparseNet(hidden=32, head=(16,))
    cfg = TrainConfig(epochs=40, batch_size=32, lr=0.01, optimizer="adam")
    history = fit(net, WinProbTask(SparseSpec()), data, data, cfg, progress=False, device="cpu")
    assert history.val_loss[-1] < 0.25 * history.val_loss[0]
    with torch.no_grad():
        pred = net.eval()(*SparseSpec().tensors(pos)).numpy()
    decided = np.abs(target) >= 2
    assert np.mean(np.sign(pred[decided]) == np.sign(target[decided])) > 0.9
    assert isinstance(EvalTask(SparseSpec()), EvalTask)


def test_v13_is_a_version_built_from_its_library() -> None:
    v = registry.get("EL/v13")
    net = v.build()
    assert isinstance(net, SparseNet)
    assert v.library.TARGET == "win_probability"
    assert MAX_PIECES == 32


def test_flip_files_trains_on_mirrors_of_the_rows_that_cannot_castle_only() -> None:
    """``TrainConfig.flip_files`` changes what a run learns from rows without castling rights,
    and leaves a run on rows that all keep a right exactly as it was."""
    from knights.data.chunks import Encoded

    pos = positions_from_boards(boards())
    n = len(FENS)
    target = np.linspace(-1, 1, n).astype(np.float32)

    def trained(castling: int, flip: bool) -> torch.Tensor:
        data = Encoded(pos.squares, pos.white, pos.check, pos.capture, target, np.full(n, -1, np.int16),
                       np.full(n, castling, np.int8), np.full(n, -1, np.int8))
        torch.manual_seed(0)
        net = SparseNet(hidden=8, head=(4,))
        fit(net, WinProbTask(SparseSpec()), data, None,
            TrainConfig(epochs=6, batch_size=2, lr=0.01, flip_files=flip), progress=False, device="cpu")
        return net.columns.detach().clone()

    assert torch.equal(trained(castling=1, flip=True), trained(castling=1, flip=False))
    assert not torch.equal(trained(castling=0, flip=True), trained(castling=0, flip=False))


def test_a_network_widened_from_a_shipped_version_starts_as_that_version() -> None:
    from knights.learn.experiment import warm_start
    from knights.learn.nnue import widened

    torch.manual_seed(2)
    parent = SparseNet(hidden=256, head=(32, 32))
    assert len(warm_start(parent, "EL/v25", registry.REPO_ROOT / "models_EL")) == len(parent.state_dict())
    wide = SparseNet(hidden=512, head=(32, 32))
    copied = warm_start(wide, "EL/v25", registry.REPO_ROOT / "models_EL")
    assert set(copied) == set(wide.state_dict())
    x = SparseSpec().tensors(positions_from_boards(boards()))
    with torch.no_grad():
        assert torch.allclose(parent.eval()(*x), wide.eval()(*x), atol=1e-5)
        assert torch.equal(wide.columns[:, :256], parent.columns)
        assert float(wide.head[0].weight[:, 256:512].abs().max()) == 0.0     # the new units weigh nothing yet
    # and they learn: one step gives their head weights a gradient
    wide.train()
    wide(*x).sum().backward()
    assert float(wide.head[0].weight.grad[:, 256:512].abs().max()) > 0.0
    with pytest.raises(ValueError, match="cannot be widened"):
        widened(wide.state_dict(), SparseNet(hidden=128, head=(32, 32)))
    with pytest.raises(ValueError, match="only the accumulator"):
        widened(SparseNet(hidden=8, head=(4,)).state_dict(), SparseNet(hidden=16, head=(8,)))
