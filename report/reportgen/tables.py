"""The report's tables, one function each, returning a booktabs ``tabular``.

Inputs are adapted rows (:mod:`sources`): measured results and the code's settings
(``settings.json``); missing values become a red ``n/m`` cell, a missing table a
placeholder naming the command that will produce it.
"""

from __future__ import annotations

import itertools
import re

from .sources import bench_kind, bench_measure, bench_met, epochs_trained, training_rate
from .tex import (
    PENDING,
    cell,
    code,
    column_count,
    esc,
    fmt,
    fmt_int,
    fmt_pct,
    fmt_seconds,
    fmt_sig,
    placeholder_table,
    tabular,
)

PLANE_WORDS = {"signed": "signed", "six": "6 planes", "twelve": "12 planes", "three": "3 planes", "none": "64 codes"}


def inputs_text(inputs: dict) -> str:
    """A version's ``InputSpec`` in words: ``signed + turn, check``; ``6 planes, attack maps + counts, gains``."""
    planes = PLANE_WORDS.get(inputs.get("planes"), str(inputs.get("planes")))
    planes += ", attack maps" if inputs.get("attacks") else ""
    extras = list(inputs.get("scalars", ())) + [k for k in ("counts", "gains") if inputs.get(k)]
    return esc(planes + (" + " + ", ".join(extras) if extras else ""))


def optimiser_text(train: dict) -> str:
    """``Adam 0.002``; ``SGD 0.035, m 0.9`` (from a version's ``TrainConfig``)."""
    if not train.get("optimizer"):
        return "--"
    names = {"adam": "Adam", "adamw": "AdamW", "sgd": "SGD"}
    text = f"{names.get(train['optimizer'], str(train['optimizer']))} {train.get('lr')}"
    if train.get("optimizer") == "sgd" and train.get("momentum"):
        text += f", m {train['momentum']}"
    return esc(text)


def layers_text(layers: dict) -> str:
    """``Conv(6,16,k5) FC(1090,384,1)``: each convolution (in, out channels, kernel),
    repeats counted (``8x Conv(32,32,k3)``), then the fully connected widths, breakable
    between layers. A model whose linear layers are not one chain down to a single
    output (a transformer, a bucket head) gets their count instead of a misleading chain."""
    parts: list[str] = []
    convs = [tuple(c) for c in layers.get("convs", []) if isinstance(c, list | tuple) and len(c) == 3]
    for conv, group in itertools.groupby(convs):
        n = len(list(group))
        parts.append((f"{n}x " if n > 1 else "") + "Conv({},{},k{})".format(*conv))
    widths = [w for w in layers.get("widths", []) if isinstance(w, int)]
    if widths and widths[-1] == 1 and len(widths) <= 4:
        parts.append("FC(" + ",".join(str(w) for w in widths) + ")")
    elif widths:
        parts.append(f"{len(widths)} linear widths, up to {max(widths)}")
    if not parts:
        return "--"
    return r"\texttt{" + r"\allowbreak{} ".join(esc(p) for p in parts) + "}"


def dash(x, formatter=None, **kw) -> str:
    """A declared setting: its value, or ``--`` when the version does not declare it
    (a statement, not a measurement that is missing)."""
    return "--" if x is None else cell(x, formatter, **kw)


def epochs_text(lib: dict, run: dict | None, hist: dict | None) -> str:
    """``original / shipped``: the version's own epoch count (the notebooks' default)
    and the epochs its shipped weights were trained for; ``--`` for a version not
    trained yet (Table ``el_versions``'s note says so)."""
    return f"{dash(lib['train'].get('epochs'), fmt_int)} / {dash(epochs_trained(run, hist), fmt_int)}"


# -- data ----------------------------------------------------------------------------------------------
def recipe(gen: dict, data: dict, chunks: dict | None, stockfish: str | None, used: dict) -> str:
    """The data recipe: ``gen`` as ``make data`` ran it (:func:`sources.dataset_generation`),
    ``data`` the generator's settings (``settings.json``), ``chunks`` the full dataset's
    statistics (files per suffix letter), ``used`` the splits a trained model saw."""
    eps = ", ".join(f"{e:g}" for e in data.get("epsilons", ()))
    lo, hi = data.get("opening_plies") or (None, None)
    per_letter = sorted(set((chunks or {}).get("letters", {}).values()))
    rows = [
        ["Labels", (esc(stockfish) if stockfish else "Stockfish") + f" at depth {cell(gen['depth'], fmt_int)}, "
         "one search per position (label and the engine's best move)"],
        ["Size, seed", f"{cell(gen['rows'], fmt_int)} positions in {cell(gen['games'], fmt_int)} games, "
         f"seed {cell(gen['seed'], '{:.0f}'.format)}"],
        ["Players", "Stockfish playing a random legal move with probability $\\varepsilon \\in \\{" + eps
         + "\\}$; a greedy one-ply material counter; a random mover"],
        ["Openings", f"{lo}--{hi} random plies before the players take over" if lo is not None else PENDING],
        ["Game end", f"the rules, or adjudication at {cell(gen['max_plies'], fmt_int)} plies "
         f"($|$eval$|$ $\\geq$ {cell(data.get('adjudicate_pawns'), fmt, digits=0)} pawns wins, else a draw)"],
        ["Chunks", f"{cell(chunks.get('files'), fmt_int)} files with suffixes \\texttt{{aa}}, \\texttt{{ab}}, \\dots, "
         f"{'/'.join(str(n) for n in per_letter)} to a first letter; that letter selects train and validation sets"
         if chunks else PENDING],
        ["Test set", f"letter \\texttt{{{cell(data.get('test_letters'))}}}: never trained or validated on"],
    ]
    if used:
        rows.append(["As trained (" + esc(used["version"]) + ")",
                     "; ".join(f"{k} {cell(used[k]['rows'], fmt_int)} rows ({cell(used[k]['chunks'], fmt_int)} chunks, "
                               f"\\texttt{{{esc(used[k]['letters'] or '?')}}})" for k in ("train", "val", "test"))])
    return tabular(None, [[f"\\textbf{{{a}}}", b] for a, b in rows], r"@{}l L{0.74\linewidth}@{}")


def data_stats(ds: dict) -> str:
    n = ds["rows"]
    res = ds.get("results", {})
    games = max(1, sum(res.values()))
    movers = ds.get("movers", {})
    mover_text = ", ".join(f"{esc(k)} {fmt_pct(v / n, 0)}" for k, v in movers.items())
    skipped = f" ({fmt_int(ds['malformed'])} malformed rows skipped)" if ds.get("malformed") else ""
    rows = [
        ["Positions", fmt_int(n) + skipped],
        ["Games", fmt_int(ds["games"]) + f"; results 1--0 {fmt_pct(res.get('1-0', 0) / games, 0)}, "
         f"0--1 {fmt_pct(res.get('0-1', 0) / games, 0)}, draws {fmt_pct(res.get('1/2-1/2', 0) / games, 0)}"],
        ["Positions per game", f"mean {fmt(ds['positions_per_game']['mean'], 1)}, median "
         f"{fmt(ds['positions_per_game']['median'], 0)}, range {ds['positions_per_game']['min']}--"
         f"{ds['positions_per_game']['max']}"],
        [f"Forced mates ($\\pm${ds.get('mate', 10):g})",
         f"{fmt_pct(ds['mate_share'])} of positions ({fmt_int(ds['mates_white'])} for White, "
         f"{fmt_int(ds['mates_black'])} for Black)"],
        ["Other evaluations", f"median $|$eval$|$ {fmt(ds['median_abs'])} pawns; {fmt_pct(ds['clipped_share'])} "
         f"clipped at $\\pm${ds.get('clip', 9):g}"],
        ["Within one pawn", fmt_pct(ds["within_one_pawn_share"]) + " of all positions"],
        ["Side to move", f"White {fmt_pct(ds['white_to_move_share'])}"],
        ["Who moved", mover_text],
    ]
    return tabular(None, [[f"\\textbf{{{a}}}", b] for a, b in rows], r"@{}l L{0.7\linewidth}@{}")


# -- networks -------------------------------------------------------------------------------------------
def el_versions(libs: list[dict], runs: dict, hist: dict, why: str) -> str:
    """One row per evaluation network as its library declares it (``settings.json``),
    with the epochs its shipped weights were trained for."""
    if not libs:
        return placeholder_table(why)
    rows = []
    for lib in libs:
        name = lib["name"]
        rows.append([f"V{lib['number']}", layers_text(lib["layers"]), inputs_text(lib["inputs"]),
                     optimiser_text(lib["train"]), epochs_text(lib, runs.get(name), hist.get(name)),
                     esc(f"{lib['data'].get('train')} / {lib['data'].get('val')}"),
                     esc(str(lib["parent"]).split("/")[-1].upper()) if lib["parent"] else "--",
                     dash(lib["parameters"], fmt_int)])
    untrained = [lib["name"] for lib in libs if epochs_trained(runs.get(lib["name"]), hist.get(lib["name"])) is None]
    note = ("--: not trained yet (" + esc(", ".join(untrained)) + ")") if untrained else None
    return tabular(["V", "Layers", "Inputs", "Optimiser", "Epochs", "Train / val. letters", "From",
                    "Params"], rows,
                   r"@{}l L{0.19\linewidth} L{0.13\linewidth} l c L{0.14\linewidth} c r@{}", note=note)


def networks(table: dict | None, why: str) -> str:
    if not table:
        return placeholder_table(why)
    rows, groups = [], []
    ordered = sorted(table["rows"], key=lambda r: r["kind"] != "baseline")   # baselines first, order kept
    n_base = sum(r["kind"] == "baseline" for r in ordered)
    best = min((r["mae"] for r in ordered if r["kind"] != "baseline" and r["mae"] is not None), default=None)
    for r in ordered:
        mae = cell(r["mae"], fmt, digits=3)
        if r["mae"] is not None and r["mae"] == best:
            mae = r"\textbf{" + mae + "}"
        rows.append([esc(r["name"]) + ("$^{m}$" if r.get("from_metadata") else ""),
                     fmt_int(r["parameters"]) if r["parameters"] else "--",
                     fmt_int(r["epochs"]) if r["epochs"] else "--", mae, cell(r["median_ae"], fmt, digits=3),
                     cell(r["sign_agreement"], fmt_pct)])
    if n_base and n_base < len(rows):
        groups = [n_base]
    note = (r"$^{m}$: trained after this table was measured; its own metadata's figures on the same letters"
            if any(r.get("from_metadata") for r in ordered) else None)
    return tabular(["Evaluator", "Params", "Epochs", "MAE", "Median AE", "Sign agrees"], rows, "@{}lrrrrr@{}",
                   groups=groups, note=note)


def sl_versions(libs: list[dict], rows_: list[dict], runs: dict, hist: dict, why: str) -> str:
    """One row per move network: its declaration (``settings.json``), the batch size and
    epochs its shipped weights were trained with, and its test-letter shares (``rows_``)."""
    if not libs:
        return placeholder_table(why)
    by_name = {r["name"]: r for r in rows_}
    rows = []
    for lib in libs:
        name = lib["name"]
        r, h = by_name.get(name, {}), hist.get(name) or {}
        batch = cell(lib["train"].get("batch_size"), fmt_int)
        if h.get("batch_size") and h["batch_size"] != lib["train"].get("batch_size"):
            batch += f" / {fmt_int(h['batch_size'])}"
        rows.append([f"V{lib['number']}", layers_text(lib["layers"]), cell(lib["penalty"], fmt, digits=0),
                     optimiser_text(lib["train"]), batch, epochs_text(lib, runs.get(name), h),
                     cell(lib["parameters"], fmt_int), cell(r.get("legal_share"), fmt_pct),
                     cell(r.get("top1_played"), fmt_pct)])
    return tabular(["V", "Layers", "Penalty", "Optimiser", "Batch", "Epochs", "Params", "Legal", "Played"], rows,
                   r"@{}l L{0.24\linewidth} r l r c r r r@{}")


def training_runs(libs: list[dict], runs: dict, hist: dict) -> str:
    """One row a trained run: epochs, rows, throughput, device, wall time, and which
    epoch's weights were shipped beside the best validation epoch (a run that does not
    keep its best epoch ships the last one, however it ended)."""
    rows = []
    total = 0.0
    for lib in libs:
        name = lib["name"]
        r = runs.get(name)
        h = hist.get(name) or {}
        if not r and not h:
            continue  # not trained: nothing ran
        r = r or {}
        seconds = r.get("seconds") or h.get("train_seconds")
        total += seconds or 0.0
        rps = training_rate(r, h)
        best = (f"{fmt_sig(h['best_val'])} ({h['best_epoch']})" if h.get("best_val") is not None else "--")
        kept = (f"{fmt_sig(h['kept_val'])} ({h['kept_epoch']}, {'best' if h['keep_best'] else 'last'})"
                if h.get("kept_val") is not None else "--")
        if h.get("kept_val") is not None and h.get("best_val") and h["kept_val"] > 1.5 * h["best_val"]:
            kept = r"\textbf{" + kept + "}"
        rows.append([esc(name), cell(epochs_trained(r, h), fmt_int),
                     cell(r.get("train_rows") or h.get("train_rows"), fmt_int), cell(rps, fmt_int),
                     esc(r.get("device") or h.get("device") or "?"), cell(seconds, fmt_seconds), best, kept])
    rows.append([r"\textbf{all}", "", "", "", "", r"\textbf{" + fmt_seconds(total) + "}" if total else PENDING, "", ""])
    return tabular(["Run", "Epochs", "Training rows", "Rows/s", "Device", "Wall time", "Best val. (epoch)",
                    "Shipped val. (epoch)"], rows, "@{}lrrrlrrr@{}", groups=[len(rows) - 1],
                   note=r"Validation loss in the run's units; bold: the shipped epoch's is over 1.5 times the best.")


# -- ensemble -----------------------------------------------------------------------------------------
TITLES = {"knn": "KNN (distance-weighted)", "random_forest": "random forest", "svr": "kernel SVR (RBF)",
          "linear_svr": "linear SVR", "linear": "linear regression"}


def ensemble_members(members: list[dict], why: str) -> str:
    if not members:
        return placeholder_table(why)
    best = min((m["test_mae"] for m in members if m["test_mae"] is not None), default=None)
    rows = []
    for m in members:
        test = cell(m["test_mae"], fmt, digits=3)
        if m["test_mae"] is not None and m["test_mae"] == best:
            test = r"\textbf{" + test + "}"
        fit_rows = cell(m["train_rows"], fmt_int) if m["kind"] != "network" else "--"
        rows.append([esc(TITLES.get(m["name"], m["name"])), fit_rows, cell(m["val_mae"], fmt, digits=3), test,
                     cell(m["sign"], fmt_pct), cell(m["ms"], fmt_sig), cell(m["mb"], fmt, digits=2)])
    return tabular(["Member", "Fit rows", "Val. MAE", "Test MAE", "Sign agrees", "ms/decision", "MB"], rows,
                   "@{}lrrrrrr@{}")


def ensemble_blends(blends: list[dict], why: str) -> str:
    if not blends:
        return placeholder_table(why)
    short = {"knn": "KNN", "random_forest": "RF", "svr": "SVR", "linear_svr": "LSVR", "linear": "LR"}
    rows = []
    for b in blends:
        by_weight = sorted(b["weights"].items(), key=lambda kv: -kv[1])
        weights = ", ".join(f"{esc(short.get(k, k))} {w:.2f}" for k, w in by_weight if w >= 0.005) or "--"
        name = esc(b["name"].replace("_", " ")) + (r" $\star$" if b["shipped"] else "")
        rows.append([name, weights, cell(b["val_mae"], fmt, digits=3), cell(b["test_mae"], fmt, digits=3),
                     cell(b["ms"], fmt_sig), cell(b["mb"], fmt, digits=2)])
    return tabular(["Blend", "Weights", "Val. MAE", "Test MAE", "ms/decision", "MB"], rows,
                   r"@{}l L{0.42\linewidth} rrrr@{}")


# -- playing ----------------------------------------------------------------------------------------------
def opening_effective(table) -> list[tuple[str, list[float]]]:
    """Per move range, the probability of each rank: rows not offered give their
    weight to the best move (the engine's rule)."""
    limits = sorted({lim for _, lim in table if lim is not None})
    bounds, lo = [], 1
    for lim in limits:
        bounds.append((lo, lim))
        lo = lim + 1
    bounds.append((lo, None))
    out = []
    for lo, hi in bounds:
        offered = [w if (lim is None or lo <= lim) else 0.0 for w, lim in table]
        offered[0] += 1.0 - sum(offered)
        label = f"{lo}--{hi}" if hi is not None and hi != lo else (f"{lo}" if hi == lo else f"{lo}+")
        out.append((label, offered))
    return out


def opening(table) -> str:
    if not table:
        return placeholder_table("report/results/settings.json engine (knights settings)")
    phases = opening_effective(table)
    header = ["Rank", "Weight", "Offered up to move"] + [f"moves {p[0]}" for p in phases]
    rows = []
    for i, (w, lim) in enumerate(table):
        rows.append([str(i + 1), fmt_pct(w, 0), "always" if lim is None else str(lim)]
                    + [fmt_pct(p[1][i], 0) if p[1][i] else "--" for p in phases])
    return tabular(header, rows, "@{}c r c " + "r" * len(phases) + "@{}")


# -- strength ----------------------------------------------------------------------------------------------
def elo_number(x) -> str:
    """A rating as chess writes it: no thousands separator, a real minus sign."""
    return ("$-$" if x < 0 else "") + f"{abs(x):.0f}"


def player_label(p: dict) -> str:
    """``EL/v2``, ``democracy``$\\star$, ``sf-elo:1350``: our players by their
    evaluator (how they play is in the caption), the shipped one starred."""
    name = p["name"].removeprefix("ours:")
    label = esc(name)
    if p["kind"] == "ours":
        label = r"\textbf{" + label + "}"
    return label + (r"$\star$" if p["shipped"] else "")


def elo(players: list[dict], why: str, columns: list[str]) -> str:
    if not players:
        return placeholder_table(why)
    rows = []
    for p in players:
        if p["kind"] == "anchor":
            rating = elo_number(p["rating"]) + " (anchor)"
        else:
            low = elo_number(p["low"]) if p["low"] is not None else PENDING
            high = elo_number(p["high"]) if p["high"] is not None else PENDING
            rating = f"{elo_number(p['rating'])} [{low}, {high}]"
        rows.append([player_label(p), rating, cell(p["games"], fmt_int), cell(p["score"], fmt)]
                    + [fmt(p["vs"][o]["score"]) + f" ({fmt_int(p['vs'][o]['games'])})" if o in p["vs"]
                       and p["vs"][o]["score"] is not None else "" for o in columns])
    return tabular(["Player", "Elo [95\\%]", "Games", "Score"] + [esc(o) for o in columns], rows,
                   "@{}l l r r " + "r" * len(columns) + "@{}")


def versus_original(original: dict, players: list[dict], mapping: list[tuple[str, str, str]]) -> str:
    """``mapping``: (original key, our opponent spec, label)."""
    shipped = next((p for p in players if p["shipped"]), None)
    rows = []
    for key, spec, label in mapping:
        v = (shipped or {}).get("vs", {}).get(spec) if shipped else None
        ours = f"{fmt(v['score'])} ({fmt_int(v['games'])} games)" if v and v.get("score") is not None else PENDING
        orig = original.get(key, {}).get("value")
        games = original.get("strength_games", {}).get("value")
        rows.append([esc(label), f"{fmt(orig)} ({games} games)" if orig is not None else "--", ours])
    return tabular(["Opponent", "Original bot", "Our shipped bot"], rows, "@{}lrr@{}")


def quality(rows_: list[dict], info: dict, why: str) -> str:
    if not rows_:
        return placeholder_table(why)
    rows = [[esc(r["name"]), cell(r["games"], fmt_int), cell(r["moves"], fmt_int), cell(r["accuracy"], fmt, digits=1),
             cell(r["acpl"], fmt, digits=0), cell(r["inaccuracies"], fmt_int), cell(r["mistakes"], fmt_int),
             cell(r["blunders"], fmt_int), cell(r["blunders_per_game"], fmt, digits=2)] for r in rows_]
    return tabular(["Player", "Games", "Moves", "Accuracy", "ACPL", "Inacc.", "Mistakes", "Blunders", "Blunders/game"],
                   rows, "@{}lrrrrrrrr@{}")


# -- speed ------------------------------------------------------------------------------------------------
def bench_value(kind: str, value, unit: str) -> str:
    """The judged value in the unit its target is stated in."""
    if value is None:
        return PENDING
    if kind in ("ratio", "info"):
        return fmt_sig(value) + "$\\times$"
    if kind == "time":
        return fmt_sig(value) + (r"\,ms" if unit == "decisions/s" else r"\,s")
    return fmt_sig(value) + r"\," + esc(unit)


BENCH_GROUPS = {"ratio": "Ours against a baseline in the same process: the ratio must reach the target",
                "time": "Time per event: at most the target", "rate": "Rate: at least the target",
                "count": "Games: every game played must be clean", "info": "Measured, no target (context)"}


def bench(entries: list[dict], why: str, expected: tuple[str, ...]) -> str:
    """The benchmarks grouped by how each is judged (:func:`sources.bench_kind`), each
    with its rate and its baseline's in their own unit, then the value the target is
    about, in the target's unit, the target, and the result: the recorded status, and a
    check of the figures beside it (a status that the figures contradict is flagged)."""
    if not entries and not expected:
        return placeholder_table(why)
    groups: dict[str, list[list[str]]] = {k: [] for k in BENCH_GROUPS}
    for b in entries:
        name = code(b["name"].replace("_", " "))
        if b["status"] == "SKIP":
            reason = esc(b["details"].get("reason", "skipped"))
            groups["info"].append([name, reason, "", "", "--", "--", "SKIP"])
            continue
        kind = bench_kind(b)
        value, target = bench_measure(b)
        met = bench_met(b)
        if kind == "count":
            judged = f"{cell(b['rate'], fmt_int)} of {cell(b['baseline_rate'], fmt_int)}"
            goal = "all"
        else:
            judged = bench_value(kind, value, b["unit"])
            sign = "$\\leq$ " if kind == "time" else "$\\geq$ "
            goal = "--" if kind == "info" else sign + bench_value(kind, target, b["unit"])
        status = esc(b["status"]) if kind != "info" else "--"
        if met is not None and (met != (b["status"] == "PASS")):
            status = r"\textbf{" + status + "?}"   # the recorded status and the figures disagree
        elif b["status"] == "MISS":
            status = r"\textbf{MISS}"
        status += "$^{q}$" if b["quick"] else ""
        ours = cell(b["rate"], fmt_sig) + r"\," + esc(b["unit"])
        base = cell(b["baseline_rate"], fmt_sig) if b["baseline_rate"] is not None else "--"
        groups[kind].append([name, esc(b["baseline"]), ours, base, judged, goal, status])
    have = {b["name"] for b in entries}
    for name in expected:
        if name not in have:
            groups["info"].append([code(name.replace("_", " ")), r"\pending{} (\texttt{make bench})", "", "", "", "",
                                   ""])
    rows: list[list[str]] = []
    breaks: list[int] = []
    align = r"@{}l L{0.21\linewidth} r r r r l@{}"
    for kind, items in groups.items():
        if not items:
            continue
        breaks.append(len(rows))
        rows.append([rf"\multicolumn{{{column_count(align)}}}{{@{{}}l}}{{\emph{{{BENCH_GROUPS[kind]}}}}}"])
        rows += items
    return tabular(["Benchmark", "Baseline (same process, same data)", "Ours", "Baseline", "Judged", "Target",
                    "Result"], rows, align, groups=breaks)


# -- reproducibility -----------------------------------------------------------------------------------------
def timings(steps: list[dict]) -> str:
    rows = [[code(s["command"]), esc(s["what"]), cell(s["seconds"], fmt_seconds), esc(s["source"])] for s in steps]
    return tabular(["Command", "What it does", "Wall time", "Read from"], rows,
                   r"@{}l L{0.35\linewidth} r L{0.22\linewidth}@{}")


def provenance(inputs: list) -> str:
    rows = []
    for i in inputs:
        status = {"read": "read", "missing": r"\pending{} missing", "unreadable": r"\pending{} unreadable"}[i.status]
        if i.label.startswith("models_") and i.error:
            status = (r"\pending{} " if i.status != "read" else "") + esc(i.error)
        if i.quick is not None:
            status += " (quick run)" if i.quick else " (full run)"
        stamp = esc((i.stamp or "")[:10])
        rows.append([code(i.label), code(i.producer) if i.producer else "", status, stamp])
    return tabular(["File", "Written by", "Status", "Stamp"], rows, r"@{}l l L{0.22\linewidth} l@{}")


def formats(rows_: list[list[str]]) -> str:
    return tabular(["Artefact", "Files", "Format", "Loading"], rows_,
                   r"@{}L{0.14\linewidth} L{0.2\linewidth} L{0.26\linewidth} L{0.32\linewidth}@{}")


# -- independent test sets -------------------------------------------------------------------------
KIND_ORDER = {"baseline": 0, "network": 1, "ensemble": 2, "member": 3}


def independent_sets_info(sets: list[dict]) -> str:
    """One row a set: positions, label, what de-duplication dropped, how long it took."""
    rows = []
    for st in sets:
        dropped = ", ".join(f"{fmt_int(v)} {esc(k)}" for k, v in st["dropped"].items() if v) or "none"
        label = f"{esc(st['label_engine'] or 'Stockfish')}, depth {dash(st['label_depth'], fmt_int)}"
        rows.append([code(st["name"]), cell(st["rows"], fmt_int), label, dropped,
                     cell(st["build_seconds"], fmt_seconds)])
    return tabular(["Set", "Positions", "Labels", "Dropped by de-duplication", "Built in"], rows,
                   r"@{}l r l L{0.36\linewidth} r@{}",
                   note="Built in: generating and labelling the set's source, one thread (games and tactics "
                        "share theirs).")


def independent_summary(sets: list[dict], letters: dict, why: str) -> str:
    """MAE of every evaluator on each independent set, beside the test letters: the
    baselines first, then the networks, the democracy, its other members. Bold: the
    best learned evaluator of each column."""
    if not sets:
        return placeholder_table(why)
    names: dict[str, str] = {}
    for st in sets:
        for r in st["evaluation"]:
            names.setdefault(r["name"], r["kind"])
    letter_rows = {r["name"]: r for r in letters.get("rows", [])}
    order = sorted(names, key=lambda n: (KIND_ORDER.get(names[n], 9), version_key(n)))
    columns = [{r["name"]: r for r in st["evaluation"]} for st in sets]
    best = [min((r["mae"] for r in col.values() if r["kind"] != "baseline"), default=None) for col in columns]
    rows, groups = [], []
    last_kind = None
    for name in order:
        if last_kind is not None and names[name] != last_kind and (names[name] == "network" or last_kind == "baseline"):
            groups.append(len(rows))
        last_kind = names[name]
        cells = []
        for col, b in zip(columns, best, strict=True):
            r = col.get(name)
            text = cell(r["mae"] if r else None, fmt, digits=3) if r else "--"
            if r and b is not None and r["mae"] == b:
                text = r"\textbf{" + text + "}"
            cells.append(text)
        j = letter_rows.get(name)
        rows.append([esc(name), *cells, fmt(j["mae"], 3) if j else "--"])
    letter = letters.get("data", {}).get("test_letters", "j")
    header = ["Evaluator"] + [code(st["name"]) for st in sets] + [f"letter {code(letter)}"]
    return tabular(header, rows, "@{}l" + "r" * (len(sets) + 1) + "@{}", groups=groups,
                   note="MAE in pawns. The letter column: the test letter of the training generator's data "
                        "(Table~\\ref{tab:networks}).")


def version_key(name: str) -> tuple[str, int]:
    """``EL/v10`` after ``EL/v9``: names with a version number sort by it."""
    head, _, tail = name.rpartition("/v")
    return (head, int(tail)) if tail.isdigit() else (name, -1)


def independent_buckets(sets: list[dict], names: list[str], buckets: tuple[str, ...]) -> str:
    """For a few evaluators, the MAE by |eval| bucket on each set (rows grouped by set)."""
    rows, groups = [], []
    for st in sets:
        by = {r["name"]: r for r in st["evaluation"]}
        present = [n for n in names if n in by]
        if not present:
            continue
        groups.append(len(rows))
        for k, name in enumerate(present):
            r = by[name]
            cells = [cell(r["buckets"].get(b, {}).get("mae"), fmt, digits=2) if b in r["buckets"] else "--"
                     for b in buckets]
            rows.append([code(st["name"]) if k == 0 else "", esc(name), *cells, fmt(r["mae"], 2)])
        counts = [st["evaluation"][0]["buckets"].get(b, {}).get("rows") for b in buckets]
        rows.append(["", r"\emph{positions}", *[cell(c, fmt_int) if c is not None else "--" for c in counts],
                     cell(st["rows"], fmt_int)])
    header = ["Set", "Evaluator", *[esc(b) for b in buckets], "all"]
    return tabular(header, rows, "@{}ll" + "r" * (len(buckets) + 1) + "@{}", groups=groups)


# -- versions beyond the original ---------------------------------------------------------------------
def new_versions(libs: list[dict], maes: dict[str, dict[str, float]], set_names: list[str], letter: dict) -> str:
    """The versions that are ours (numbered past the original's): what each is, in its
    library's own words (the metadata's description), its size and its error on the test
    letter and on each independent set. Every trained version appears, read from the files."""
    rows = []
    for lib in libs:
        description = re.sub(r"^[A-Z]{2} V\d+[^:]*:\s*", "", lib.get("description") or "") or "not trained yet"
        m = maes.get(lib["name"], {})
        rows.append([esc(lib["name"]), esc(description), dash(lib["parameters"], fmt_int),
                     cell(letter.get(lib["name"]), fmt, digits=3) if lib["name"] in letter else "--",
                     *[cell(m.get(s), fmt, digits=2) if s in m else "--" for s in set_names]])
    header = ["Version", "What it is (its library's first line)", "Params", "Letter", *[code(s) for s in set_names]]
    return tabular(header,
                   rows, r"@{}l L{0.42\linewidth} r r" + "r" * len(set_names) + "@{}",
                   note="MAE in pawns; --: not measured there (not trained, or trained after the sets were measured).")


# -- search ------------------------------------------------------------------------------------------------
def search(rows_: list[dict], opponents: list[str]) -> str:
    """One row a player: how it plays, rating with interval, games, and its score
    against each Stockfish anchor (games in parentheses)."""
    rows = []
    for r in rows_:
        low = elo_number(r["low"]) if r["low"] is not None else PENDING
        high = elo_number(r["high"]) if r["high"] is not None else PENDING
        rows.append([esc(r["label"]), f"{elo_number(r['rating'])} [{low}, {high}]", cell(r["games"], fmt_int),
                     cell(r.get("seconds_per_game"), fmt, digits=1) if r.get("seconds_per_game") else "--"]
                    + [f"{fmt(r['vs'][o]['score'])} ({fmt_int(r['vs'][o]['games'])})"
                       if o in r["vs"] and r["vs"][o].get("score") is not None else "" for o in opponents])
    return tabular(["Player", "Elo [95\\%]", "Games", "s a game"] + [esc(o) for o in opponents], rows,
                   "@{}l l r r" + "r" * len(opponents) + "@{}")
