"""The rating report: Elo ratings of everyone who played, their scores, the targets.

:func:`rating_report` fits the ratings of a set of game records
(:func:`knights.lab.arena.elo.fit_ratings`, anchors fixed) and gathers everything into
one JSON-ready dict; :func:`write_report` saves it four ways::

    report = rating_report(records, {"sf-elo:1350": 1350.0}, shipped=canonical("ours"))
    write_report(report, "report/results", "report/figures")
    # elo.json, elo.csv, elo.md (the table, then the targets) and elo.png (the plot)

Each player row is its :class:`~knights.lab.arena.elo.Rating` plus a ``label``, a
``kind`` (``anchor``, ``ours`` or ``opponent``) and ``vs``, its
:class:`~knights.lab.arena.scores.PairStats` against each opponent. The shipped bot is
checked against :data:`TARGETS`.
"""

from __future__ import annotations

import csv
import datetime as _dt
from collections.abc import Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

from knights.common import write_json
from knights.engine.spec import parse
from knights.lab.arena.elo import Table, fit_ratings
from knights.lab.arena.scores import pair_stats


class Target(TypedDict):
    """What the shipped bot must score against one opponent."""

    opponent: str
    what: str
    min_score: float
    min_mate_share: NotRequired[float]


TARGETS: tuple[Target, ...] = (
    {"opponent": "greedy", "what": "score >= 0.75", "min_score": 0.75},
    {"opponent": "random", "what": "score >= 0.95, most games won by checkmate", "min_score": 0.95,
     "min_mate_share": 0.5},
)
"""Targets for the shipped bot (checked by the lead once the networks are trained)."""


def label(spec: str, shipped: str | None = None) -> str:
    """How the report names ``spec``: ``ours:EL/v8`` -> ``EL/v8 (one ply, stochastic)``."""
    text = spec
    if spec.startswith("ours:"):
        wanted = parse(spec)
        text = f"{wanted.evaluator or 'default'} (one ply{', stochastic' if wanted.stochastic else ''})"
    if spec == shipped:
        text += " [shipped bot]"
    return text


def rating_report(records: Sequence[dict], anchors: dict[str, float], *, shipped: str | None = None,
                  engines: Sequence[str] = (), rungs: Sequence[str] = (), prior_draws: float = 1.0,
                  extra_games: Sequence[tuple[str, str, float]] = ()) -> dict:
    """Ratings, per-opponent scores and the targets, as one JSON-ready dict.

    ``engines`` are rated as ours (besides every ``ours:`` spec); ``rungs`` (weak to
    strong) and then the anchors lead the list of opponents, the other players follow.
    ``extra_games`` (player, opponent, score of the player) join the fit but not the per-opponent
    scores: games whose records are gone, known by their results alone."""
    table = Table.from_games([*((r["a"], r["b"], r["score_a"]) for r in records), *extra_games])
    ratings = fit_ratings(table, anchors, prior_draws=prior_draws)
    stats = pair_stats(records)
    ordered = [p for p in (*rungs, *anchors) if p in ratings]
    opponents = ordered + [p for p in ratings if p not in ordered and not p.startswith("ours:")]
    players = []
    for rt in sorted(ratings.values(), key=lambda r: -r.rating):
        p = rt.player
        kind = "anchor" if rt.anchor else ("ours" if p.startswith("ours:") or p in engines else "opponent")
        vs = {o: stats[(p, o)].to_dict() for o in ratings if (p, o) in stats}
        players.append({**rt.to_dict(), "label": label(p, shipped), "kind": kind,
                        "shipped": p == shipped, "score_rate": rt.score_rate if rt.games else None, "vs": vs})
    targets = []
    for t in TARGETS:
        st = stats.get((shipped, t["opponent"])) if shipped else None
        row = {"player": shipped, **t, "games": 0, "score": None, "mate_share": None, "status": "not played"}
        if st and st.games:
            mate_share = st.wins_by_mate / st.games
            row.update(games=st.games, score=st.score, mate_share=mate_share)
            ok = st.score >= t["min_score"] and mate_share >= t.get("min_mate_share", 0.0)
            row["status"] = "PASS" if ok else "MISS"
        targets.append(row)
    return {
        "generated": _dt.datetime.now().isoformat(timespec="seconds"),
        "method": ("maximum likelihood (Bradley-Terry, Elo scale 400/log10, draws = half a point) over all "
                   f"games, anchors fixed; prior: {prior_draws:g} virtual draw(s) per pairing; 95% "
                   "interval = rating +- 1.96 se, se from the inverse observed Fisher information"),
        "anchors": anchors, "games": len(records) + len(extra_games), "opponents": opponents, "players": players,
        "targets": targets,
    }


def format_rating(player: dict) -> str:
    """A report row's rating: ``1412 [1290, 1534]``, ``1350 (anchor)`` or ``... rel.``."""
    if player["kind"] == "anchor":
        return f"{player['rating']:.0f} (anchor)"
    rel = " rel." if player.get("relative") else ""
    return f"{player['rating']:.0f} [{player['low']:.0f}, {player['high']:.0f}]{rel}"


def markdown_table(report: dict) -> str:
    """``elo.md``: the ratings table (a column per opponent), then the shipped bot's targets."""
    opponents = [o for o in report["opponents"] if any(o in p["vs"] for p in report["players"])]
    head = ["Player", "Elo [95%]", "Games", "Score"] + [f"vs {o}" for o in opponents]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    for p in report["players"]:
        cells = [p["label"], format_rating(p), f"{p['games']:.0f}",
                 "" if p["score_rate"] is None else f"{p['score_rate']:.2f}"]
        for o in opponents:
            v = p["vs"].get(o)
            cells.append("" if not v else f"{v['score']:.2f} ({v['games']})")
        lines.append("| " + " | ".join(cells) + " |")
    out = ["# Playing strength", "", f"Generated {report['generated']} from {report['games']} games.", "",
           *lines, "", "Score cells: score (games). " + report["method"] + ".", ""]
    if report["targets"] and report["targets"][0]["player"]:
        out += ["## Targets for the shipped bot", "", "| Target | Games | Score | Won by mate | Status |",
                "|---|---|---|---|---|"]
        for t in report["targets"]:
            score = "" if t["score"] is None else f"{t['score']:.2f}"
            mates = "" if t["mate_share"] is None else f"{t['mate_share']:.0%}"
            out.append(f"| vs {t['opponent']}: {t['what']} | {t['games']} | {score} | {mates} | {t['status']} |")
        out.append("")
    return "\n".join(out)


def write_report(report: dict, results_dir: str | Path, figures_dir: str | Path) -> list[Path]:
    """``elo.json``, ``elo.csv``, ``elo.md`` in ``results_dir`` and ``elo.png`` in ``figures_dir``."""
    results, figures = Path(results_dir), Path(figures_dir)
    results.mkdir(parents=True, exist_ok=True)
    figures.mkdir(parents=True, exist_ok=True)
    paths = [results / "elo.json", results / "elo.csv", results / "elo.md", figures / "elo.png"]
    write_json(paths[0], report, indent=2)
    opponents = report["opponents"]
    with paths[1].open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["player", "label", "kind", "rating", "low", "high", "se", "games", "score"]
                   + [f"score_vs_{o}" for o in opponents] + [f"games_vs_{o}" for o in opponents])
        for p in report["players"]:
            w.writerow([p["player"], p["label"], p["kind"], f"{p['rating']:.1f}", f"{p['low']:.1f}",
                        f"{p['high']:.1f}", f"{p['se']:.1f}", f"{p['games']:.0f}",
                        "" if p["score_rate"] is None else f"{p['score_rate']:.4f}"]
                       + [f"{p['vs'][o]['score']:.4f}" if o in p["vs"] else "" for o in opponents]
                       + [p["vs"][o]["games"] if o in p["vs"] else "" for o in opponents])
    paths[2].write_text(markdown_table(report))
    plot_ratings(report, paths[3])
    return paths


def plot_ratings(report: dict, path: str | Path) -> None:
    """Every rating with its 95% interval (anchors as diamonds), strongest on top."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    players = list(reversed(report["players"]))
    colours = {"anchor": "tab:gray", "opponent": "tab:blue", "ours": "tab:red"}
    fig, ax = plt.subplots(figsize=(8, 0.38 * len(players) + 1.4))
    for y, p in enumerate(players):
        c = colours[p["kind"]]
        if p["kind"] == "anchor":
            ax.plot(p["rating"], y, "D", color=c)
        else:
            ax.errorbar(p["rating"], y, xerr=[[p["rating"] - p["low"]], [p["high"] - p["rating"]]],
                        fmt="o", color=c, capsize=3)
    ax.set_yticks(range(len(players)), [p["label"] for p in players], fontsize=8)
    ax.set_xlabel("Elo (Stockfish 15.1 UCI_Elo anchors fixed; bars: 95% interval)")
    ax.grid(axis="x", alpha=0.3)
    handles = [plt.Line2D([], [], marker=m, ls="", color=colours[k], label=n)
               for k, m, n in (("ours", "o", "ours"), ("opponent", "o", "opponents"), ("anchor", "D", "anchors"))]
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    ax.set_title("Playing strength")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
