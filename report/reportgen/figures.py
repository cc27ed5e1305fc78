"""The report's figures, one function each, written as vector PDF.

Each function takes already-adapted rows (see :mod:`sources`) and a path; with
nothing to draw it writes a placeholder figure that names what is missing.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

FULL, HALF = 6.3, 3.1   # inches: text width of the report, and half of it
OURS, BASE, GREY, MISS = "#c0392b", "#2c7fb8", "#888888", "#e67e22"

plt.rcParams.update({"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 7,
                     "xtick.labelsize": 7, "ytick.labelsize": 7, "pdf.fonttype": 42,
                     "axes.spines.top": False, "axes.spines.right": False, "savefig.bbox": "tight",
                     "savefig.pad_inches": 0.02})


def _save(fig, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"CreationDate": None, "ModDate": None})
    plt.close(fig)
    return path


def _empty(ax, text: str) -> None:
    ax.set_xticks([])
    ax.set_yticks([])
    for s in ax.spines.values():
        s.set_visible(True)
        s.set_linestyle(":")
        s.set_color(GREY)
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="red", wrap=True, fontsize=7)


def placeholder(path: Path, why: str, width: float = FULL, height: float = 1.2) -> Path:
    fig, ax = plt.subplots(figsize=(width, height))
    _empty(ax, "not yet measured\n" + why)
    return _save(fig, path)


# -- data ------------------------------------------------------------------------------------------
def data_stats(ds: dict, path: Path) -> Path:
    fig, (a, b) = plt.subplots(1, 2, figsize=(FULL, 2.2), gridspec_kw={"width_ratios": [1.4, 1]})
    edges, counts = ds["eval_hist"]["edges"], ds["eval_hist"]["counts"]
    n = ds["rows"]
    mids = [(lo + hi) / 2 for lo, hi in itertools.pairwise(edges)]
    mate, clip = ds.get("mate", 10.0), ds.get("clip", 9.0)
    a.bar(mids, [c / n for c in counts], width=edges[1] - edges[0], color=BASE,
          label=f"evaluation (clipped to $\\pm${clip:g})")
    a.bar([-mate, mate], [ds["mates_black"] / n, ds["mates_white"] / n], width=0.5, color=OURS,
          label=f"forced mate ($\\pm${mate:g})")
    a.set_xlabel("target, pawns from White's side")
    a.set_ylabel("share of positions")
    a.set_xlim(-mate - 0.6, mate + 0.6)
    a.legend(frameon=False, loc="upper center")
    le, lc = ds["length_hist"]["edges"], ds["length_hist"]["counts"]
    b.bar([(x + y) / 2 for x, y in itertools.pairwise(le)], lc, width=le[1] - le[0], color=BASE)
    b.set_xlabel("positions per game")
    b.set_ylabel("games")
    return _save(fig, path)


# -- networks ---------------------------------------------------------------------------------------
def loss_grid(histories: dict[str, dict | None], path: Path, *, cols: int = 4, ylabel: str = "L1 loss (pawns)",
              missing: str = "not trained yet") -> Path:
    names = list(histories)
    rows = max(1, math.ceil(len(names) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(FULL, 1.55 * rows + 0.3), squeeze=False)
    for i, ax in enumerate(axes.flat):
        if i >= len(names):
            ax.axis("off")
            continue
        name, h = names[i], histories[names[i]]
        ax.set_title(name + (" (quick run)" if h and h.get("quick") else ""))
        if not h:
            _empty(ax, missing)
            continue
        ep = list(range(1, len(h["train_loss"]) + 1))
        ax.plot(ep, h["train_loss"], "o-", ms=2.5, lw=1, color=BASE, label="train")
        if any(v is not None for v in h["val_loss"]):
            ax.plot(ep[:len(h["val_loss"])], h["val_loss"], "s-", ms=2.5, lw=1, color=OURS, label="validation")
        values = [v for v in h["train_loss"] + h["val_loss"] if v is not None]
        if values and min(values) > 0 and max(values) / min(values) > 20:
            ax.set_yscale("log")  # the move networks' penalty term spans decades
        ax.grid(alpha=0.3)
        ax.xaxis.get_major_locator().set_params(integer=True)
        if i % cols == 0:
            ax.set_ylabel(ylabel)
        if i >= len(names) - cols:
            ax.set_xlabel("epoch")
    handles = [plt.Line2D([], [], color=BASE, marker="o", ms=3, label="train"),
               plt.Line2D([], [], color=OURS, marker="s", ms=3, label="validation")]
    fig.legend(handles=handles, loc="upper center", ncol=2, frameon=False, bbox_to_anchor=(0.5, 1.02))
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return _save(fig, path)


def mae_bars(rows: list[dict], path: Path) -> Path:
    rows = [r for r in rows if r.get("mae") is not None]
    fig, ax = plt.subplots(figsize=(HALF + 0.4, 0.22 * len(rows) + 0.6))
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [r["mae"] for r in rows], color=[GREY if r["kind"] == "baseline" else BASE for r in rows])
    for y, r in zip(ys, rows, strict=False):
        ax.text(r["mae"], y, f" {r['mae']:.2f}", va="center", fontsize=6)
    ax.set_yticks(ys, [r["name"] for r in rows])
    ax.set_xlabel("held-out MAE (pawns)")
    ax.set_xlim(0, max(r["mae"] for r in rows) * 1.18)
    return _save(fig, path)


def legal_share(rows: list[dict], path: Path) -> Path:
    rows = [r for r in rows if r.get("legal_share") is not None]
    fig, ax = plt.subplots(figsize=(HALF, 1.7))
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], [100 * r["legal_share"] for r in rows], 0.4, color=BASE, label="top move legal")
    ax.bar([i + 0.2 for i in x], [100 * (r["top1_played"] or 0) for r in rows], 0.4, color=OURS,
           label="top move = move played")
    ax.set_xticks(list(x), [r["name"] for r in rows])
    ax.set_ylabel("% of test positions")
    ax.set_ylim(0, 100)
    ax.legend(frameon=False, loc="upper right")
    return _save(fig, path)


# -- ensemble ---------------------------------------------------------------------------------------
def k_sweep(s: dict, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(HALF, 1.9))
    ax.plot(s["ks"], s["mae"], "o-", ms=2.5, lw=1, color=BASE)
    best = s["best_k"]
    best_mae = min(m for k, m in zip(s["ks"], s["mae"], strict=False) if k == best)
    ax.plot([best], [best_mae], "o", ms=6, mfc="none", color=OURS)
    ax.annotate(f"K = {best:.0f}", (best, best_mae), textcoords="offset points", xytext=(6, 8), color=OURS, fontsize=7)
    ax.set_xlabel("K (neighbours, distance-weighted)")
    ax.set_ylabel("validation MAE (pawns)")
    ax.grid(alpha=0.3)
    return _save(fig, path)


# -- playing -----------------------------------------------------------------------------------------
def latency(bars: list[tuple[str, float, str]], path: Path) -> Path:
    """``bars``: (label, milliseconds, "ours" / "baseline" / "member")."""
    colours = {"ours": OURS, "baseline": GREY, "member": BASE}
    fig, ax = plt.subplots(figsize=(HALF + 0.5, 0.22 * len(bars) + 0.7))
    ys = list(range(len(bars)))[::-1]
    ax.barh(ys, [b[1] for b in bars], color=[colours.get(b[2], BASE) for b in bars])
    for y, b in zip(ys, bars, strict=False):
        ax.text(b[1], y, f" {b[1]:.3g}", va="center", fontsize=6)
    ax.set_yticks(ys, [b[0] for b in bars])
    ax.set_xscale("log")
    ax.set_xlabel("milliseconds per move decision (log scale)")
    return _save(fig, path)


def soak(sk: dict, path: Path) -> Path:
    """Outcomes of the soak games: against a random mover (from the bot's side) and
    in self-play (from White's side)."""
    groups = [("against a random mover", sk["vs_random"]), ("self-play (White's result)", sk["self_play"])]
    groups = [(t, g) for t, g in groups if g]
    fig, axes = plt.subplots(1, max(1, len(groups)), figsize=(FULL, 1.7), squeeze=False)
    for ax, (title, counts) in zip(axes.flat, groups, strict=False):
        names = list(counts)
        ax.bar(range(len(names)), [counts[n] for n in names], color=BASE)
        for i, n in enumerate(names):
            ax.text(i, counts[n], f"{counts[n]:.0f}", ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(names)), names)
        ax.set_title(title)
        ax.set_ylabel("games")
    return _save(fig, path)


def elo(players: list[dict], path: Path) -> Path:
    colours = {"anchor": GREY, "opponent": BASE, "ours": OURS}
    fig, ax = plt.subplots(figsize=(FULL, 0.2 * len(players) + 0.7))
    ys = list(range(len(players)))[::-1]
    for y, p in zip(ys, players, strict=False):
        c = colours.get(p["kind"], BASE)
        if p["kind"] == "anchor" or p["low"] is None:
            ax.plot(p["rating"], y, "D", color=c, ms=4)
        else:
            ax.errorbar(p["rating"], y, xerr=[[p["rating"] - p["low"]], [p["high"] - p["rating"]]], fmt="o",
                        color=c, ms=3.5, capsize=2, lw=1)
    ax.set_yticks(ys, [p["label"] + ("  [shipped]" if p["shipped"] and "shipped" not in p["label"] else "")
                       for p in players])
    ax.set_xlabel("Elo (Stockfish UCI_Elo anchors fixed; bars: 95% interval)")
    ax.grid(axis="x", alpha=0.3)
    handles = [plt.Line2D([], [], marker=m, ls="", color=colours[k], label=t)
               for k, m, t in (("ours", "o", "ours"), ("opponent", "o", "opponents"), ("anchor", "D", "anchors"))]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    return _save(fig, path)


# -- speed -------------------------------------------------------------------------------------------
def bench_ratios(entries: list[dict], path: Path) -> Path:
    """Each benchmark's achieved value over its target (1 = target met), log scale."""
    rows = []
    for b in entries:
        value = b["ratio"] if b["metric"] == "ratio" else b["rate"]
        if value is None or not b["target"]:
            continue
        rows.append((b["name"] + (" (quick)" if b["quick"] else ""), value / b["target"], b["status"]))
    fig, ax = plt.subplots(figsize=(HALF + 0.5, 0.22 * len(rows) + 0.7))
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [r[1] for r in rows], color=[BASE if r[2] == "PASS" else MISS for r in rows])
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_yticks(ys, [r[0] for r in rows])
    ax.set_xlabel("achieved / target (log scale; dashed: target)")
    for y, r in zip(ys, rows, strict=False):
        ax.text(r[1], y, f" {r[2]}", va="center", fontsize=6)
    return _save(fig, path)
