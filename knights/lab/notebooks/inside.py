"""``notebooks/inside_the_networks.ipynb``: the shipped networks opened up, step by step.

Where a version's notebook calls ``run_version`` and shows what came out, this one does
by hand what the library does for it, and asserts that both agree:

* EL/v10 (dense): a FEN becomes the input planes and extras (drawn as 8x8 images), one
  batch goes through the network with the shape after every layer (forward hooks), the
  loss is computed by hand and equals :class:`knights.learn.training.EvalTask`'s, one
  Adam step taken by hand equals what :func:`knights.learn.training.fit` does with the
  same batch; then the gradient printed (the output bias's has a closed form, checked), the
  loss before and after that step beside plain gradient steps of growing size, a short
  training loop from random weights with its loss curve, and Adam's second step by hand
  (its moment estimates equal ``torch.optim.Adam``'s);
* EL/v13 (NNUE-style): the sparse features of a position in words, the accumulator
  summed by hand, the whole forward pass by hand, the win-probability loss
  (:class:`~knights.learn.training.WinProbTask`) by hand, and the accumulator updated
  after a move (old square out, new square in, the captured piece out) equal to a full
  recomputation, for every legal move of the position.

Its cells are the template below (:func:`knights.lab.notebooks.build.build`, name
``inside_the_networks``); ``knights notebook --write --execute inside_the_networks``
rebuilds the committed copy with its outputs. It reads the shipped weights and the
committed sample only, and runs in a minute or two on a CPU.
"""

from __future__ import annotations

TITLE = "Inside the networks: one position, one batch, one step, by hand"

INTRO = """The version notebooks train a network with one call and show what came out. This one opens two \
shipped networks and does by hand what the library does for them, asserting at each step that the two agree:

1. **EL/v10**, a dense network (two 3x3 convolutions and a hidden layer): a position (FEN) becomes its input \
planes, drawn as 8x8 images; one batch goes through the network with the shape printed after every layer; the \
loss is computed by hand and equals the training loop's; one optimiser step (Adam) is taken by hand and equals \
what `knights.learn.training.fit` does with the same batch. Then the gradient itself, the loss before and after the \
step (beside plain gradient steps of growing size), a short training loop from random weights with its falling \
loss curve, and Adam's *second* step, where its moment estimates start to matter.
2. **EL/v13**, an efficiently updatable network in the style of Stockfish's NNUE: the same position as a list of \
sparse features, each in words ("own knight on f3"); the accumulator summed by hand; the whole forward pass by hand; \
and the accumulator *updated* after a move (take the moved piece's old column out, put its new one in, take a \
captured piece out) equal to summing it again from scratch.

It reads the shipped weights (`models_EL/`) and the committed sample (`data/sample/`), and runs in a minute or \
two on a CPU: `knights notebook inside_the_networks`, or open it in JupyterLab (`make lab`) and run every cell."""

PARAMETERS = '''fen = "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4"   # the position we open
move = "b5c6"          # a capture in it, for the accumulator update (UCI)
batch_rows = 256       # rows of the batch pushed through the networks
test_letter = "k"      # the sample chunk the batch comes from (a quick run's test letter)
step_sizes = (1e-5, 1e-4, 1e-3, 1e-2)   # plain gradient steps w <- w - lr x g, beside Adam's first step
loop_steps = 40        # optimiser steps of the short training loop'''

CELLS: list[tuple[str, str]] = [
    ("code", '''import copy

import chess
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from knights.board.positions import positions_from_boards
from knights.data.cache import ChunkCache, iter_batches, load_encoded
from knights.data.chunks import select_chunks
from knights.features import sparse
from knights.learn import registry
from knights.learn.experiment import SAMPLE_DATA
from knights.learn.targets import PAWN_LOGIT
from knights.learn.training import EvalTask, WinProbTask, fit
from knights.lab.notebooks import teach

teach.setup()   # whole FENs in tables, figures at a modest resolution
torch.manual_seed(0)
board = chess.Board(fen)
teach.board_grid([board], [[f"{'White' if board.turn else 'Black'} to move", fen.split()[0][:34]]],
                 size=260, coordinates=True)'''),

    # -- part 1: EL/v10 -------------------------------------------------------------------------------------------
    ("markdown", """## Part 1: EL/v10, a dense network

### From a FEN to the input tensors

A version says what its network sees with one object, `INPUTS` in its `library.py`. EL/v10's is an \
`InputSpec` (`knights/features/inputs.py`): six piece planes (+1 where a White piece of that kind stands, -1 for \
Black), four attack planes, and a vector of extras. The same object encodes training batches and the positions \
the engine asks about, so training and play cannot disagree. `encode` takes positions as arrays \
(`positions_from_boards`) and returns two arrays: the planes `(N, P, 8, 8)` and the extras `(N, E)`."""),
    ("code", '''v10 = registry.get("EL/v10")
spec = v10.library.INPUTS
print("INPUTS =", spec)
position = positions_from_boards([board])
planes, extra = spec.encode(position)
print(f"planes {planes.shape} {planes.dtype}, extras {extra.shape} {extra.dtype}")'''),
    ("markdown", """Drawn as 8x8 images, rank 8 at the top as on the board: each image is one channel of the first \
convolution's input. Red is White (+), blue is Black (-); the number on a square says what it means. The attack \
planes hold how many pieces of a colour attack the square (halved), and `1 / value` of the cheapest of them (a pawn \
1, a knight or bishop 1/3, a queen 1/9), so a square a pawn hits is the brightest."""),
    ("code", '''plane_names = ["pawns", "knights", "bishops", "rooks", "queens", "kings",
               "White attackers\\n(count, input = count / 2)", "Black attackers\\n(count, input = count / 2)",
               "White's cheapest attacker\\n(input = 1 / its value)",
               "Black's cheapest attacker\\n(input = 1 / its value)"]
assert len(plane_names) == spec.n_planes


def label(value: float, plane: int) -> str:
    """What a square's number means: +1/-1 for a piece, the attackers' count, 1/value of the cheapest."""
    if plane < 6:
        return f"{value:+.0f}"
    if plane < 8:
        return f"{2 * value:.0f}"
    return f"1/{1 / value:.0f}"


fig, axes = plt.subplots(2, 5, figsize=(14, 6.6), layout="constrained")
for plane, (ax, image, name) in enumerate(zip(axes.flat, planes[0], plane_names)):
    shown = -image if name.startswith("Black") else image    # Black's attack planes hold positive numbers
    im = ax.imshow(shown, cmap="RdBu_r", vmin=-1, vmax=1)
    for r in range(8):
        for c in range(8):
            if image[r, c]:
                ax.text(c, r, label(image[r, c], plane), ha="center", va="center", fontsize=7,
                        color="white" if abs(shown[r, c]) > 0.6 else "black")
    ax.set_xticks(range(8), list("abcdefgh"), fontsize=7)
    ax.set_yticks(range(8), list("87654321"), fontsize=7)
    ax.set_title(name, fontsize=9)
fig.colorbar(im, ax=axes, shrink=0.6, label="input value (red: White, blue: Black)")
fig.suptitle(f"EL/v10's {spec.n_planes} input planes for {fen.split()[0]}")'''),
    ("markdown", """The extras skip the convolutions and join the flattened feature maps at the first linear \
layer: whose turn it is, whether the mover is in check, the ten piece counts (each `count / starting count x value`, \
negative for Black), and each side's best one-capture gain in pawns."""),
    ("code", '''extra_names = (["turn (1 = White)", "check"]
               + [f"{side} {piece} count" for side in ("White", "Black") for piece in ("P", "N", "B", "R", "Q")]
               + ["White's best capture gain", "Black's best capture gain (negative)"])
assert len(extra_names) == spec.n_extra
pd.DataFrame({"value": extra[0]}, index=pd.Index(extra_names, name="extra"))'''),

    ("markdown", """### One batch through the network, layer by layer

A batch of positions from the committed sample's chunk `k` (the quick runs' first test letter). The sample's \
letters are its own: a quick run trains on the sample's `a`-`h` and holds out `k`-`m`, as the full runs train on \
`data/full`'s `a`-`i` and hold out its `j`, the report's test letter. A forward hook \
on every layer prints the shape of what comes out of it: the convolutions keep the 8x8 board (3x3 kernels, \
padding 1), `flatten` makes one vector a position, the extras are concatenated to it (both are `ConvNet.forward`'s \
code, not layers, so a *pre*-hook on the first `Linear` shows what it receives: 32 x 8 x 8 = 2,048 numbers from the \
convolutions plus the 14 extras), and the last layer gives one number a position: the evaluation in pawns from \
White's side."""),
    ("code", '''rows = load_encoded(select_chunks(registry.repo_path(SAMPLE_DATA), test_letter), ChunkCache())
batch = rows.take(slice(0, batch_rows))
inputs = spec.tensors(batch)
print(f"batch: {len(batch)} positions of chunk {test_letter}; inputs {[tuple(t.shape) for t in inputs]}")

model, meta = v10.load()
shapes = []
hooks = [module.register_forward_hook(
             lambda mod, args, out, name=name: shapes.append((name, type(mod).__name__, tuple(out.shape))))
         for name, module in model.named_modules() if not list(module.children())]   # the leaves: real layers
first_linear = model.head[0]
hooks.append(first_linear.register_forward_pre_hook(     # what goes into it: the flattened maps and the extras
    lambda mod, args: shapes.append(("(flatten, cat)", "", tuple(args[0].shape)))))
with torch.no_grad():
    out = model(*inputs)
for hook in hooks:
    hook.remove()
print(f"{'input planes':<14} {'':<11} {tuple(inputs[0].shape)}")
for name, kind, shape in shapes:
    print(f"{name:<14} {kind:<11} {shape}")
print(f"{'output':<14} {'':<11} {tuple(out.shape)}   (ConvNet.forward squeezes the last dimension)")
assert out.shape == (batch_rows,)'''),

    ("markdown", """### The loss, by hand

EL/v10 learns L1: the mean absolute difference between its evaluation and Stockfish's, in pawns. The training \
loop asks the version's *task* for it (`EvalTask.loss`); here it is one line of tensor arithmetic, and the two \
must be the same number."""),
    ("code", '''task = EvalTask(spec)
target = torch.from_numpy(batch.target)
by_hand = (out - target).abs().mean()
library = task.loss(out, batch, torch.device("cpu"))
print(f"L1 by hand {by_hand.item():.6f} pawns, EvalTask.loss {library.item():.6f}")
assert torch.allclose(by_hand, library, rtol=0, atol=1e-6)'''),

    ("markdown", """### One optimiser step, by hand

The training loop (`fit` in `knights/learn/training.py`) does, for each batch: forward, loss, `backward()` for \
the gradients, then `opt.step()`. EL/v10 trains with Adam (`TRAIN` in its `library.py`). At the first step Adam's \
two running averages are just the gradient and its square, scaled by `1 - beta`, and its bias correction divides \
that scale out again, so the first update is

    m = (1 - b1) g,  v = (1 - b2) g^2,  m_hat = m / (1 - b1) = g,  v_hat = v / (1 - b2) = g^2
    w <- w - lr * m_hat / (sqrt(v_hat) + eps)  =  w - lr * g / (|g| + eps)

which moves every weight by almost exactly the learning rate, against the sign of its gradient. We take that \
step by hand on a copy of the shipped network, then let `fit` train another copy for one epoch whose only batch \
is ours (same learning rate, no mirroring, no validation), and compare every weight.

One detail matters for an exact match: `fit` draws each epoch's batches with \
`iter_batches(train, batch_size, seed=cfg.seed * 1000 + epoch)`, a shuffle. A mean over the same rows in another \
order differs in its last bits, and a weight whose gradient is nearly zero (a sum that almost cancels) turns that \
into a visible difference, because Adam divides by `|g|`. So we take our step on the rows in fit's order."""),
    ("code", '''cfg = v10.library.TRAIN.replace(epochs=1, batch_size=len(batch), mirror=False, keep_best=False)
print(f"{cfg.optimizer}, lr {cfg.lr} (the cosine schedule starts at lr: {cfg.lr_at(0.0)}), one batch of {len(batch)}")

shuffled = next(iter_batches(batch, cfg.batch_size, seed=cfg.seed * 1000 + 0))   # epoch 0's order, as fit
mine = copy.deepcopy(model).train()
loss = EvalTask(spec).loss(mine(*spec.tensors(shuffled)), shuffled, torch.device("cpu"))
loss.backward()
b1, b2 = 0.9, 0.999           # torch.optim.Adam's defaults, which make_optimizer keeps
eps = 1e-8
with torch.no_grad():
    for w in mine.parameters():
        g = w.grad
        m_hat = ((1 - b1) * g) / (1 - b1)
        v_hat = ((1 - b2) * g * g) / (1 - b2)
        w -= cfg.lr * m_hat / (v_hat.sqrt() + eps)

theirs = copy.deepcopy(model)
history = fit(theirs, EvalTask(spec), batch, None, cfg, device="cpu", progress=False)
print(f"fit: {history.epochs} epoch, train loss {history.train_loss[0]:.6f} (ours before the step: {loss.item():.6f})")

moved = {name: (p.detach() - q.detach()).abs().max().item()
         for (name, p), (_, q) in zip(mine.named_parameters(), model.named_parameters())}
differ = {name: (p.detach() - q.detach()).abs().max().item()
          for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters())}
pd.DataFrame({"largest move by hand": moved, "largest |by hand - fit|": differ}).rename_axis("parameter")'''),
    ("code", '''assert abs(loss.item() - history.train_loss[0]) < 1e-5
for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
    # equal up to float32 rounding of the last subtraction (one unit in the last place of the weight)
    assert torch.allclose(p, q, rtol=1e-6, atol=1e-7), f"{name}: the hand-made step is not fit's"
print(f"all {sum(p.numel() for p in model.parameters()):,} weights after the step by hand equal fit's "
      f"(largest difference {max(differ.values()):.1e}, float32 rounding; the step itself is {cfg.lr})")'''),

    ("markdown", """### What the gradient says

`loss.backward()` left in every weight's `.grad` the gradient: how fast the batch's loss changes as that weight \
moves. The output bias's has a closed form to check it by: the network's answer moves one for one with that bias, \
and the L1 loss of a position changes by +1/N per pawn where the answer is too high and by -1/N where it is too low \
(N positions in the batch), so the gradient is the share of the batch put too high minus the share put too low. \
Below it, six weights of the output layer: the gradient, and what Adam's first step did with it (minus the \
learning rate times its sign, whatever its size)."""),
    ("code", """last = mine.head[-1]                                   # the output layer: its weights and bias, stepped
g_bias = last.bias.grad.item()
with torch.no_grad():
    errors = model(*spec.tensors(shuffled)) - torch.from_numpy(shuffled.target)
too_high, too_low = (errors > 0).float().mean().item(), (errors < 0).float().mean().item()
print(f"d loss / d (output bias) = {g_bias:+.6f}: the share of the batch put too high ({too_high:.4f}) "
      f"minus the share put too low ({too_low:.4f}) = {too_high - too_low:+.6f}")
assert abs(g_bias - (too_high - too_low)) < 1e-6
pd.DataFrame({"weight before": model.head[-1].weight.detach()[0, :6].numpy(),
              "gradient": last.weight.grad[0, :6].numpy(),
              "Adam's first step": (last.weight.detach() - model.head[-1].weight.detach())[0, :6].numpy()},
             index=pd.Index([f"head[-1].weight[0, {i}]" for i in range(6)], name="weight")).round(6)"""),

    ("markdown", """### The loss before and after the step

A gradient is a slope: for a small step `dw` it predicts the change of the loss, the sum over all weights of \
`gradient x dw`. Below: the batch's loss before the step and after it, for plain gradient steps `w <- w - lr x g` \
of growing size (`step_sizes`) and for the Adam step above, each beside what the gradient predicted. Only the \
smallest steps come close to the prediction (lr 1e-5: -0.00028 against -0.00031; lr 1e-4: -0.0024 against \
-0.0031). At lr 1e-3 the loss still falls, but by a fifth of the prediction (-0.006 against -0.031): over so long \
a step the slope no longer holds. At lr 1e-2 the step overshoots and the loss rises (+0.90). Adam's first \
step moves *every* weight by the full learning rate at once: on a network that is already trained that is a \
large step, and the batch's loss rises (asserted). Continuing from trained weights calls for a smaller rate: \
EL/v25 continues EL/v24 at a tenth of its rate (`TRAIN.lr` in their `library.py`)."""),
    ("code", """def batch_loss(net: torch.nn.Module) -> float:
    \"\"\"The L1 loss of ``net`` on the batch of the step above.\"\"\"
    with torch.no_grad():
        return EvalTask(spec).loss(net(*spec.tensors(shuffled)), shuffled, torch.device("cpu")).item()


grads = [w.grad for w in mine.parameters()]
before = loss.item()
steps = []
for lr in step_sizes:
    plain = copy.deepcopy(model)
    with torch.no_grad():
        for w, g in zip(plain.parameters(), grads):
            w -= lr * g
    steps.append({"step": f"gradient, lr {lr:g}", "predicted change": -lr * sum((g * g).sum().item() for g in grads),
                  "loss after": batch_loss(plain)})
adam_move = [p.detach() - q.detach() for p, q in zip(mine.parameters(), model.parameters())]
steps.append({"step": f"Adam's first, lr {cfg.lr:g}",
              "predicted change": sum((g * d).sum().item() for g, d in zip(grads, adam_move)),
              "loss after": batch_loss(mine)})
steps = pd.DataFrame(steps).set_index("step")
steps.insert(0, "loss before", before)
steps["actual change"] = steps["loss after"] - before
print(f"loss on the batch before the step {before:.6f}; after Adam's first step {batch_loss(mine):.6f}")
assert steps["actual change"].iloc[0] < 0 < steps["actual change"].iloc[-1]   # the smallest goes down, Adam's up
steps.round(6)"""),

    ("markdown", """### A short training loop

`fit` repeats that step over batches and epochs. Here the loop is written out: EL/v10's network with fresh \
random weights, Adam at EL/v10's rate, `loop_steps` batches of 256 from the sample's training chunks (a-h), and \
after each step the loss on the batch of chunk k above, which the loop never trains on. Each step's training \
loss is measured on its own batch before the step, so it is noisy; the held-out loss jumps too, as a \
large-rate optimiser does early on. Both fall (asserted: the mean of the last ten steps against the first)."""),
    ("code", """torch.manual_seed(0)
fresh = v10.build().train()                                   # EL/v10 with random weights, before any training
opt = torch.optim.Adam(fresh.parameters(), lr=cfg.lr)         # what make_optimizer builds for "adam"
train_rows = load_encoded(select_chunks(registry.repo_path(SAMPLE_DATA), "a-h"), ChunkCache())
held_out = spec.tensors(batch)                                # chunk k's batch: never trained on here
first_two, curve = [], []
for step, b in enumerate(iter_batches(train_rows, 256, seed=0), start=1):
    kept = [p.detach().clone() for p in fresh.parameters()]
    opt.zero_grad()
    step_loss = EvalTask(spec).loss(fresh(*spec.tensors(b)), b, torch.device("cpu"))
    step_loss.backward()
    opt.step()
    if step <= 2:                                             # Adam's first two steps, for the next section
        first_two.append({"grad": [p.grad.clone() for p in fresh.parameters()],
                          "moved": [p.detach() - q for p, q in zip(fresh.parameters(), kept)],
                          "m": [opt.state[p]["exp_avg"].clone() for p in fresh.parameters()],
                          "v": [opt.state[p]["exp_avg_sq"].clone() for p in fresh.parameters()]})
    with torch.no_grad():
        held = (fresh(*held_out) - target).abs().mean().item()
    curve.append((step, step_loss.item(), held))
    if step == loop_steps:
        break
curve = pd.DataFrame(curve, columns=["step", "train loss (its batch)", "held-out loss (chunk k)"]).set_index("step")
start, end = curve.iloc[0], curve.iloc[-10:].mean()
print(f"train loss: step 1 {start.iloc[0]:.3f}, mean of the last ten steps {end.iloc[0]:.3f}; "
      f"held-out: step 1 {start.iloc[1]:.3f}, mean of the last ten {end.iloc[1]:.3f}")
assert (end < start).all()
fig, ax = plt.subplots(figsize=(7, 3.4), layout="constrained")
curve.plot(ax=ax, marker=".")
ax.set_xlabel("optimiser step")
ax.set_ylabel("L1 (pawns)")
ax.set_title(f"EL/v10 from random weights: {len(curve)} Adam steps on batches of 256")
curve.iloc[sorted({0, 1, 4, 9, 19, len(curve) - 1})].round(3)"""),

    ("markdown", """### Adam's second step

At its first step Adam is sign descent (above: every weight moved by the learning rate). From the second step \
on, its two running averages hold more than one gradient, `m <- b1 m + (1 - b1) g` and \
`v <- b2 v + (1 - b2) g^2`, divided by `1 - b^t` with `t = 2`:

    m_hat = (b1 g1 + g2) / (1 + b1),   v_hat = (b2 g1^2 + g2^2) / (1 + b2)
    w <- w - lr * m_hat / (sqrt(v_hat) + eps)

`m_hat` is a weighted mean of the two gradients and `v_hat` one of their squares, so a step is the learning rate \
times `mean(g) / sqrt(mean(g^2))`: the full rate only where the two gradients are equal, less where they differ \
in size, much less where they differ in sign. The loop above kept its first two steps: the moment estimates by \
hand equal `torch.optim.Adam`'s (`exp_avg`, `exp_avg_sq`) for every weight, six weights of the output layer are \
shown side by side, and how far every weight moved at each step, in units of the learning rate."""),
    ("code", """def close(mine: torch.Tensor, theirs: torch.Tensor) -> bool:
    \"\"\"Equal up to float32 rounding, relative to the tensor's scale.\"\"\"
    return (mine - theirs).abs().max().item() <= 1e-5 * theirs.abs().max().item() + 1e-12


one, two = first_two
for i, (g1, g2) in enumerate(zip(one["grad"], two["grad"])):
    m1, v1 = (1 - b1) * g1, (1 - b2) * g1 * g1                         # after step 1
    m2, v2 = b1 * m1 + (1 - b1) * g2, b2 * v1 + (1 - b2) * g2 * g2     # after step 2
    assert close(m1, one["m"][i]) and close(v1, one["v"][i]) and close(m2, two["m"][i]) and close(v2, two["v"][i])
    assert close(-cfg.lr * (m2 / (1 - b1 ** 2)) / ((v2 / (1 - b2 ** 2)).sqrt() + eps), two["moved"][i])
print(f"both steps and the moment estimates by hand equal torch.optim.Adam's, for all "
      f"{sum(p.numel() for p in fresh.parameters()):,} weights")
for t, kept in (("1", one), ("2", two)):
    ratio = torch.cat([(d / cfg.lr).abs().flatten() for d in kept["moved"]])
    ratio = ratio[ratio > 0]                                  # a weight whose gradient is 0 does not move
    print(f"step {t}: |step| / lr over the {len(ratio):,} weights that moved: median {ratio.median():.3f}, "
          f"10th to 90th percentile {ratio.quantile(0.1):.3f} to {ratio.quantile(0.9):.3f}")
k = [name for name, _ in fresh.named_parameters()].index("head.2.weight")   # the output layer's weights
pd.DataFrame({"gradient 1": one["grad"][k][0, :6], "gradient 2": two["grad"][k][0, :6],
              "m_hat": two["m"][k][0, :6] / (1 - b1 ** 2), "sqrt(v_hat)": (two["v"][k][0, :6] / (1 - b2 ** 2)).sqrt(),
              "step 1 / lr": one["moved"][k][0, :6] / cfg.lr, "step 2 / lr": two["moved"][k][0, :6] / cfg.lr},
             index=pd.Index([f"head[-1].weight[0, {i}]" for i in range(6)], name="weight")).round(5)"""),

    # -- part 2: EL/v13 -------------------------------------------------------------------------------------------
    ("markdown", """## Part 2: EL/v13, an efficiently updatable network

### The position as sparse features

EL/v13 sees no planes. Each piece is one of 768 features (`knights/features/sparse.py`): whose it is (the \
perspective's own or the opponent's), its kind, and its square, with the board turned upside down for Black so \
that "my pawn on my second rank" is the same feature for both sides:

    index = 384 x (opponent's piece) + 64 x (kind - 1) + square,  square a8 = 0 ... h1 = 63 seen from White

A position is two short lists of indices, the mover's view and the other side's (padded to 32 with 768, a feature \
that no piece has)."""),
    ("code", '''v13 = registry.get("EL/v13")
spec13 = v13.library.INPUTS
mover, other, white = spec13.encode(position)
KINDS = ["pawn", "knight", "bishop", "rook", "queen", "king"]


def meaning(index: int, white_view: bool) -> dict:
    """A feature in words: whose piece, what kind, on which square of the real board."""
    owner, rest = divmod(int(index), 384)
    kind, square = divmod(rest, 64)
    real = square if white_view else square ^ 56          # undo the flip of Black's view
    name = chess.square_name(chess.square(real % 8, 7 - real // 8))   # a8 = 0 -> python-chess's a8
    seen = chess.square_name(chess.square(square % 8, 7 - square // 8))
    return {"feature": int(index), "piece": f"{'opponent' if owner else 'own'} {KINDS[kind]} on {name}",
            "square as this side sees it": seen}


views = {"White's view (White moves)": (mover[0], True), "Black's view": (other[0], False)} if white[0] else \\
        {"Black's view (Black moves)": (mover[0], False), "White's view": (other[0], True)}
tables = {title: pd.DataFrame([meaning(i, w) for i in sorted(feats) if i != sparse.PAD])
          for title, (feats, w) in views.items()}
for title, table in tables.items():
    print(f"{title}: {len(table)} pieces, {int((views[title][0] == sparse.PAD).sum())} pads")
pd.concat(tables, axis=1)   # each view's features in index order: own pieces (0-383) first'''),
    ("markdown", """The same knight is two different features: White's knight on f3 is "own knight on f3" from \
White's side, feature 109, and "opponent knight on f3" from Black's, feature 469, filed under f6 because Black's \
view turns the board upside down."""),
    ("code", '''f3 = chess.parse_square("f3")
code = 2                                                   # a White knight (P=1, N=2, ..., negative for Black)
a8_first = (7 - chess.square_rank(f3)) * 8 + chess.square_file(f3)   # python-chess's f3 as the arrays number it
for white_view in (True, False):
    index = sparse.feature_index(code, a8_first, white_view)
    words = meaning(index, white_view)
    print(f"from {'White' if white_view else 'Black'}'s view: feature {index:3d} = {words['piece']}"
          f" (seen on {words['square as this side sees it']})")'''),

    ("markdown", """### The accumulator, by hand

The first layer is a lookup. `SparseNet.columns` holds one learned column of 128 numbers per feature; a side's \
accumulator is the sum of the columns of its features plus a bias. Both accumulators, clipped to [0, 1] and \
side by side (the mover's first), go through a small head to the mover's win-probability logit `z`; the network \
answers pawns from White's side as `+-z / PAWN_LOGIT` (the sign turns the mover's view into White's)."""),
    ("code", '''net, _ = v13.load()
columns, bias = net.columns.detach(), net.bias.detach()
print(f"columns {tuple(columns.shape)}: one learned column of {columns.shape[1]} numbers a feature; "
      f"bias {tuple(bias.shape)}; then the head:\\n{net.head}")


def accumulate(features: np.ndarray) -> torch.Tensor:
    """One side's accumulator by hand: the columns of its pieces, summed, plus the bias."""
    kept = [int(i) for i in features if i != sparse.PAD]
    return columns[kept].sum(dim=0) + bias


acc_mover, acc_other = accumulate(mover[0]), accumulate(other[0])
with torch.no_grad():
    library = net.accumulator(torch.from_numpy(np.stack([mover[0], other[0]]).astype(np.int64)))
assert torch.allclose(acc_mover, library[0], atol=1e-5) and torch.allclose(acc_other, library[1], atol=1e-5)
print(f"accumulator: {tuple(acc_mover.shape)} a side; by hand = SparseNet.accumulator (to 1e-5)")

x = torch.cat([acc_mover, acc_other]).clamp(0, 1)         # the clipped ReLU
h = x
with torch.no_grad():
    for layer in net.head:                                 # Linear, clip, Linear, clip, Linear
        h = layer(h)
    z = h.item()
    pawns = (1 if white[0] else -1) * z / PAWN_LOGIT
    library = net.eval()(*spec13.tensors(position)).item()
print(f"logit z = {z:+.4f} for the mover; pawns from White's side by hand {pawns:+.4f}, the network {library:+.4f}")
assert abs(pawns - library) < 1e-4

fig, ax = plt.subplots(figsize=(12, 2.2), layout="constrained")
im = ax.imshow(x.reshape(2, -1), cmap="viridis", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
ax.set_yticks([0, 1], ["mover (White)" if white[0] else "mover (Black)", "other side"])
ax.set_xlabel("accumulator unit")
fig.colorbar(im, ax=ax, label="clipped to [0, 1]", pad=0.01)
ax.set_title("The two accumulators the head reads (256 numbers)")'''),

    ("markdown", """### The loss, by hand

EL/v13 learns in win-probability space (`WinProbTask`): both its answer and Stockfish's become the probability \
`sigmoid(PAWN_LOGIT x pawns)`, and the loss is the mean squared difference. A pawn's error near level moves that \
probability far more than a pawn's error at +8."""),
    ("code", '''inputs13 = spec13.tensors(batch)
net.train()                                                # in training the output is not clipped to +-10
with torch.no_grad():
    out13 = net(*inputs13)
by_hand = ((torch.sigmoid(PAWN_LOGIT * out13) - torch.sigmoid(PAWN_LOGIT * target)) ** 2).mean()
library = WinProbTask(spec13).loss(out13, batch, torch.device("cpu"))
print(f"win-probability squared error by hand {by_hand.item():.6f}, WinProbTask.loss {library.item():.6f}")
assert torch.allclose(by_hand, library, rtol=0, atol=1e-7)
net.eval();'''),

    ("markdown", """### After a move: update, do not recompute

A move changes two to four features, so a search keeps the accumulators and edits them instead of summing 32 \
columns again. The accumulators belong to *views*, White's and Black's, not to "mover" and "other": after the move \
the same two vectors simply swap roles. For the capture in the parameters, in each view: take out the moved piece's \
column on its old square, put in its column on the new square, take out the captured piece's column."""),
    ("code", '''def features_of(squares: np.ndarray, white_view: bool) -> dict:
    """{square: feature} of every piece in one view (squares: the 64 signed codes, a8 first)."""
    return {sq: sparse.feature_index(int(code), sq, white_view) for sq, code in enumerate(squares) if code}


def a8_index(square: int) -> int:
    """python-chess's square (a1 = 0) as the arrays number it (a8 = 0)."""
    return (7 - chess.square_rank(square)) * 8 + chess.square_file(square)


played = chess.Move.from_uci(move)
assert played in board.legal_moves, f"{move} is not legal here"
squares = position.squares[0]
old, new = a8_index(played.from_square), a8_index(played.to_square)
piece, captured = int(squares[old]), int(squares[new])
print(f"{board.san(played)}: a {KINDS[abs(piece) - 1]} from {chess.square_name(played.from_square)} to "
      f"{chess.square_name(played.to_square)}" + (f", taking a {KINDS[abs(captured) - 1]}" if captured else ""))

by_view = {True: accumulate(features_of(squares, True).values()),     # before the move
           False: accumulate(features_of(squares, False).values())}
for white_view in (True, False):
    acc = by_view[white_view].clone()
    acc -= columns[sparse.feature_index(piece, old, white_view)]          # the piece leaves its square
    acc += columns[sparse.feature_index(piece, new, white_view)]          # and arrives on the new one
    if captured:
        acc -= columns[sparse.feature_index(captured, new, white_view)]   # the captured piece is gone
    by_view[white_view] = acc

after = board.copy()
after.push(played)
mover2, other2, white2 = spec13.encode(positions_from_boards([after]))
fresh = {bool(white2[0]): accumulate(mover2[0]), not bool(white2[0]): accumulate(other2[0])}
for white_view in (True, False):
    gap = (by_view[white_view] - fresh[white_view]).abs().max().item()
    print(f"{'White' if white_view else 'Black'}'s view: 3 columns edited instead of "
          f"{int((mover2[0] != sparse.PAD).sum())} summed; largest difference {gap:.1e}")
    assert torch.allclose(by_view[white_view], fresh[white_view], atol=1e-5)'''),
    ("markdown", """The same rule, written once for any move: the features that were there before and are not after \
come out, the new ones go in. That covers castling (two pieces move), promotion (a pawn leaves, a queen arrives) \
and en passant (the captured pawn is not on the arrival square). Every legal move of the position, checked against \
a full recomputation, with the network's evaluation after it:"""),
    ("code", '''def updated(squares: np.ndarray, squares_after: np.ndarray, acc: torch.Tensor, white_view: bool):
    """One view's accumulator after a move: the features gone out, the new ones in; and how many columns that was."""
    before = set(features_of(squares, white_view).values())
    after = set(features_of(squares_after, white_view).values())
    gone, came = before - after, after - before
    return acc - columns[sorted(gone)].sum(dim=0) + columns[sorted(came)].sum(dim=0), len(gone) + len(came)


start = {w: accumulate(features_of(squares, w).values()) for w in (True, False)}
report = []
for m in board.legal_moves:
    nxt = board.copy()
    nxt.push(m)
    pos2 = positions_from_boards([nxt])
    accs, edited = {}, 0
    for w in (True, False):
        accs[w], n = updated(squares, pos2.squares[0], start[w], w)
        edited += n
    m2, o2, w2 = spec13.encode(pos2)
    assert torch.allclose(accs[bool(w2[0])], accumulate(m2[0]), atol=1e-5)
    assert torch.allclose(accs[not bool(w2[0])], accumulate(o2[0]), atol=1e-5)
    with torch.no_grad():   # the head on the updated accumulators, the new mover's first
        z = net.head(torch.cat([accs[bool(w2[0])], accs[not bool(w2[0])]]).clamp(0, 1)).item()
        whole = net(*spec13.tensors(pos2)).item()        # the network on the new position, from scratch
    pawns = max(-10.0, min(10.0, (1 if w2[0] else -1) * z / PAWN_LOGIT))
    assert abs(pawns - whole) < 1e-4
    report.append({"move": board.san(m), "columns edited (both views)": edited,
                   "EL/v13 after it (pawns, White's side)": round(pawns, 2)})
table = pd.DataFrame(report).set_index("move").sort_values("EL/v13 after it (pawns, White's side)", ascending=False)
print(f"{len(report)} legal moves: every updated accumulator equals the recomputed one, "
      "and the head on it gives the network's evaluation of the new position")
table.head(8)'''),
    ("markdown", """Read the top of this table with care: these are *static* evaluations of the position after \
each move, with the opponent to move. After a capture the opponent can usually take back, which a static \
evaluation cannot see, and EL/v13 learned only from quiet positions (no capture that wins material pending: \
`TRAIN_ON` in its `library.py`), so it has never been taught such positions. A search does not ask it there: it \
first plays the captures out (its capture search) and evaluates the quiet position at the end."""),
    ("markdown", """## What to take away

* A network's input is an array you can print and draw; `InputSpec` or `SparseSpec` makes it from a position, \
the same way in training and in play.
* The loss and the optimiser step are a few lines of tensor arithmetic; the training loop only repeats them over \
batches and epochs (with a learning-rate schedule, mirrored batches and the best epoch kept).
* The gradient is a slope: it predicts a small step's change of the loss, not a large one's. Adam's first step is \
sign descent; from the second on it divides a running mean of the gradient by the root of a running mean of its \
square, so weights whose gradients disagree from batch to batch move less.
* A dense network must recompute everything for every position; EL/v13's first layer is a sum of columns, so a \
search edits a few columns per move (`knights/engine/incremental.py`) and runs only the small head at each node."""),
]
