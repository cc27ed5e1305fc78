"""What a notebook shows about a model: its data, its size, and how it errs, position by position.

Every notebook teaches through this module, so that each version's ``train.ipynb`` and
the learner notebooks read alike and a figure is drawn by one function, not copied:

* :func:`data_sample`: a few labelled rows of a chunk as a table, and one of them drawn;
* :func:`describe_model`, :func:`parameter_table`: the network and where its parameters are;
* :func:`history_table`, :func:`plot_history`: the loss per epoch as numbers and drawn;
* :func:`version_card`: what makes a version (its ``library.py``, what changed from the one before);
* :class:`Comparison`: one evaluator (a network, a learner, the democracy) beside the
  baselines on the same held-out rows: :meth:`~Comparison.metrics` (MAE, median error,
  sign agreement), :meth:`~Comparison.buckets` (MAE by how lopsided the position is),
  :meth:`~Comparison.plot` (predicted against Stockfish, the errors, the buckets) and
  :meth:`~Comparison.worked` (a typical position of each bucket, drawn);
* :class:`MoveComparison`: the same questions for a move network (is its top move
  legal? is it the move played?).

The baselines (:func:`baselines`) are what any evaluator must beat: counting material,
always saying 0.00, always saying the training rows' mean, and the shipped networks that
never saw the held-out rows (:func:`shipped_networks`). Boards are python-chess SVG;
several are drawn into one picture (:func:`board_grid`) that Jupyter shows as it is:

>>> import chess
>>> picture = board_grid([chess.Board()], [["the start", "Stockfish +0.20"]])
>>> picture.startswith("<svg") and picture.count('id="white-pawn"')
1
"""

from __future__ import annotations

import math
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from knights.board.arrays import boards_from_arrays, material_balance
from knights.data.cache import ChunkCache, load_encoded
from knights.data.chunks import Encoded, chunk_files, select_chunks
from knights.features.inputs import InputSpec
from knights.lab.ensemble.plan import network_training_chunks
from knights.lab.notebooks.build import QUICK_EPOCHS as QUICK_EPOCHS  # the notebooks' quick epochs
from knights.lab.notebooks.build import version_settings as version_settings  # what a library sets
from knights.lab.results import tables as results
from knights.learn import registry
from knights.learn.experiment import FULL_DATA, SAMPLE_DATA, Result, predict
from knights.learn.learners import FitRecord
from knights.learn.metrics import regression_metrics
from knights.learn.moves import legal_mask
from knights.learn.nets import parameter_count
from knights.learn.training import History

if TYPE_CHECKING:
    import chess
    import pandas as pd
    from matplotlib.figure import Figure


BUCKETS: tuple[tuple[str, float, float], ...] = tuple((name.replace(" ", ""), lo, hi) for name, lo, hi in
                                                      results.BUCKETS)
"""How lopsided a position is, by Stockfish's |evaluation| in pawns: about level, a pawn
or two, a piece, decided. The results tables' buckets (:data:`knights.lab.results.tables.BUCKETS`),
except that here a mate (10) stays in the last one instead of a bucket of its own."""

FIGURE_DPI = 80
"""The notebooks' figures are stored as PNG in the committed notebooks: modest, not blurry."""

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"


def setup() -> None:
    """How the notebooks show things: whole FENs in tables (pandas cuts cells at 50 characters
    otherwise) and figures at :data:`FIGURE_DPI` (they are stored in the committed notebooks)."""
    import matplotlib.pyplot as plt
    import pandas as pd

    pd.set_option("display.max_colwidth", None)
    plt.rcParams["figure.dpi"] = FIGURE_DPI


# ---------------------------------------------------------------------------- boards
class Svg(str):
    """SVG text that Jupyter shows as a picture (it calls ``_repr_svg_``); a plain string otherwise."""

    __slots__ = ()

    def _repr_svg_(self) -> str:
        return str(self)

    def __repr__(self) -> str:   # the text form beside the picture: short, not the SVG again
        return f"<SVG picture, {len(self):,} characters>"


def board_grid(boards: Sequence[chess.Board], captions: Sequence[Sequence[str]], *, size: int = 190,
               arrows: Sequence[Sequence[tuple[int, int, str]]] | None = None,
               coordinates: bool = False) -> Svg:
    """``boards`` side by side in one SVG, each with its caption lines below it.

    ``arrows``: for each board, ``(from_square, to_square, colour)`` triples (python-chess
    squares). The pieces' drawings are defined once for the whole picture, not once a board.
    """
    import chess.svg

    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    line = 15
    lines = max((len(c) for c in captions), default=0)
    width, height = size + 14, size + 10 + lines * line
    outer = ET.Element(f"{{{SVG_NS}}}svg", {"width": str(width * len(boards)), "height": str(height),
                                            "viewBox": f"0 0 {width * len(boards)} {height}"})
    defs = ET.SubElement(outer, f"{{{SVG_NS}}}defs")
    defined: set[str] = set()
    for i, (board, caption) in enumerate(zip(boards, captions, strict=True)):
        drawn = [chess.svg.Arrow(a, b, color=c) for a, b, c in (arrows[i] if arrows else ())]
        svg = ET.fromstring(chess.svg.board(board, size=size, arrows=drawn, coordinates=coordinates))
        for own in svg.findall(f"{{{SVG_NS}}}defs"):
            for piece in own:
                if piece.get("id") not in defined:
                    defined.add(str(piece.get("id")))
                    defs.append(piece)
            svg.remove(own)
        for desc in svg.findall(f"{{{SVG_NS}}}desc"):
            svg.remove(desc)
        svg.set("x", str(i * width + 7))
        svg.set("y", "4")
        outer.append(svg)
        for j, text in enumerate(caption):
            t = ET.SubElement(outer, f"{{{SVG_NS}}}text", {
                "x": str(i * width + 7), "y": str(size + 18 + j * line), "font-family": "sans-serif",
                "font-size": "12", "font-weight": "bold" if j == 0 else "normal"})
            t.text = text
    return Svg(ET.tostring(outer, encoding="unicode"))


def _move_uci(move: int) -> str:
    """A move index ``from * 64 + to`` (python-chess squares) as ``e2e4``; ``-`` for none."""
    import chess

    return chess.square_name(move // 64) + chess.square_name(move % 64) if move >= 0 else "-"


def _signed(x: float) -> str:
    return f"{x:+.2f}"


# ---------------------------------------------------------------------------- data
@dataclass
class Sample:
    """A few rows of one chunk (:attr:`table`) and one of them drawn (:attr:`board`)."""

    table: pd.DataFrame
    board: Svg


def rows_table(rows: Encoded, index: Sequence[int]) -> pd.DataFrame:
    """The rows ``index`` of ``rows`` as people read them: the position (FEN), who moves,
    Stockfish's evaluation and the material count in pawns from White's side, the move played."""
    import pandas as pd

    idx = np.asarray(index, dtype=np.int64)
    boards = boards_from_arrays(rows.squares[idx], rows.white[idx], rows.castling[idx], rows.ep[idx])
    material = material_balance(rows.squares[idx])
    return pd.DataFrame({
        "FEN": [b.fen() for b in boards],
        "to move": ["White" if w else "Black" for w in rows.white[idx]],
        "Stockfish (pawns)": np.round(rows.target[idx].astype(float), 2),
        "material (pawns)": np.round(material.astype(float), 2),
        "move played": [_move_uci(int(m)) for m in rows.move[idx]],
        "check": rows.check[idx].astype(bool), "capture": rows.capture[idx].astype(bool),
    }, index=pd.Index(idx, name="row"))


def data_folder(data_dir: str | None, quick: bool) -> Path:
    """The chunk folder a notebook reads: ``data_dir``, else the sample (quick) or the full data."""
    return registry.repo_path(data_dir or (SAMPLE_DATA if quick else FULL_DATA))


def data_sample(data_dir: str | None = None, quick: bool = False, n: int = 5) -> Sample:
    """``n`` rows of the folder's first chunk, spread over its evaluations (the 10th to the
    90th percentile, so that level and lopsided positions both show), and the last drawn
    with the move played as an arrow."""
    first = chunk_files(data_folder(data_dir, quick))[0]
    rows = load_encoded([first], ChunkCache())
    order = np.argsort(rows.target, kind="stable")
    picks = order[np.round(np.linspace(0.1, 0.9, n) * (len(order) - 1)).astype(int)]
    table = rows_table(rows, picks)
    last = int(picks[-1])
    board = boards_from_arrays(rows.squares[[last]], rows.white[[last]], rows.castling[[last]], rows.ep[[last]])[0]
    move = int(rows.move[last])
    caption = [f"{first.name}, row {last}: {'White' if rows.white[last] else 'Black'} to move",
               f"Stockfish {_signed(float(rows.target[last]))}, material "
               f"{_signed(float(material_balance(rows.squares[[last]])[0]))}",
               f"move played {_move_uci(move)} (green)"]
    arrows = [[(move // 64, move % 64, "#15781B80")]] if move >= 0 else None
    return Sample(table, board_grid([board], [caption], size=260, arrows=arrows, coordinates=True))


# ---------------------------------------------------------------------------- the model
def fresh_model(version: str) -> nn.Module:
    """Version ``version``'s network as its ``library.py`` builds it (random weights)."""
    return registry.get(version).build()


def describe_model(version: str, model: nn.Module) -> str:
    """The layers as PyTorch prints them, the inputs, and the count of trainable parameters."""
    spec: InputSpec = registry.get(version).library.INPUTS
    inputs = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in spec.describe().items() if v not in (False, [], ()))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return f"{model}\n\ninputs: {inputs}\n{trainable:,} trainable parameters ({parameter_count(model):,} in all)"


def parameter_table(model: nn.Module) -> pd.DataFrame:
    """One row a layer that has parameters: its kind, weight shape and parameter count
    (with thousands separators), and the total."""
    import pandas as pd

    layers: dict[str, dict[str, Any]] = {}
    for name, p in model.named_parameters():
        layer, _, kind = name.rpartition(".")
        row = layers.setdefault(layer, {"kind": type(model.get_submodule(layer)).__name__, "weight shape": "",
                                        "count": 0})
        if kind == "weight":
            row["weight shape"] = " x ".join(str(s) for s in p.shape)
        row["count"] += p.numel()
    total = sum(r["count"] for r in layers.values())
    layers["total"] = {"kind": "", "weight shape": "", "count": total}
    df = pd.DataFrame(layers).T.rename_axis("layer")
    df["parameters"] = [f"{c:,}" for c in df.pop("count")]
    return df


def history_table(history: History) -> pd.DataFrame:
    """The loss per epoch (train: averaged while the weights moved; validation: after the
    epoch), the seconds and rows a second, rounded; the kept epoch marked when there is one."""
    import pandas as pd

    df = pd.DataFrame({"train loss": np.round(history.train_loss, 4),
                       "validation loss": np.round(history.val_loss, 4),
                       "seconds": np.round(history.epoch_seconds, 1),
                       "rows/s": [f"{r:,.0f}" for r in history.rows_per_second]},
                      index=pd.RangeIndex(1, history.epochs + 1, name="epoch"))
    if history.best_epoch is not None:
        df["kept"] = ["yes" if e == history.best_epoch else "" for e in df.index]
    return df


SIBLING_EXAMPLE = ("2krb2r/1pp1bppp/p1n1p3/3n2N1/3P4/PP4P1/1B2PPBP/RN3RK1 w - - 7 14", "g5f3")
"""A position of data/sound2's games (game sd20000322, ply 26) and the move Stockfish played there."""


def sibling_order(result: Result, fen: str = SIBLING_EXAMPLE[0], played: str = SIBLING_EXAMPLE[1]) -> pd.DataFrame:
    """The quiet children of ``fen`` as a ranked version compares them (:mod:`knights.learn.siblings`): the move,
    the network's verdict on the child from the side to move's view (pawns), the softmax over those verdicts at the
    temperature the run learned (the chance it gives each move of being Stockfish's), best first; Stockfish's
    move marked."""
    import chess
    import pandas as pd

    from knights.learn.nnue import SparseNet
    from knights.learn.siblings import siblings_of
    from knights.learn.targets import PAWN_LOGIT

    model = result.model.eval()
    if not isinstance(model, SparseNet):
        raise TypeError(f"{result.name} is not a sparse network: its children cannot be ranked here")
    board = chess.Board(fen)
    family = siblings_of([(board, chess.Move.from_uci(played))])
    if not len(family):
        raise ValueError(f"{played} does not lead to a quiet position in {fen}: nothing to rank")
    stm, other, _, _ = family.batch(np.arange(1))
    with torch.inference_mode():
        z = -model.logit(stm, other).numpy()
    scale = result.meta.get("ranking", {}).get("learned_scale", 10.0)
    p = np.exp(scale * (z - z.max()))
    moves = list(board.legal_moves)
    df = pd.DataFrame({"move": [board.san(moves[i]) for i in family.move_index],
                       "network (pawns, side to move)": np.round(z / PAWN_LOGIT, 2),
                       "softmax": np.round(p / p.sum(), 3),
                       "Stockfish": ["played" if k == family.played[0] else "" for k in range(len(z))]})
    return df.sort_values("softmax", ascending=False, ignore_index=True)


def plot_history(result: Result, path: str | Path | None = None) -> Figure:
    """The loss per epoch, train and validation, on whole-number epoch ticks, saved beside
    the weights as ``vN_loss.png`` (or to ``path``). When the two losses measure different
    things (EL/v12: bucket cross-entropy in training, L1 in pawns on validation) each gets
    its own panel and axis, never one scale for two units."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from knights.learn.experiment import loss_names

    h = result.history
    names = loss_names(registry.get(result.name))
    same = names["train"] == names["validation"]
    fig, axes = plt.subplots(1, 1 if same else 2, figsize=(6.5 if same else 11, 3.6), squeeze=False)
    epochs = np.arange(1, h.epochs + 1)
    curves = [(axes[0, 0], [("train", h.train_loss, "o"), ("validation", h.val_loss, "s")], names["train"])]
    if not same:
        curves = [(axes[0, 0], [("train", h.train_loss, "o")], names["train"]),
                  (axes[0, 1], [("validation", h.val_loss, "s")], names["validation"])]
    for ax, lines, ylabel in curves:
        for label, values, marker in lines:
            ax.plot(epochs, values, marker=marker, label=label, color="tab:blue" if label == "train" else "tab:orange")
        if h.best_epoch is not None:
            ax.axvline(h.best_epoch, color="grey", ls=":", lw=1, label=f"kept epoch {h.best_epoch}")
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlim(0.5, h.epochs + 0.5)
        ax.set_ylabel(textwrap.fill(ylabel if same else f"{lines[0][0]}: {ylabel}", 42, break_on_hyphens=False),
                      fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{result.name}: loss per epoch")
    fig.tight_layout()
    fig.savefig(Path(path) if path else result.weights.with_name(result.weights.stem + "_loss.png"), dpi=110)
    return fig


def plot_square_importance(importance: np.ndarray, title: str = "") -> Figure:
    """A model's importance of each of the 394 flat features (six piece planes of 64
    squares, then the ten piece counts) as six 8x8 maps on one colour scale, with files
    and ranks, a colour bar, and the counts as bars."""
    import matplotlib.pyplot as plt

    imp = np.asarray(importance, dtype=np.float64)
    fig = plt.figure(figsize=(14, 3.2))
    grid = fig.add_gridspec(1, 9, width_ratios=[1] * 6 + [0.07, 0.55, 1.3], wspace=0.3)
    top = float(imp[:384].max()) or 1.0
    images = []
    for i, piece in enumerate(("pawn", "knight", "bishop", "rook", "queen", "king")):
        ax = fig.add_subplot(grid[0, i])
        images.append(ax.imshow(imp[i * 64:(i + 1) * 64].reshape(8, 8), cmap="viridis", vmin=0, vmax=top))
        ax.set_xticks(range(8), list("abcdefgh"), fontsize=7)
        ax.set_yticks(range(8), [str(r) for r in range(8, 0, -1)], fontsize=7)
        ax.set_title(piece, fontsize=10)
    fig.colorbar(images[0], cax=fig.add_subplot(grid[0, 6]), label="importance")
    bars = fig.add_subplot(grid[0, 8])
    bars.barh(range(10), imp[384:])
    bars.set_yticks(range(10), [f"{side} {p}" for side in ("White", "Black") for p in "PNBRQ"], fontsize=7)
    bars.invert_yaxis()
    bars.set_title("piece counts", fontsize=10)
    bars.set_xlabel("importance")
    fig.suptitle(title or "Which features the model splits on (each plane: one kind of piece, +1 White, -1 Black)",
                 fontsize=10)
    fig.subplots_adjust(left=0.03, right=0.98, bottom=0.14, top=0.82)
    return fig


def fit_summary(record: FitRecord) -> str:
    """A classical learner's fit in one line: rows, seconds, its settings, the shipped form's check."""
    params = ", ".join(f"{k} {v}" for k, v in record.params.items())
    check = (f"; shipped predict within {record.verify_max_abs_diff:.1e} of scikit-learn's"
             if record.verify_max_abs_diff is not None else "")
    return f"{record.name}: {record.train_rows:,} training rows, fit in {record.fit_seconds:.1f} s" + \
        (f" ({params})" if params else "") + check


def metrics_table(predictions: dict[str, tuple[np.ndarray, np.ndarray]]) -> pd.DataFrame:
    """One row a ``name: (prediction, target)``: the positions, MAE and median absolute error in
    pawns, the share of positions where the sign agrees with Stockfish's (its 0.00 left out), rounded."""
    import pandas as pd

    table = {name: regression_metrics(pred, target) for name, (pred, target) in predictions.items()}
    df = pd.DataFrame(table).T.rename(columns={"rows": "positions", "mae": "MAE (pawns)",
                                               "median_ae": "median error (pawns)", "sign_agreement": "sign agreement"})
    df["positions"] = df["positions"].astype(int)
    return rounded(df[["positions", "MAE (pawns)", "median error (pawns)", "sign agreement"]])


def rounded(df: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """``df`` with every numeric column rounded (object columns of numbers included)."""
    import pandas as pd

    out = df.copy()
    for col in out.columns:
        values = pd.to_numeric(out[col], errors="coerce")
        if values.notna().sum() == out[col].notna().sum():   # every value is a number (or missing)
            out[col] = values.round(digits)
    return out


# ---------------------------------------------------------------------------- baselines
def recipe_rows(recipe: dict[str, Any]) -> tuple[Encoded, list[Path]]:
    """The rows a run's metadata names (``meta["data"]["test"]``: folder and letters) and their files."""
    files = select_chunks(registry.repo_path(recipe["folder"]), recipe["letters"])
    return load_encoded(files, ChunkCache()), files


def shipped_networks(candidates: Sequence[str], test_files: Sequence[Path],
                     models_dir: str | Path | None = None) -> list[str]:
    """The ``candidates`` that are trained and never trained on a chunk of ``test_files``
    (their metadata names the chunks they learned from): fair baselines on those rows."""
    folders = {Path(f).resolve().parent for f in test_files}
    names = {Path(f).name for f in test_files}
    out = []
    for name in dict.fromkeys(candidates):
        version = registry.get(name)
        if version.family != "EL" or not version.is_trained(models_dir):
            continue
        folder, seen = network_training_chunks(name, models_dir)
        if folder in folders and seen & names:
            continue
        out.append(version.name)
    return out


def baselines(rows: Encoded, train_target: np.ndarray, networks: Sequence[str] = (),
              models_dir: str | Path | None = None) -> dict[str, np.ndarray]:
    """What any evaluator must beat on ``rows``: counting material, always 0.00, always the
    training rows' mean (``train_target``), and each of ``networks`` as shipped."""
    mean = float(np.mean(train_target)) if len(train_target) else 0.0
    out = {"material count": material_balance(rows.squares),
           "always 0.00": np.zeros(len(rows), np.float32),
           f"always the training mean ({mean:+.2f})": np.full(len(rows), mean, np.float32)}
    for name in networks:
        version = registry.get(name)
        model, _ = version.load(models_dir)
        out[f"{version.name} as shipped"] = predict(model, version.library.INPUTS, rows)
    return out


def reference_networks(result: Result) -> list[str]:
    """The shipped networks a version's run is compared with: the same version trained on
    the full data (when this run is not that file), the previous version and the best one."""
    from knights.evaluate.names import DEFAULT_NETWORK

    version = registry.get(result.name)
    same = [version.name] if version.weights().resolve() != result.weights.resolve() else []
    previous = [f"{version.family}/v{version.number - 1}"] if version.number > 1 else []
    known = {v.name for v in registry.all_versions()}
    return [n for n in [*same, *previous, DEFAULT_NETWORK] if n in known]


# ---------------------------------------------------------------------------- evaluations
def bucket_of(target: np.ndarray) -> np.ndarray:
    """Each row's :data:`BUCKETS` index by ``|target|``."""
    return np.digitize(np.abs(np.asarray(target, dtype=np.float64)), [b[1] for b in BUCKETS[1:]])


@dataclass
class Comparison:
    """Evaluators' predictions on the same held-out rows, the first being the one the
    notebook is about (the others are its baselines)."""

    rows: Encoded
    predictions: dict[str, np.ndarray]

    @property
    def subject(self) -> str:
        return next(iter(self.predictions))

    def metrics(self) -> pd.DataFrame:
        """One row an evaluator (:func:`metrics_table`) on the same held-out positions."""
        table = metrics_table({name: (p, self.rows.target) for name, p in self.predictions.items()})
        return table.drop(columns="positions").rename_axis(f"{len(self.rows):,} held-out positions")

    def buckets(self) -> pd.DataFrame:
        """MAE of every evaluator by :data:`BUCKETS` of Stockfish's |evaluation|, with the
        positions in each: where the errors come from."""
        import pandas as pd

        b = bucket_of(self.rows.target)
        rows = {}
        for i, (label, _, _) in enumerate(BUCKETS):
            mask = b == i
            rows[label] = {"positions": int(mask.sum()),
                           **{name: float(np.abs(p[mask] - self.rows.target[mask]).mean()) if mask.any() else math.nan
                              for name, p in self.predictions.items()}}
        return rounded(pd.DataFrame(rows).T.astype({"positions": int}).rename_axis("|Stockfish| (pawns)"))

    def plot(self, title: str = "") -> Figure:
        """Three panels: the first evaluator against Stockfish (hexbin, log colour scale,
        the diagonal is perfect), its errors, and every evaluator's MAE by bucket."""
        import matplotlib.pyplot as plt

        pred, target = np.clip(self.predictions[self.subject], -10, 10), self.rows.target
        fig, (a, h, bars) = plt.subplots(1, 3, figsize=(15, 4), gridspec_kw={"width_ratios": [1.15, 1, 1.1]})
        hb = a.hexbin(target, pred, gridsize=40, bins="log", mincnt=1, cmap="viridis", extent=(-10, 10, -10, 10))
        fig.colorbar(hb, ax=a, label="positions (log scale)")
        a.plot([-10, 10], [-10, 10], color="tab:red", lw=1)
        a.set(xlim=(-10.5, 10.5), ylim=(-10.5, 10.5), xlabel="Stockfish (pawns, White's side)",
              ylabel=f"{self.subject} (pawns)")
        h.hist(np.clip(pred - target, -6, 6), bins=60, color="tab:blue")
        h.axvline(0, color="tab:red", lw=1)
        h.set(xlabel="error = prediction - Stockfish (pawns, clipped to +-6)", ylabel="positions",
              title="right of 0: better for White than Stockfish says")
        h.title.set_fontsize(9)
        table = self.buckets()
        names = list(self.predictions)
        width = 0.8 / len(names)
        x = np.arange(len(table))
        for i, name in enumerate(names):
            bars.bar(x + i * width, table[name].to_numpy(float), width, label=name)
        bars.set_xticks(x + width * (len(names) - 1) / 2,
                        [f"{lab}\n({n:,})" for lab, n in zip(table.index, table["positions"], strict=True)])
        bars.set(xlabel="|Stockfish| (pawns) (positions)", ylabel="MAE (pawns)")
        bars.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        bars.grid(axis="y", alpha=0.3)
        fig.suptitle(title)
        fig.tight_layout()
        return fig

    def worked(self, size: int = 190) -> tuple[Svg, pd.DataFrame]:
        """For each bucket, the position whose error (the first evaluator's) is the bucket's
        median: typical, not chosen to flatter. The boards, and every evaluator's numbers."""
        err = np.abs(self.predictions[self.subject] - self.rows.target)
        b = bucket_of(self.rows.target)
        picks, labels = [], []
        for i, (label, _, _) in enumerate(BUCKETS):
            idx = np.flatnonzero(b == i)
            if len(idx):
                picks.append(int(idx[np.argmin(np.abs(err[idx] - np.median(err[idx])))]))
                labels.append(label)
        table = rows_table(self.rows, picks).drop(columns=["check", "capture"])
        for name, p in self.predictions.items():
            if name != "material count" and np.ptp(p) > 0:   # the constant baselines say nothing here
                table[name] = np.round(p[picks].astype(float), 2)
        table.insert(0, "|Stockfish|", labels)
        boards = boards_from_arrays(self.rows.squares[picks], self.rows.white[picks], self.rows.castling[picks],
                                    self.rows.ep[picks])
        captions = [[f"|Stockfish| {lab}: {'White' if w else 'Black'} to move", f"Stockfish {_signed(t)}",
                     f"{self.subject} {_signed(p)}", f"material {_signed(m)}"]
                    for lab, w, t, p, m in zip(labels, table["to move"] == "White", table["Stockfish (pawns)"],
                                               self.predictions[self.subject][picks].astype(float),
                                               table["material (pawns)"], strict=True)]
        return board_grid(boards, captions, size=size), table


def compare(rows: Encoded, predictions: dict[str, np.ndarray], *, train_target: np.ndarray,
            test_files: Sequence[Path], networks: Sequence[str] | None = None,
            models_dir: str | Path | None = None) -> Comparison:
    """``predictions`` (the evaluator the notebook is about first) and the :func:`baselines`
    on ``rows``; ``networks`` defaults to the best shipped network, kept only if it never
    trained on ``test_files``."""
    from knights.evaluate.names import DEFAULT_NETWORK

    nets = shipped_networks(networks if networks is not None else [DEFAULT_NETWORK], test_files, models_dir)
    return Comparison(rows, {**predictions, **baselines(rows, train_target, nets, models_dir)})


# ---------------------------------------------------------------------------- move networks
def top_moves(model: nn.Module, spec: InputSpec, rows: Encoded, batch: int = 4096) -> np.ndarray:
    """A move network's choice per row: the argmax of its 4096 outputs (``from * 64 + to``)."""
    model.eval()
    out = []
    with torch.inference_mode():
        for start in range(0, len(rows), batch):
            block = rows.take(slice(start, start + batch))
            out.append(model(*spec.tensors(block)).float().argmax(dim=1).numpy())
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def random_legal_moves(rows: Encoded, seed: int = 0, batch: int = 4096) -> np.ndarray:
    """One legal move a row, uniformly at random (seeded): the move networks' floor."""
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, len(rows), batch):
        mask = legal_mask(rows.take(slice(start, start + batch))).numpy()
        out.append((mask * rng.random(mask.shape)).argmax(axis=1))
    return np.concatenate(out) if out else np.zeros(0, np.int64)


@dataclass
class MoveComparison:
    """Move networks' top moves (and a random legal mover's) on the same held-out rows."""

    rows: Encoded
    moves: dict[str, np.ndarray]

    @property
    def subject(self) -> str:
        return next(iter(self.moves))

    def legal(self, name: str) -> np.ndarray:
        """Whether each row's chosen move is legal."""
        moves, out = self.moves[name], []
        for start in range(0, len(moves), 4096):
            chosen = moves[start:start + 4096]
            mask = legal_mask(self.rows.take(slice(start, start + 4096))).numpy()
            out.append(mask[np.arange(len(chosen)), chosen])
        return np.concatenate(out) if out else np.zeros(0, bool)

    def metrics(self) -> pd.DataFrame:
        """The share of legal top moves and of top moves equal to the move played, rounded."""
        import pandas as pd

        played = self.rows.move >= 0
        table = {name: {"legal share": float(self.legal(name).mean()),
                        "top move = move played": float((m[played] == self.rows.move[played]).mean())}
                 for name, m in self.moves.items()}
        df = pd.DataFrame(table).T
        return rounded(df.rename_axis(f"{len(self.rows):,} held-out positions"))

    def worked(self, size: int = 190) -> tuple[Svg, pd.DataFrame]:
        """Up to four positions: the first where the top move is the move played, the first
        where it is legal but another, the first where it is illegal, and one more. Arrows:
        green the move played, red the network's."""
        import pandas as pd

        m, legal = self.moves[self.subject], self.legal(self.subject)
        played = self.rows.move
        kinds = {"the move played": (m == played), "legal, another move": legal & (m != played),
                 "illegal": ~legal}
        picks: list[int] = []
        labels: list[str] = []
        for label, mask in kinds.items():
            idx = [i for i in np.flatnonzero(mask & (played >= 0)).tolist() if i not in picks]
            if idx:
                picks.append(idx[0])
                labels.append(label)
        extra = [i for i in np.flatnonzero(played >= 0).tolist() if i not in picks][:4 - len(picks)]
        picks += extra
        labels += ["legal, another move" if legal[i] and m[i] != played[i] else
                   "the move played" if m[i] == played[i] else "illegal" for i in extra]
        table = rows_table(self.rows, picks).drop(columns=["check", "capture", "material (pawns)"])
        table[self.subject] = [_move_uci(int(m[i])) for i in picks]
        table["its move is"] = labels
        boards = boards_from_arrays(self.rows.squares[picks], self.rows.white[picks], self.rows.castling[picks],
                                    self.rows.ep[picks])
        arrows = [[(int(played[i]) // 64, int(played[i]) % 64, "#15781B80"),
                   (int(m[i]) // 64, int(m[i]) % 64, "#C8102E80")] for i in picks]
        captions = [[f"{'White' if self.rows.white[i] else 'Black'} to move: {lab}",
                     f"played {_move_uci(int(played[i]))} (green)", f"{self.subject} {_move_uci(int(m[i]))} (red)"]
                    for i, lab in zip(picks, labels, strict=True)]
        return board_grid(boards, captions, size=size, arrows=arrows), pd.DataFrame(table)


# ---------------------------------------------------------------------------- a version's run
def version_comparison(result: Result, networks: Sequence[str] | None = None) -> Comparison | MoveComparison:
    """A version's trained network on its run's held-out test rows (``result.meta["data"]["test"]``)
    beside the baselines: for an evaluation network the :func:`baselines` and the shipped
    :func:`reference_networks` that never saw those rows; for a move network a random legal
    mover and the same version as shipped."""
    version = registry.get(result.name)
    rows, files = recipe_rows(result.meta["data"]["test"])
    label = f"{version.name} (this run)"
    spec: InputSpec = version.library.INPUTS
    if version.family == "SL":
        moves = {label: top_moves(result.model, spec, rows)}
        if version.is_trained() and version.weights().resolve() != result.weights.resolve():
            shipped, _ = version.load()
            moves[f"{version.name} as shipped"] = top_moves(shipped, spec, rows)
        moves["a random legal move"] = random_legal_moves(rows)
        return MoveComparison(rows, moves)
    train, _ = recipe_rows(result.meta["data"]["train"])
    return compare(rows, {label: predict(result.model, spec, rows)}, train_target=train.target, test_files=files,
                   networks=reference_networks(result) if networks is None else networks)


# ---------------------------------------------------------------------------- what makes a version
class Html(str):
    """HTML that Jupyter shows rendered (``_repr_html_``); its text form (``text``) is
    what a terminal, a test or a diff reads."""

    text: str

    def __new__(cls, html: str, text: str) -> Html:
        out = super().__new__(cls, html)
        out.text = text
        return out

    def _repr_html_(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return self.text


def library_code(version: registry.Version) -> str:
    """A version's ``library.py`` without its docstring (the notebook's introduction is
    the docstring): the imports, INPUTS, TRAIN, DATA and the model."""
    source = version.library_path.read_text()
    import ast

    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    start = 0
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        start = first.end_lineno or 0
    return "\n".join(source.splitlines()[start:]).strip() + "\n"


def previous_version(version: registry.Version) -> registry.Version | None:
    """The version before ``version`` in its family (None for v1)."""
    known = {v.name: v for v in registry.all_versions(version.family)}
    return known.get(f"{version.family}/v{version.number - 1}")


def _highlight(code: str, lexer: str) -> str:
    from pygments import highlight  # type: ignore[import-untyped]
    from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
    from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]

    return highlight(code, get_lexer_by_name(lexer), HtmlFormatter(noclasses=True, style="default"))


def version_card(name: str) -> Html:
    """What makes version ``name``: its ``library.py`` (docstring left out), the settings
    that differ from the version before (a table), and the line diff of the two files."""
    import difflib
    import html

    version = registry.get(name)
    path = registry.repo_relative(version.library_path)
    code = library_code(version)
    parts = [f"<p><b>{html.escape(path)}</b> (its docstring is the introduction above):</p>",
             _highlight(code, "python")]
    text = [f"{path}:\n\n{code}"]
    before = previous_version(version)
    if before is None:
        parts.append(f"<p>{version.name} is the first {version.family} version: nothing before it to compare.</p>")
        text.append(f"{version.name} is the first {version.family} version.")
        return Html("\n".join(parts), "\n".join(text))
    old, new = version_settings(before), version_settings(version)
    changed = [k for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]
    rows = "".join(f"<tr><td><code>{html.escape(k)}</code></td><td>{html.escape(old.get(k, '(not set)'))}</td>"
                   f"<td>{html.escape(new.get(k, '(not set)'))}</td></tr>" for k in changed)
    parts.append(f"<p><b>What changed from {before.name}</b>: {len(changed)} of {len(new)} settings "
                 "(the rest are the same).</p>")
    parts.append(f"<table><thead><tr><th>setting</th><th>{before.name}</th><th>{version.name}</th></tr></thead>"
                 f"<tbody>{rows}</tbody></table>")
    text.append(f"changed from {before.name}:\n" + "\n".join(
        f"  {k}: {old.get(k, '(not set)')} -> {new.get(k, '(not set)')}" for k in changed))
    diff = "".join(difflib.unified_diff(library_code(before).splitlines(keepends=True), code.splitlines(keepends=True),
                                        registry.repo_relative(before.library_path), path, n=2))
    parts.append("<p>The two files, line by line (<code>-</code> the previous version's line, "
                 "<code>+</code> this version's):</p>")
    parts.append(_highlight(diff or "(the code is the same; only the docstring differs)\n", "diff"))
    text.append(diff)
    return Html("\n".join(parts), "\n".join(text))
