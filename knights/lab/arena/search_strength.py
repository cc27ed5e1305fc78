"""The searching bot's ratings: ``knights strength --search`` (``make search-strength``).

The default searching bot (``search:default``, the compiled search with its default network
(:data:`knights.engine.search.SEARCH_NETWORK`), as the
terminal, ``knights uci``, lichess-bot and the web page play it) thinks a fixed time a move
(``search:default@<ms>``) against sunfish at the same time a move (``sunfish@<ms>``) and
against Stockfish ``UCI_Elo`` anchors (``sf-elo:<E>``, 20,000 nodes a move, as on the
ladder). One *run* per time a move; each run's rating is fitted over its own games with
the anchors fixed (:func:`knights.lab.arena.report.rating_report`; sunfish is an unrated
peer there). Games are played by :func:`knights.lab.arena.matches.run_games` into
``<pgn-dir>/<ms>ms/`` and a run resumes: the games already in its ``games.jsonl`` by the same
players (``search:default`` named by its network) under the same
:class:`~knights.lab.arena.game.Settings` are not played again
(:func:`knights.lab.arena.matches.finished`; an interrupted run is simply started again with the
same arguments). The games' folders stay on the machine that played them; the results file travels, so
a sitting elsewhere (``--anchors 2000`` after ``--anchors 2200``) keeps the opponents it does not play
and fits the rating over both (:func:`kept_part`).

The results file (default ``report/results/search_strength.json``)::

    {
      "note": str,                       # what was played, how, on what machine
      "commit": str,                     # git commit of the code that played (short hash)
      "generated": "YYYY-MM-DDTHH:MM:SS",
      "runs": {                          # one per time a move, fastest first
        "0.1s": {
          "command": str,                # the command that plays this run again
          "player": "search:EL/v25@100", # our player's spec; "@<ms>" = milliseconds a move
          "games": int,                  # games of this run
          "rating": int,                 # Elo, anchors fixed
          "interval": [low, high],       # 95% interval (ints)
          "seconds": float,              # wall seconds spent playing the run (all sittings)
          "seconds_per_game": float,     # mean wall seconds of one game
          "workers": int,
          "commit": str,                 # git commit the run was played at (last sitting)
          "vs": {                        # per opponent, as knights.lab.arena.scores.PairStats
            "sunfish@100": {"player", "opponent", "games", "wins", "draws", "losses",
                            "wins_by_mate", "losses_by_mate", "adjudicated", "plies",
                            "points", "score", "ci95", "mean_plies"},
            "sf-elo:1350": {...}, ...
          },
          "sunfish_rating": int | null,  # sunfish's fitted rating in this run (unanchored peer)
          "seconds_a_move": {"ours", "opponents"} | null,  # mean wall seconds a move, book plies left out
          "kept": {"sf-elo:2200": str}   # only when some opponents were played in an earlier sitting and not
                                         # in this one (their games elsewhere): the command that played each
        },
        "1s": {...}
      },
      "previous": {...},                 # earlier runs, kept for comparison: those over an earlier
                                         # default network keyed "<run>, <network>" (newest first),
                                         # the old Python/torch search's under their run keys
      "previous_note": str,              # the note of the runs that first became 'previous'
      "seconds_by_run": {"0.1s": float}, # wall seconds of today's runs (all sittings)
      "network_ab", "network_ab_vNN": {...}  # which network the search plays: self-play A/Bs (knights match,
                                         # then knights scores --player <the default> for the pooled figures)
    }

The keys ``note``, ``runs`` and, per run, ``command``, ``player``, ``games``, ``rating``,
``interval``, ``seconds_per_game`` and ``vs`` are those the report reads.
"""

from __future__ import annotations

import datetime as _dt
import json
import time
from collections.abc import Sequence
from pathlib import Path

from knights.common import commit, write_json
from knights.engine.spec import SEARCH_NETWORK, network_of
from knights.lab.arena.elo import anchors_of
from knights.lab.arena.game import Settings
from knights.lab.arena.matches import finished, run_games, schedule
from knights.lab.arena.report import rating_report
from knights.lab.arena.specs import check_spec

PLAYER = "search:default"
"""The bot under test: the default searching bot (the compiled search over :data:`SEARCH_NETWORK`)."""
DETERMINISTIC = " det"
"""``--deterministic``: the same bot with the paper's stochastic opening off (``search:default:det``); its runs are
keyed ``"1s det"`` and its games go to ``<pgn-dir>/det<ms>ms/``."""
ANCHORS = (1350, 1500, 1800, 2000)
"""Stockfish UCI_Elo anchors each run plays."""
TIMES_MS = (100, 1000)
GAMES = 20
"""Games against each opponent (two per opening, colours swapped)."""
RESULTS = Path("report/results/search_strength.json")
PGNS = Path("results_pgn/search_strength")
CLOCK_RESULTS = Path("report/results/clock_strength.json")
"""``--clock``: the anchors think the same wall time a move as the bot (not 20,000 nodes)."""
CLOCK_PGNS = Path("results_pgn/clock_strength")
CLOCK_ANCHORS = (2000, 2200)


def run_key(ms: int, deterministic: bool = False) -> str:
    """``100`` -> ``"0.1s"``, ``1000`` -> ``"1s"`` (``"1s det"`` with the stochastic opening off)."""
    return f"{ms / 1000:g}s" + (DETERMINISTIC if deterministic else "")


def player_at(ms: int, deterministic: bool = False) -> str:
    """The bot under test at ``ms`` a move: ``search:EL/v25@1000``, or ``search:EL/v25:det@1000``."""
    return check_spec(f"{PLAYER}{':det' if deterministic else ''}@{ms}")


def games_folder(pgn_dir: Path, ms: int, deterministic: bool = False) -> Path:
    return pgn_dir / f"{'det' if deterministic else ''}{ms}ms"


def opponents_for(ms: int, anchors: Sequence[int], sunfish: bool = True) -> list[str]:
    return ([f"sunfish@{ms}"] if sunfish else []) + [f"sf-elo:{e}" for e in anchors]


def games_against(opponent: str, games: int, sunfish_games: int | None) -> int:
    return sunfish_games if sunfish_games and opponent.startswith("sunfish") else games


def play_run(ms: int, opponents: Sequence[str], games: int, sunfish_games: int | None, *, pgn_dir: Path, workers: int,
             progress: bool, seed: int, clock: bool = False, deterministic: bool = False) -> tuple[list[dict], float]:
    """Play (or finish) the run at ``ms`` a move; its records and the wall seconds this sitting took.
    ``clock``: Stockfish's anchors think ``ms`` of wall time a move too, instead of 20,000 nodes."""
    player = player_at(ms, deterministic)
    out = games_folder(pgn_dir, ms, deterministic)
    settings = Settings(max_plies=300, seed=seed, movetime_ms=ms if clock else None)
    tasks = schedule([(player, o, games_against(o, games, sunfish_games)) for o in opponents], settings)
    have = {(r["a"], r["b"], r["index"]) for r in finished(out, tasks)}
    todo = [t for t in tasks if (t.a, t.b, t.index) not in have]
    start = time.perf_counter()
    if todo:
        run_games(todo, out, workers=workers, progress=progress, desc=f"search {run_key(ms, deterministic)}")
    records = {(r["a"], r["b"], r["index"]): r for r in finished(out, tasks)}   # a replayed game: its newest record
    return list(records.values()), time.perf_counter() - start


def seconds_a_move(records: Sequence[dict], player: str, pgn_dir: Path | None) -> dict[str, float] | None:
    """Mean wall seconds a move of ``player`` and of its opponents over ``records``, the opening's book plies left
    out (read from each game's PGN in ``pgn_dir``); None without the PGNs."""
    import chess.pgn

    ours = theirs = 0.0
    n_ours = n_theirs = 0
    for r in records:
        path = pgn_dir / r["pgn_file"] if pgn_dir is not None and r.get("pgn_file") else None
        if path is None or not path.is_file():
            return None
        with open(path) as fh:
            game = chess.pgn.read_headers(fh)
        book = int(game.get("OpeningPlies", "0") or 0) if game is not None else 0
        played = int(r["plies"]) - book
        white_moves = (played + (1 if book % 2 == 0 else 0)) // 2
        black_moves = played - white_moves
        we_white = r["white"] == player
        ours += r["time_white"] if we_white else r["time_black"]
        theirs += r["time_black"] if we_white else r["time_white"]
        n_ours += white_moves if we_white else black_moves
        n_theirs += black_moves if we_white else white_moves
    if not n_ours or not n_theirs:
        return None
    return {"ours": round(ours / n_ours, 3), "opponents": round(theirs / n_theirs, 3)}


def summarise(records: Sequence[dict], player: str, anchors: dict[str, float], command: str, seconds: float,
              workers: int, pgn_dir: Path | None = None, earlier: dict | None = None) -> dict:
    """One run's summary over ``records`` of ``player`` (:func:`player_at`); ``earlier``: this run's summary from an
    earlier sitting, whose opponents not in ``records`` are kept (:func:`kept_part`)."""
    kept, kept_commands = kept_part(earlier, {r[k] for r in records for k in ("a", "b")} - {player})
    extra = [(player, o, s) for o, st in kept.items()
             for s in [1.0] * st["wins"] + [0.5] * st["draws"] + [0.0] * st["losses"]]
    anchors = {**anchors, **anchors_of(kept)}
    report = rating_report(records, anchors, engines=[player], extra_games=extra)
    rows = {p["player"]: p for p in report["players"]}
    ours = rows[player]
    sunfish = next((p for name, p in rows.items() if name.startswith("sunfish")), None)
    walls = [float(r.get("wall", 0.0)) for r in records]
    kept_games = sum(st["games"] for st in kept.values())
    if kept_games and earlier and earlier.get("seconds_per_game") is not None:
        walls += [float(earlier["seconds_per_game"])] * kept_games
    timing = seconds_a_move(records, player, pgn_dir)
    if kept and timing is not None:
        timing = _with_kept_times(timing, records, kept, earlier or {})
    vs = {o: kept.get(o) or ours["vs"][o] for o in [*kept, *ours["vs"]]}
    return {"command": command, "player": player, "games": len(records) + kept_games,
            "rating": round(ours["rating"]), "interval": [round(ours["low"]), round(ours["high"])],
            "seconds": round(seconds, 1), "seconds_per_game": round(sum(walls) / len(walls), 1) if walls else None,
            "workers": workers, "commit": commit(), "vs": vs,
            "sunfish_rating": round(sunfish["rating"]) if sunfish else None, "seconds_a_move": timing,
            **({"kept": kept_commands} if kept_commands else {})}


def kept_part(earlier: dict | None, played: set[str]) -> tuple[dict[str, dict], dict[str, str]]:
    """The opponents of an earlier sitting's summary of a run that are not in ``played`` (this sitting's games):
    their scores, and the command that played each. A run's opponents can be played in separate sittings, on
    separate machines (the games' folders stay behind, the results file travels): the rating is fitted over the
    games on disk and the kept results together. An opponent whose games are on disk is counted from them alone."""
    if not earlier:
        return {}, {}
    before = dict(earlier.get("kept") or {})
    kept = {o: st for o, st in (earlier.get("vs") or {}).items() if o not in played}
    return kept, {o: before.get(o, earlier.get("command", "")) for o in kept}


def _with_kept_times(timing: dict[str, float], records: Sequence[dict], kept: dict[str, dict],
                     earlier: dict) -> dict[str, float]:
    """``timing`` of ``records`` and the earlier sitting's means for the ``kept`` games together, weighed by plies
    (the earlier means stand for its kept games)."""
    old = earlier.get("seconds_a_move")
    if not old:
        return timing
    new_plies = sum(int(r["plies"]) for r in records)
    old_plies = sum(int(st["plies"]) for st in kept.values())
    share = old_plies / (old_plies + new_plies) if old_plies + new_plies else 0.0
    return {k: round((1 - share) * timing[k] + share * float(old[k]), 3) for k in ("ours", "opponents")}


def run_search_strength(times_ms: Sequence[int], anchors: Sequence[int], games: int = GAMES,
                        sunfish_games: int | None = None, *,
                        results: Path = RESULTS, pgn_dir: Path = PGNS, workers: int = 2, progress: bool = True,
                        seed: int = 2024, sunfish: bool = True, command: str = "", clock: bool = False,
                        retire: str | None = None, deterministic: bool = False) -> dict:
    """Play every run (resuming), fit its rating and merge it into ``results``; ``clock``: the anchors
    think the same wall time a move as the bot (see :func:`play_run`). ``retire``: the search changed since the
    file's runs were played, so every one of them moves to ``previous`` as ``'<run>, <retire>'`` (its games to
    ``<pgn_dir>/<ms>ms, <retire>``), written at once, and the runs of ``times_ms`` start afresh: a sitting stopped
    midway resumes without ``retire`` and never counts the old search's results with the new one's games.
    ``deterministic``: rate the bot with its stochastic opening off, in runs of its own (:data:`DETERMINISTIC`)."""
    if not times_ms:
        raise ValueError("name at least one time a move (--times 100 1000)")
    if games < 1 or (sunfish_games is not None and sunfish_games < 1):
        raise ValueError("--games and --sunfish-games are at least 1")
    for ms in times_ms:
        if ms < 10:
            raise ValueError(f"--times: {ms} ms a move is too short to play (10 ms at least)")
    doc = json.loads(results.read_text()) if results.exists() else {}
    if retire:
        _retire(doc, retire, pgn_dir)
        write_json(results, doc)
    old = doc.get("runs") or {}
    network = network_of(player_at(times_ms[0]))   # what search:default plays
    runs = {k: v for k, v in old.items() if network_of(str(v.get("player", ""))) == network}
    seconds = dict(doc.get("seconds_by_run") or {})
    moved = {}   # runs over an earlier default network: kept for comparison (newest first), their time with them
    for key, run in old.items():
        if key not in runs:
            moved[f"{key}, {network_of(str(run.get('player', '')))}"] = run
            seconds.pop(key, None)
    if "previous_note" not in doc and (moved or doc.get("previous")) and doc.get("note") and not runs:
        doc["previous_note"] = doc["note"]
    previous = {**moved, **{k: v for k, v in (doc.get("previous") or {}).items() if k not in moved}}
    anchor_map = anchors_of(f"sf-elo:{e}" for e in anchors)
    for ms in times_ms:
        key = run_key(ms, deterministic)
        records, took = play_run(ms, opponents_for(ms, anchors, sunfish), games, sunfish_games, pgn_dir=pgn_dir,
                                 workers=workers, progress=progress, seed=seed, clock=clock,
                                 deterministic=deterministic)
        seconds[key] = seconds.get(key, 0.0) + took if records else 0.0
        runs[key] = summarise(records, player_at(ms, deterministic), anchor_map, command, seconds[key], workers,
                              games_folder(pgn_dir, ms, deterministic), earlier=runs.get(key))
        ordered = dict(sorted(runs.items(), key=lambda kv: (float(kv[0].split("s")[0]), kv[0])))
        doc.update(note=CLOCK_NOTE if clock else NOTE, commit=commit(),
                   generated=_dt.datetime.now().isoformat(timespec="seconds"), runs=ordered, previous=previous,
                   seconds_by_run=seconds)
        write_json(results, doc)
        r = runs[key]
        print(f"{key}: {r['player']} {r['rating']} [{r['interval'][0]}, {r['interval'][1]}] over {r['games']} games "
              f"({r['seconds']:.0f} s)")
        for opp, st in r["vs"].items():
            print(f"  vs {opp:<14} {st['score']:.3f}  +{st['wins']} ={st['draws']} -{st['losses']}  "
                  f"({st['games']} games)")
    return doc


def _retire(doc: dict, label: str, pgn_dir: Path) -> None:
    """Move every run in ``doc`` to its ``previous`` as ``'<run>, <label>'``, and its games aside."""
    if not label.strip() or "/" in label:
        raise ValueError(f"--retire: {label!r} is not a label (some words, no '/')")
    runs, previous = doc.get("runs") or {}, doc.get("previous") or {}
    for key in list(runs):
        if f"{key}, {label}" in previous:
            raise ValueError(f"--retire: {key!r} was already retired as {label!r}; choose another label")
    folders = sorted(pgn_dir.glob("*ms")) if pgn_dir.is_dir() else []
    for games in folders:
        if games.with_name(f"{games.name}, {label}").exists():
            raise ValueError(f"--retire: {games.with_name(f'{games.name}, {label}')} exists; choose another label")
    for key in list(runs):
        previous = {f"{key}, {label}": runs.pop(key), **previous}
        (doc.get("seconds_by_run") or {}).pop(key, None)
    for games in folders:
        games.rename(games.with_name(f"{games.name}, {label}"))
    doc.update(runs=runs, previous=previous)


NOTE = (f"The default searching bot (knights/engine: compiled alpha-beta, {SEARCH_NETWORK} evaluated incrementally) "
        "at a fixed time a move against sunfish at the same time a move (an unrated peer) and Stockfish 15.1 "
        "UCI_Elo anchors (20,000 nodes a move, as the ladder); made with knights strength --search "
        "(make search-strength) on 2 CPU cores shared with other work; 'previous' holds the old "
        "Python/torch search's runs (search:EL/v10) and the compiled search's runs over earlier networks")
CLOCK_NOTE = (f"The default searching bot (knights/engine: compiled alpha-beta, {SEARCH_NETWORK} evaluated "
              "incrementally) on a real clock: a fixed wall time a move for both sides, against sunfish and "
              "Stockfish 15.1 UCI_Elo anchors thinking the same time a move (not nodes); 'workers' games at a time "
              "(1: the bot on one core, its opponent on the other); made with knights strength --search --clock "
              "(make clock-strength)")
