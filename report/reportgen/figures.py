"""The report's figures, drawn from the same context as the template (matplotlib, PDF)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from .data import SETS

plt.rcParams.update({"font.size": 8, "axes.spines.top": False, "axes.spines.right": False,
                     "pdf.fonttype": 42, "svg.hashsalt": "knights", "path.simplify": True})


def save(fig: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, bbox_inches="tight", metadata={"CreationDate": None, "ModDate": None})
    plt.close(fig)


def losses(meta: dict[str, Any], path: Path) -> None:
    """Each EL version's validation loss by epoch, its best epoch marked."""
    names = [n for n in meta if n.startswith("EL/") and meta[n].get("history", {}).get("val_loss")]
    cols = 5
    fig, axes = plt.subplots((len(names) + cols - 1) // cols, cols, figsize=(7.2, 1.35 * ((len(names) + 4) // 5)))
    for ax, name in zip(axes.flat, names, strict=False):
        h = meta[name]["history"]
        epochs = range(1, len(h["val_loss"]) + 1)
        ax.plot(epochs, h["train_loss"], color="0.6", lw=1, label="train")
        ax.plot(epochs, h["val_loss"], color="C0", lw=1.2, label="validation")
        best = min(range(len(h["val_loss"])), key=h["val_loss"].__getitem__)
        ax.plot([best + 1], [h["val_loss"][best]], "o", color="C3", ms=3)
        ax.set_title(name, fontsize=8, pad=4)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4, integer=True))
        ax.tick_params(labelsize=6)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6, frameon=False)
    fig.tight_layout(pad=0.4, h_pad=1.4)                  # room between a panel's title and the ticks above it
    save(fig, path)


def quiet(by_model: dict[str, Any], nets: list[str], path: Path) -> None:
    """Quiet, level positions: every network's MAE on each independent set, material and
    Stockfish at depth 1 as lines."""
    fig, axes = plt.subplots(3, 1, figsize=(7.2, 4.6), sharex=True)     # one panel a set: room for every label
    for ax, st in zip(axes, SETS, strict=True):
        vals = [by_model[n][st]["quiet_level_mae"] for n in nets]
        top = 2.5 * sorted(vals)[len(vals) // 2]          # a diverged version would flatten the rest
        ax.bar(range(len(nets)), [min(v, top) for v in vals], color="C0")
        for i, v in enumerate(vals):
            if v > top:
                ax.text(i, top, f"{v:.1f}", ha="center", va="bottom", fontsize=7)
        ax.set_ylim(0, top * 1.2)
        for base, style in (("material", "--"), ("stockfish depth 1", ":")):
            ax.axhline(by_model[base][st]["quiet_level_mae"], color="C3", ls=style, lw=1, label=base)
        ax.set_title(st, fontsize=9, loc="left", pad=3)
        ax.tick_params(labelsize=8)
    axes[-1].set_xticks(range(len(nets)), [n.removeprefix("EL/") for n in nets], fontsize=8)
    axes[-1].set_xlim(-0.6, len(nets) - 0.4)
    axes[1].set_ylabel("MAE (pawns), quiet, |eval| <= 1", fontsize=8)
    axes[0].legend(fontsize=7, frameon=False, ncol=2, loc="upper right")
    fig.tight_layout(pad=0.4, h_pad=0.8)
    save(fig, path)


def ladder(elo: dict[str, Any], runs: list[dict[str, Any]], path: Path) -> None:
    """Every rated player with its 95% interval; the searching bot's runs added."""
    def label(p: dict[str, Any]) -> str:
        return p["label"].replace(" (one ply, stochastic)", "").replace("[shipped bot]", "[the one-ply bot]")

    rows = [(label(p), p["rating"], p["low"], p["high"], p["kind"]) for p in elo["players"] if not p["relative"]]
    rows += [(r["player"], r["rating"], r["low"], r["high"], "search") for r in runs]
    rows.sort(key=lambda r: r[1])
    fig, ax = plt.subplots(figsize=(7.2, 0.12 * len(rows) + 0.7))    # the page's width
    colours = {"anchor": "0.4", "opponent": "0.6", "search": "C3"}
    for i, (_, rating, low, high, kind) in enumerate(rows):
        c = colours.get(kind, "C0")
        ax.errorbar(rating, i, xerr=[[rating - low], [high - rating]], fmt="o", color=c, ms=3, capsize=2, lw=1)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=7.5)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel("Elo (anchored on Stockfish UCI_Elo levels)", fontsize=8)
    fig.tight_layout(pad=0.4)
    save(fig, path)


def move_depth(quality: dict[str, Any], player: str, path: Path) -> None:
    """How often Stockfish's own move at each depth is its depth-10 best, on every position and where that best move is
    quiet, against the one-ply ``player``'s share and the half the issue asks of it."""
    depths = quality["stockfish_by_depth"]
    x = [d["depth"] for d in depths]
    ours = quality["by_best_kind"][player]
    fig, ax = plt.subplots(figsize=(4.6, 2.2))
    ax.plot(x, [d["best_move_share"] for d in depths], "o-", color="C3", ms=3, lw=1.2, label="Stockfish at depth d")
    ax.plot(x, [d["by_best_kind"]["quiet"]["best_move_share"] for d in depths], "o--", color="C3", ms=3, lw=1,
            label="the same, quiet best moves")
    positions = sum(v["positions"] for v in ours.values())
    played = sum(v["best_move_share"] * v["positions"] for v in ours.values()) / positions   # its share on every kind
    ax.axhline(played, color="C0", lw=1.2, label=f"{player}, one ply")
    ax.axhline(ours["quiet"]["best_move_share"], color="C0", ls="--", lw=1, label=f"{player}, quiet best moves")
    ax.axhline(0.5, color="0.5", ls=":", lw=1, label="one half")
    shown = [line.get_ydata() for line in ax.get_lines()]
    ax.set_ylim(min(min(y) for y in shown) - 0.03, max(max(y) for y in shown) + 0.03)
    ax.set_xticks(x)
    ax.set_xlabel("Stockfish's search depth")
    ax.set_ylabel("share of its depth-10 best move")
    ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0, decimals=0))
    ax.legend(fontsize=6, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout(pad=0.4)
    save(fig, path)


def draw_all(ctx: dict[str, Any], out: Path) -> None:
    losses(ctx["meta"].plain(), out / "loss.pdf")
    quiet(ctx["by_model"].plain(), ctx["networks_ind"], out / "quiet.pdf")
    ladder(ctx["elo"].plain(), ctx["search_runs"], out / "ladder.pdf")
    quality = next((st["move_quality"] for st in ctx["independent"].plain()["sets"] if st.get("move_quality")), None)
    player = ctx["settings"].plain()["engine"]["one_ply_evaluator"]
    if quality and len(quality.get("stockfish_by_depth") or []) > 1 and player in quality.get("by_best_kind", {}):
        move_depth(quality, player, out / "depth.pdf")    # the template's condition (depth_drawn)
