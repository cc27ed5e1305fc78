"""The report's figures, one function each, written as vector PDF.

Each function takes already-adapted rows (see :mod:`sources`) and a path; with
nothing to draw it writes a placeholder figure that names what is missing.
"""

from __future__ import annotations

import itertools
import math
import textwrap
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
    """Left: the training target's distribution (shares of all positions, in percent),
    forced mates as two labelled bars. Right: positions per game, mean and median marked."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(FULL, 2.3), gridspec_kw={"width_ratios": [1.4, 1]})
    edges, counts = ds["eval_hist"]["edges"], ds["eval_hist"]["counts"]
    n = ds["rows"]
    mids = [(lo + hi) / 2 for lo, hi in itertools.pairwise(edges)]
    mate, clip = ds.get("mate", 10.0), ds.get("clip", 9.0)
    a.bar(mids, [100 * c / n for c in counts], width=edges[1] - edges[0], color=BASE,
          label=f"evaluation (half-pawn bins, clipped to $\\pm${clip:g})")
    shares = [100 * ds["mates_black"] / n, 100 * ds["mates_white"] / n]
    a.bar([-mate, mate], shares, width=0.5, color=OURS, label=f"forced mate ($\\pm${mate:g})")
    for x, v in zip((-mate, mate), shares, strict=True):
        a.text(x, v, f"{v:.1f}%", ha="center", va="bottom", fontsize=6, color=OURS)
    top = max([100 * c / n for c in counts] + shares)
    for x in (-clip, clip):  # the clip piles every larger value onto one bin
        k = min(range(len(mids)), key=lambda i: abs(mids[i] - x))
        a.annotate("clipped", (mids[k], 100 * counts[k] / n), textcoords="offset points", xytext=(0, 2),
                   ha="center", va="bottom", fontsize=6, color=BASE)
    a.set_xlabel("target, pawns from White's side")
    a.set_ylabel("% of positions")
    a.set_xlim(-mate - 1.4, mate + 1.4)
    a.set_xticks([-10, -5, 0, 5, 10])
    a.set_ylim(0, top * 1.6)
    a.set_title("(a) what the networks learn")
    a.legend(frameon=False, loc="upper center", ncol=1)
    le, lc = ds["length_hist"]["edges"], ds["length_hist"]["counts"]
    b.bar([(x + y) / 2 for x, y in itertools.pairwise(le)], lc, width=le[1] - le[0], color=BASE)
    ppg = ds["positions_per_game"]
    b.axvline(ppg["mean"], color=OURS, lw=1, label=f"mean {ppg['mean']:.0f}")
    b.axvline(ppg["median"], color="black", lw=1, ls="--", label=f"median {ppg['median']:.0f}")
    b.set_xlabel(f"positions per game (bins of {le[1] - le[0]})")
    b.set_ylabel("games")
    b.set_title("(b) game lengths")
    b.legend(frameon=False, loc="upper right")
    fig.tight_layout()
    return _save(fig, path)


# -- networks ---------------------------------------------------------------------------------------
def loss_bars(histories: dict[str, dict | None], path: Path, *, ylabel: str, missing: str) -> Path:
    """Runs of one or two epochs: the last training and validation loss of each as
    labelled bars (a line through one point says nothing)."""
    names = list(histories)
    fig, ax = plt.subplots(figsize=(FULL * 0.75, 2.0))
    for i, name in enumerate(names):
        h = histories[name]
        if not h:
            ax.text(i, 0, missing.replace("\n", " "), ha="center", va="bottom", fontsize=6, color="red", rotation=90)
            continue
        pairs = [(-0.2, h["train_loss"][-1], BASE), (0.2, (h["val_loss"] or [None])[-1], OURS)]
        for dx, v, c in pairs:
            if v is None:
                continue
            ax.bar(i + dx, v, 0.4, color=c)
            ax.text(i + dx, v, f"{v:.3g}", ha="center", va="bottom", fontsize=6)
    ax.set_xticks(range(len(names)), [n + (f"\n({len(histories[n]['train_loss'])} epoch"
                                          + ("s" if len(histories[n]["train_loss"]) > 1 else "") + ")"
                                          if histories[n] else "") for n in names])
    values = [v for h in histories.values() if h for v in (h["train_loss"][-1], (h["val_loss"] or [None])[-1])
              if v is not None]
    if values and min(values) > 0 and max(values) / min(values) > 20:
        ax.set_yscale("log")
        ax.set_ylim(min(values) / 2, max(values) * 12)
    elif values:
        ax.set_ylim(0, max(values) * 1.25)
    ax.set_ylabel(ylabel + ", last epoch")
    handles = [plt.Rectangle((0, 0), 1, 1, color=BASE, label="train"),
               plt.Rectangle((0, 0), 1, 1, color=OURS, label="validation")]
    ax.legend(handles=handles, frameon=False, loc="upper right", ncol=2)
    return _save(fig, path)


def loss_grid(histories: dict[str, dict | None], path: Path, *, cols: int = 4, ylabel: str = "L1 loss (pawns)",
              missing: str = "not trained yet") -> Path:
    """Loss per epoch, one panel a version (runs of at most two epochs: :func:`loss_bars`)."""
    if max((len(h["train_loss"]) for h in histories.values() if h), default=0) <= 2:
        return loss_bars(histories, path, ylabel=ylabel, missing=missing)
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
        other_unit = h.get("train_loss_name") not in (None, h.get("val_loss_name"))
        if other_unit:   # e.g. a bucket network's cross-entropy: not on a pawns axis
            note = textwrap.fill(f"train loss: {h['train_loss_name']}", 24) + "\n(another unit, not drawn)"
            ax.text(0.97, 0.95, note,
                    transform=ax.transAxes, ha="right", va="top", fontsize=5, color="0.35")
        else:
            ax.plot(ep, h["train_loss"], "o-", ms=2.5, lw=1, color=BASE, label="train")
        if any(v is not None for v in h["val_loss"]):
            ax.plot(ep[:len(h["val_loss"])], h["val_loss"], "s-", ms=2.5, lw=1, color=OURS, label="validation")
        values = [v for v in ([] if other_unit else h["train_loss"]) + h["val_loss"] if v is not None]
        if values and min(values) > 0 and max(values) / min(values) > 20:
            ax.set_yscale("log")  # the move networks' penalty term spans decades
        ax.grid(alpha=0.3)
        ax.xaxis.get_major_locator().set_params(integer=True)
        if h.get("kept_epoch"):
            ax.axvline(h["kept_epoch"], color="black", lw=0.8, ls=":")
        if i % cols == 0:
            ax.set_ylabel(ylabel)
        if i >= len(names) - cols:
            ax.set_xlabel("epoch")
    handles = [plt.Line2D([], [], color=BASE, marker="o", ms=3, label="train"),
               plt.Line2D([], [], color=OURS, marker="s", ms=3, label="validation"),
               plt.Line2D([], [], color="black", ls=":", lw=0.8, label="epoch shipped")]
    fig.legend(handles=handles, loc="upper center", ncol=3, frameon=False, bbox_to_anchor=(0.5, 1.02))
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
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=BASE, label="network"),
                       plt.Rectangle((0, 0), 1, 1, color=GREY, label="baseline")], frameon=False, loc="lower right")
    return _save(fig, path)


def legal_share(rows: list[dict], path: Path) -> Path:
    """Per move network: share of test positions whose top-scored move is legal, and is
    the move played, in percent, each bar labelled; the axis ends just above the tallest."""
    rows = [r for r in rows if r.get("legal_share") is not None]
    fig, ax = plt.subplots(figsize=(HALF + 0.4, 1.9))
    x = range(len(rows))
    legal = [100 * r["legal_share"] for r in rows]
    played = [100 * (r["top1_played"] or 0) for r in rows]
    ax.bar([i - 0.2 for i in x], legal, 0.4, color=BASE, label="top move legal")
    ax.bar([i + 0.2 for i in x], played, 0.4, color=OURS, label="top move = move played")
    for i in x:
        ax.text(i - 0.2, legal[i], f"{legal[i]:.1f}", ha="center", va="bottom", fontsize=6)
        ax.text(i + 0.2, played[i], f"{played[i]:.1f}", ha="center", va="bottom", fontsize=6)
    ax.set_xticks(list(x), [r["name"] for r in rows])
    ax.set_ylabel("% of test positions")
    ax.set_ylim(0, max([*legal, *played, 1.0]) * 1.45)
    ax.legend(frameon=False, loc="upper left")
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
        ax.text(b[1], y, f" {b[1]:.3g} ms", va="center", fontsize=6)
    ax.set_yticks(ys, [b[0] for b in bars])
    ax.set_xscale("log")
    ax.set_xlim(min(b[1] for b in bars) / 2, max(b[1] for b in bars) * 4)
    ax.set_xlabel("milliseconds per move decision (log scale; fewer is faster)")
    present = {b[2] for b in bars}
    names = {"ours": "our engine", "baseline": "the original's way", "member": "a democracy member alone"}
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colours[k], label=names[k]) for k in names if k in present],
              frameon=False, loc="upper center", bbox_to_anchor=(0.4, -0.16), ncol=3)
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
    fig, ax = plt.subplots(figsize=(FULL, 0.17 * len(players) + 0.8))
    ys = list(range(len(players)))[::-1]
    for y, p in zip(ys, players, strict=False):
        c = colours.get(p["kind"], BASE)
        if p["kind"] == "anchor" or p["low"] is None:
            ax.plot(p["rating"], y, "D", color=c, ms=4)
        else:
            ax.errorbar(p["rating"], y, xerr=[[p["rating"] - p["low"]], [p["high"] - p["rating"]]], fmt="o",
                        color=c, ms=3.5, capsize=2, lw=1)
    ax.set_yticks(ys, [p["name"].removeprefix("ours:") + (" (shipped)" if p["shipped"] else "") for p in players])
    ax.set_xlabel("Elo (Stockfish UCI_Elo anchors fixed; bars: 95% interval)")
    ax.grid(axis="x", alpha=0.3)
    handles = [plt.Line2D([], [], marker=m, ls="", color=colours[k], label=t)
               for k, m, t in (("ours", "o", "ours"), ("opponent", "o", "opponents"), ("anchor", "D", "anchors"))]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    return _save(fig, path)


# -- speed -------------------------------------------------------------------------------------------
def bench_ratios(rows: list[tuple[str, float, bool | None]], path: Path) -> Path:
    """``rows``: (label, how far past its target a benchmark is, met). The factor is
    value / target, or target / value for a time (so more than 1 always means met);
    log scale, the target at 1."""
    fig, ax = plt.subplots(figsize=(HALF + 0.7, 0.22 * len(rows) + 0.8))
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [r[1] for r in rows], color=[BASE if r[2] else MISS for r in rows])
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xlim(min(min(r[1] for r in rows) / 2, 0.5), max(r[1] for r in rows) * 5)
    ax.set_yticks(ys, [r[0] for r in rows])
    ax.set_xlabel("times better than the target (log scale; dashed: the target)")
    for y, r in zip(ys, rows, strict=False):
        ax.text(r[1], y, f" {r[1]:.3g}" + "$\\times$", va="center", fontsize=6)
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=BASE, label="target met"),
                       plt.Rectangle((0, 0), 1, 1, color=MISS, label="target missed")],
              frameon=False, loc="lower right")
    return _save(fig, path)


# -- independent test sets ----------------------------------------------------------------------
BUCKET_ORDER = ("< 1", "1-3", "3-6", ">= 6", "mate")


def independent_buckets(sets: list[dict], names: list[str], path: Path) -> Path:
    """MAE by |eval| bucket, one panel a set, one line an evaluator (``names``, in that
    order; the first ones are drawn strongest)."""
    fig, axes = plt.subplots(1, len(sets), figsize=(FULL, 2.1), squeeze=False, sharey=True)
    styles = [(OURS, "o-"), (BASE, "s-"), (GREY, "^--"), ("black", "d:"), (MISS, "v-.")]
    for ax, st in zip(axes.flat, sets, strict=True):
        rows = {r["name"]: r for r in st["evaluation"]}
        for (colour, style), name in zip(styles, names, strict=False):
            r = rows.get(name)
            if not r:
                continue
            xs = [i for i, b in enumerate(BUCKET_ORDER) if r["buckets"].get(b, {}).get("mae") is not None]
            ax.plot(xs, [r["buckets"][BUCKET_ORDER[i]]["mae"] for i in xs], style, color=colour, ms=3, lw=1,
                    label=name)
        counts = [st["evaluation"][0]["buckets"].get(b, {}).get("rows") if st["evaluation"] else None
                  for b in BUCKET_ORDER]
        ax.set_xticks(range(len(BUCKET_ORDER)),
                      [f"{b}\n({c:.0f})" if c is not None else b for b, c in zip(BUCKET_ORDER, counts, strict=True)])
        ax.set_title(f"{st['name']} ({st['rows']:,.0f} positions)")
        ax.grid(alpha=0.3)
    axes.flat[0].set_ylabel("MAE (pawns)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), frameon=False, bbox_to_anchor=(0.5, 1.07))
    fig.supxlabel("|Stockfish's evaluation| in pawns (positions in that bucket)", fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


def predicted_vs_stockfish(result: dict, path: Path) -> Path:
    """Hexbin of the network's evaluation against Stockfish's label, one panel a set,
    counts on a log scale; the diagonal is a perfect prediction."""
    sets = result["sets"]
    fig, axes = plt.subplots(1, len(sets), figsize=(FULL, 2.7), squeeze=False, layout="constrained")
    lim = 10.5
    last = None
    for ax, st in zip(axes.flat, sets, strict=True):
        x, y = st["target"], st["network"]
        last = ax.hexbin(x, y, gridsize=32, extent=(-lim, lim, -lim, lim), bins="log", cmap="viridis", mincnt=1,
                         linewidths=0.1)
        ax.plot([-lim, lim], [-lim, lim], color=OURS, lw=0.8, ls="--", label="prediction = label")
        mae = float(abs(y.astype("float64") - x).mean())
        ax.set_title(f"{st['name']}\nMAE {mae:.2f}, {len(x):,} positions")
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_xlabel("Stockfish (pawns)")
        ax.set_xticks([-10, -5, 0, 5, 10])
        ax.set_yticks([-10, -5, 0, 5, 10])
    axes.flat[0].set_ylabel(f"{result['network']} (pawns)")
    axes.flat[0].legend(frameon=False, loc="upper left", fontsize=6)
    if last is not None:
        bar = fig.colorbar(last, ax=list(axes.flat), shrink=0.85, pad=0.01)
        bar.set_label("positions per cell")
    return _save(fig, path)


# -- boards ------------------------------------------------------------------------------------
GLYPHS = {"k": "\u265a", "q": "\u265b", "r": "\u265c", "b": "\u265d", "n": "\u265e", "p": "\u265f"}
LIGHT, DARK = "#f0d9b5", "#b58863"


def draw_board(ax, fen: str) -> None:
    """A chess diagram from a FEN with matplotlib alone: squares as rectangles, pieces as
    DejaVu Sans chess glyphs (the filled ones, White's drawn white with a black outline),
    White at the bottom, files and ranks labelled."""
    from matplotlib import patheffects

    placement = fen.split()[0]
    for r in range(8):
        for f in range(8):
            ax.add_patch(plt.Rectangle((f, r), 1, 1, color=LIGHT if (r + f) % 2 else DARK, lw=0))
    for i, rank in enumerate(placement.split("/")):
        f = 0
        for ch in rank:
            if ch.isdigit():
                f += int(ch)
                continue
            white = ch.isupper()
            ax.text(f + 0.5, 7 - i + 0.46, GLYPHS[ch.lower()], ha="center", va="center", fontsize=11.5,
                    family="DejaVu Sans", color="white" if white else "black",
                    path_effects=[patheffects.withStroke(linewidth=1.1, foreground="black")] if white else None)
            f += 1
    ax.set_xlim(0, 8)
    ax.set_ylim(0, 8)
    ax.set_aspect("equal")
    ax.set_xticks([f + 0.5 for f in range(8)], list("abcdefgh"), fontsize=5.5)
    ax.set_yticks([r + 0.5 for r in range(8)], [str(r + 1) for r in range(8)], fontsize=5.5)
    ax.tick_params(length=0, pad=1.5)
    for spine in ax.spines.values():
        spine.set_visible(True)
        spine.set_linewidth(0.6)


def boards(examples: list[dict], network: str, path: Path) -> Path:
    """The example positions side by side, each with Stockfish's label, the network's
    and counting material's evaluation (pawns, White's side) and the side to move."""
    fig, axes = plt.subplots(1, len(examples), figsize=(FULL, 2.45), squeeze=False)
    for k, (ax, ex) in enumerate(zip(axes.flat, examples, strict=True)):
        draw_board(ax, ex["fen"])
        turn = "White" if ex["fen"].split()[1] == "w" else "Black"
        ax.set_title(f"({chr(ord('a') + k)}) {ex['set']}:\n{ex['why']}", fontsize=6.5)
        ax.set_xlabel(f"Stockfish {ex['target']:+.2f}, {network} {ex['network']:+.2f}\n"
                      f"material {ex['material']:+.0f}; {turn} to move", fontsize=6.5)
    fig.tight_layout(w_pad=0.6)
    return _save(fig, path)


# -- search ----------------------------------------------------------------------------------
def search_strength(points: list[dict], anchors: dict[str, float], path: Path) -> Path:
    """``points``: (label, rating, low, high, kind "ours" / "search"); anchors as
    vertical lines, each named."""
    fig, ax = plt.subplots(figsize=(FULL, 0.32 * len(points) + 0.9))
    ys = list(range(len(points)))[::-1]
    colours = {"ours": GREY, "search": OURS}
    for y, p in zip(ys, points, strict=True):
        c = colours.get(p["kind"], BASE)
        if p["low"] is not None and p["high"] is not None:
            ax.errorbar(p["rating"], y, xerr=[[p["rating"] - p["low"]], [p["high"] - p["rating"]]], fmt="o",
                        color=c, ms=4, capsize=2.5, lw=1.2)
        else:
            ax.plot(p["rating"], y, "o", color=c, ms=4)
        ax.text(p["rating"], y + 0.22, f"{p['rating']:.0f}", ha="center", va="bottom", fontsize=6)
    for name, rating in sorted(anchors.items(), key=lambda kv: kv[1]):
        ax.axvline(rating, color="black", lw=0.6, ls=":")
        ax.text(rating, len(points) - 0.35, f" {name}", rotation=90, va="top", ha="right", fontsize=5.5)
    ax.set_yticks(ys, [p["label"] for p in points])
    ax.set_ylim(-0.6, len(points) - 0.2)
    ax.set_xlabel("Elo (Stockfish UCI_Elo anchors fixed; bars: 95% interval)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(handles=[plt.Line2D([], [], marker="o", ls="", color=GREY, label="one ply (the paper's bot)"),
                       plt.Line2D([], [], marker="o", ls="", color=OURS, label="alpha-beta search")],
              loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return _save(fig, path)
