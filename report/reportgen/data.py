"""What the report reads: every ``report/results/*.json`` and the models' metadata, wrapped
so that a missing value fails the build naming its file and key, and so that every number
taken from a model's record remembers the model it belongs to.

>>> r = Rec({"EL/v10": {"mae": 0.5}}, "x.json")
>>> v = r["EL/v10"].mae
>>> float(v), v.owner
(0.5, 'EL/v10')
>>> r.nothing
Traceback (most recent call last):
reportgen.data.Missing: x.json: 'nothing' is not measured (keys: EL/v10)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "report" / "results"
MODEL = re.compile(r"^(?:(?:EL|SL)/v\d+|democracy)(?:\+threats|\+qsearch)?$")
"""Keys that name a model: a value found under one belongs to that model."""
SETS = ("games", "tactics", "endgames")


def network_alone(name: str) -> bool:
    """An EL network alone: not one with the threat term or the capture search added."""
    return bool(re.fullmatch(r"EL/v\d+", name))


class Missing(Exception):
    """A value the report needs and no results file holds (deliberately not a LookupError,
    which the templating engine would quietly turn into an undefined value)."""


class Val(float):
    """A number read from a model's record; ``owner`` is that model."""

    owner: str | None

    def __new__(cls, x: float, owner: str | None) -> Val:
        v = super().__new__(cls, x)
        v.owner = owner
        return v


class Rec:
    """A read-only view of JSON: ``r.key`` or ``r["key"]``; a missing key raises
    :class:`Missing` naming the file and the path."""

    def __init__(self, data: Any, where: str, owner: str | None = None):
        self._data, self._where, self._owner = data, where, owner

    def _wrap(self, value: Any, key: Any) -> Any:
        owner = key if isinstance(key, str) and MODEL.match(key) else self._owner
        where = f"{self._where}: {key}" if ": " not in self._where else f"{self._where}.{key}"
        if isinstance(value, dict | list):
            return Rec(value, where, owner)
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return value
        return Val(value, owner) if owner else value

    def __getitem__(self, key: Any) -> Any:
        try:
            value = self._data[key]
        except (KeyError, IndexError, TypeError):
            keys = ", ".join(map(str, list(self._data)[:12])) if isinstance(self._data, dict) else len(self._data)
            raise Missing(f"{self._where}: {key!r} is not measured (keys: {keys})") from None
        return self._wrap(value, key)

    def __getattr__(self, key: str) -> Any:
        if key.startswith(("_", "jinja")):          # Python's and the template engine's own probes
            raise AttributeError(key)
        return self[key]

    def has(self, key: Any) -> bool:
        return isinstance(self._data, dict) and key in self._data and self._data[key] is not None

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if self.has(key) else default

    def keys(self) -> list[Any]:
        return list(self._data) if isinstance(self._data, dict) else list(range(len(self._data)))

    def items(self) -> list[tuple[Any, Any]]:
        return [(k, self[k]) for k in self.keys()]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self[k] for k in self.keys()) if isinstance(self._data, list) else iter(self.keys())

    def __len__(self) -> int:
        return len(self._data)

    def plain(self) -> Any:
        return self._data


def load(results: Path = RESULTS, models: Path = REPO) -> dict[str, Any]:
    """Every results file as a :class:`Rec` under its stem, the models' metadata under ``meta``
    (``meta["EL/v10"]``), and the derived views the template reads (see :func:`derive`)."""
    ctx: dict[str, Any] = {}
    for path in sorted(results.glob("*.json")):
        try:
            ctx[path.stem] = Rec(json.loads(path.read_text()), f"results/{path.name}")
        except json.JSONDecodeError as exc:
            raise Missing(f"results/{path.name} is not valid JSON ({exc})") from None
    meta = {}
    for family in ("EL", "SL"):
        for path in sorted((models / f"models_{family}").glob("v*.json"), key=lambda p: int(p.stem[1:])):
            meta[f"{family}/{path.stem}"] = json.loads(path.read_text())
    ctx["meta"] = Rec(meta, "models_*/vN.json")
    final = models / "data" / "final" / "final.json"      # the final test set's record (committed with the set)
    if final.is_file():
        ctx["final_set"] = Rec(json.loads(final.read_text()), "data/final/final.json")
    ctx.update(derive(ctx, meta))
    return ctx


def need(ctx: dict[str, Any], name: str) -> Rec:
    if name not in ctx:
        raise Missing(f"results/{name}.json is missing (the command that writes it has not run)")
    return ctx[name]


def derive(ctx: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """Report-ready views computed from the results, nothing typed: the versions' table,
    the independent sets by model, the best networks, the search runs and the timings."""
    ind = need(ctx, "independent").plain()
    by_model: dict[str, dict[str, Any]] = {}
    for st in ind["sets"]:
        for row in st["evaluation"]:
            by_model.setdefault(row["name"], {})[st["set"]] = row
    for row in need(ctx, "networks").plain()["evaluation"]:
        by_model.setdefault(row["name"], {})["j"] = row
    nets = [n for n, sets in by_model.items() if network_alone(n) and all(s in sets for s in SETS)]

    def mean(name: str, key: str) -> float:
        return sum(by_model[name][s][key] for s in SETS) / len(SETS)

    settings = need(ctx, "settings").plain()["versions"]
    runs = need(ctx, "training_runs").plain()
    versions, before = [], None
    for name, m in meta.items():
        if not name.startswith("EL/"):
            continue
        hist = m.get("history") or {}
        val = hist.get("val_loss") or []
        s = settings.get(name, {})
        groups = ("inputs", "layers", "data", "train")
        changed = [] if before is None else [k for k in groups if s.get(k) != before.get(k)]
        if before is not None and s.get("train", {}).get("epochs") != before.get("train", {}).get("epochs"):
            changed.append("epochs")
        versions.append({
            "name": name, "parameters": int(m["parameters"]), "epochs": len(val) or None,
            "best_epoch": (val.index(min(val)) + 1) if val else None, "best_val": min(val) if val else None,
            "last_val": val[-1] if val else None, "seed": s.get("train", {}).get("seed"),
            "train_rows": runs.get(name, {}).get("train_rows"), "seconds": runs.get(name, {}).get("seconds"),
            "description": m["description"], "loss": (m.get("loss") or {}).get("train"),
            "rows": m.get("train_on") or "all", "keep_best": bool(m["train_config"].get("keep_best")),
            "changed": [c for c in changed if c != "train"] + (["training"] if "train" in changed else []),
            "test_mae": (m.get("test") or {}).get("mae"),
            "ranking": m.get("ranking"),
        })
        before = s
    el = [v for v in versions if v["epochs"]]
    ours = {p["label"].split(" (")[0]: p for p in need(ctx, "elo").plain()["players"] if p["kind"] == "ours"}
    rated = [n for n in nets if n in ours]
    def best(st: str, key: str) -> str:
        """The EL network with the lowest ``key`` on set ``st`` (``j``: the test letter)."""
        return min((n for n, sets in by_model.items() if network_alone(n) and st in sets
                    and sets[st].get(key) is not None), key=lambda n: by_model[n][st][key])

    searched = [n for n, sets in by_model.items()
                if all(s in sets for s in SETS) and sets[SETS[0]].get("kind") == "search"]
    return {
        "best": best,
        "best_searched": min(searched, key=lambda n: (mean(n, "quiet_level_mae"), n)) if searched else None,
        "quiet_nets": [v["name"] for v in versions if v["rows"] == "quiet"],
        "always_level": Rec({st["set"]: st["quiet_level"]["always_level_mae"] for st in ind["sets"]},
                            "results/independent.json: sets[].quiet_level.always_level_mae"),
        "rated_lowest_error": min(rated, key=lambda n: mean(n, "mae")),
        "rated_strongest": max(rated, key=lambda n: ours[n]["rating"]),
        "mean_mae": Rec({n: mean(n, "mae") for n in nets}, "independent.json: mean MAE over the sets"),
        "epochs_range": (min(v["epochs"] for v in el), max(v["epochs"] for v in el)),
        "train_seeds": sorted({v["seed"] for v in el if v["seed"] is not None}),
        "several_changes": [v["name"] for v in versions[1:] if len(v["changed"]) > 1],
        "result_files": result_files(ctx),
        "elo_ours": Rec(ours, "results/elo.json: players (ours, by evaluator)"),
        "by_model": Rec(by_model, "results/independent.json + networks.json (by model)"),
        "versions": Rec({v["name"]: v for v in versions}, "models_EL/vN.json + settings.json"),
        "networks_ind": nets,
        "best_mae": min(nets, key=lambda n: mean(n, "mae")),
        "best_quiet": min(nets, key=lambda n: mean(n, "quiet_level_mae")),
        "best_wp": min(nets, key=lambda n: mean(n, "win_probability_error")),
        "search_runs": search_runs(ctx),
        "search_previous": search_runs(ctx, "previous"),
        "timings": timings(ctx),
    }


ISO_TIME = re.compile(r"20\d\d-\d\d-\d\dT\d\d:\d\d")


def result_files(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    """Every results file with the command that wrote it and when: the command and time the file records
    itself (``command``/``written_by``; ``generated``/``updated``/``written``, else the newest time stamp
    inside it), and where it records no command, the make target that writes it (:func:`timings`, whose
    rows name their files). ``None`` where the file records no time."""
    writers: dict[str, str] = {}
    for row in timings(ctx):
        for name in row["file"].split(", "):
            if row["target"] == "make style-data":
                writers[name] = "make style-data SET=" + name.removeprefix("dataset_").removesuffix(".json")
            else:
                writers.setdefault(name, row["target"])
    writers.update({"data_stats.json": "make data (report/data_stats.py data/full)",
                    "quality.json": "make strength"})
    out = []
    for k in sorted(ctx):
        if k in ("meta", "final_set") or not isinstance(ctx[k], Rec) or not isinstance(ctx[k].plain(), dict):
            continue
        doc = ctx[k].plain()
        own = doc.get("command") or doc.get("written_by")
        when = doc.get("generated") or doc.get("updated") or doc.get("written")
        if not when:
            stamps = ISO_TIME.findall(json.dumps(doc))
            when = max(stamps) if stamps else None
        command = own if isinstance(own, str) else writers.get(f"{k}.json")
        if command and isinstance(doc.get("what"), str) and doc["what"] in command:
            command = command.replace(doc["what"], "WHAT")          # the question, recorded beside it
        if command and isinstance(doc.get("note"), str):
            command = re.sub(r"--note '.*'$", "--note NOTE", command, flags=re.S)
        if command and command.startswith("python -m knights.lab.arena.pool"):
            command = "knights match, each arm's games pooled (WHAT)"  # the matches' own commands are in WHAT
        elif command:
            command = re.sub(r"(?:\s+runs/\S+)+", " RUNS", command)  # the match folders it pooled
        out.append({"file": f"{k}.json", "command": command, "generated": when})
    return out


def search_runs(ctx: dict[str, Any], key: str = "runs") -> list[dict[str, Any]]:
    """The searching bot's matches (``search_strength.json``, its ``runs`` or the ``previous``
    search's), one row per run: games, rating and interval, its score against each opponent."""
    doc = need(ctx, "search_strength").plain()
    runs = doc.get(key)
    if not runs:
        if key != "runs":
            return []
        raise Missing("results/search_strength.json: 'runs' is not measured")
    items = runs.items() if isinstance(runs, dict) else ((r.get("name", str(i)), r) for i, r in enumerate(runs))
    out = []
    for name, r in items:
        where = f"results/search_strength.json: {key}.{name}"
        for k in ("games", "rating", "interval", "vs"):
            if r.get(k) is None:
                raise Missing(f"{where}.{k} is not measured")
        vs = r["vs"].values() if isinstance(r["vs"], dict) else r["vs"]
        out.append({"key": name, "player": r.get("player", name), "sunfish_rating": r.get("sunfish_rating"),
                    "command": r.get("command"), "games": r["games"], "rating": r["rating"],
                    "low": r["interval"][0], "high": r["interval"][1],
                    "seconds_per_move": r.get("seconds_per_move", r.get("movetime_s")),
                    "seconds": r.get("seconds"), "seconds_per_game": r.get("seconds_per_game"),
                    "vs": [{"opponent": v["opponent"], "games": v["games"], "wins": v["wins"], "draws": v["draws"],
                            "losses": v["losses"], "score": v["score"]} for v in vs]})
    return out


def timings(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    """Every long make target with the wall time its results file recorded, in the order a
    reproduction runs them. Missing times fail the build (:class:`Missing`)."""
    def sec(name: str, *path: str) -> float:
        value: Any = need(ctx, name).plain()
        for k in path:
            if not isinstance(value, dict) or value.get(k) is None:
                raise Missing(f"results/{name}.json: {'.'.join(path)} is not measured")
            value = value[k]
        return float(value)

    ind_parts = {json.dumps(st["build_time_s"], sort_keys=True): st["build_time_s"]
                 for st in need(ctx, "independent").plain()["sets"]}   # games and tactics share one build
    independent = sum(t["generate"] + t["label"] + t["assemble"] for t in ind_parts.values())
    training = sum(float(r["seconds"]) for r in need(ctx, "training_runs").plain().values())
    ablation = sum(float(v["training"]["seconds"]) for v in need(ctx, "ablation").plain()["variants"].values()
                   if not v["recipe"].get("shipped"))
    bench = sum(float(b["details"].get("bench_seconds", 0)) for b in need(ctx, "bench").plain()["benchmarks"].values())
    search = need(ctx, "search_strength").plain()
    runs = search_runs(ctx)
    if search.get("seconds") is not None:
        search_s = float(search["seconds"])
    else:
        search_s = sum(float(r.get("seconds") or r["games"] * r["seconds_per_game"]) for r in runs)
    # a time a move the target plays but today's network has not replayed: its newest earlier run's time
    search_what = "the search's ratings"
    played = {r["key"] for r in runs}
    for key, r in (search.get("previous") or {}).items():
        when = key.split(", ")[0]
        if ", " in key and when not in played and r.get("seconds"):
            played.add(when)
            search_s += float(r["seconds"])
            label = key.split(", ", 1)[1]
            search_what += f" (the {when} run's time: " + ("an earlier build's)" if label.startswith("before")
                                                           else f"{label}'s)")

    rows = [
        ("make data", sec("dataset", "seconds"), "dataset.json", "the labelled dataset"),
        ("make more-data", sec("dataset_more", "seconds_all_runs"), "dataset_more.json", "the grown dataset"),
        ("make independent", independent, "independent.json", "the three selection sets (data/independent)"),
        ("make models", training, "training_runs.json", "training every version"),
        ("knights results", sec("independent", "seconds"),     # its clock starts before the letters' (networks.json)
         "networks.json, independent.json", "the test-letter and selection-set tables"),
        ("knights ensemble", sec("ensemble", "total_seconds"), "ensemble.json", "the democracy"),
        ("knights ablation", ablation, "ablation.json", "the ablation table"),
        ("make strength", sec("elo", "seconds_games") + sec("elo", "seconds_quality"), "elo.json", "the ladder"),
        ("make search-strength", search_s, "search_strength.json", search_what),
        ("make bench", bench, "bench.json", "the speed table"),
    ]
    grown = [(name, what) for name, what in (("endings", "the endings"), ("shallow", "the shallow searches' games"))
             if f"dataset_{name}" in ctx]
    for at, (name, what) in enumerate(grown, start=2):   # after make more-data, in the order they build
        key = f"dataset_{name}"
        rows.insert(at, (f"make {name}-data", sec(key, "seconds_all_runs") + sec(key, "seconds_combine"),
                         f"{key}.json", what))
    styles = [name for name in ("again", "chaos", "cold", "sound", "sound2", "sound3") if f"dataset_{name}" in ctx]
    if styles:       # the style experiment's sets, one make style-data SET=<name> each
        rows.insert(2 + len(grown), ("make style-data", sum(sec(f"dataset_{n}", "seconds_all_runs")
                                                          + sec(f"dataset_{n}", "seconds_combine") for n in styles),
                                     ", ".join(f"dataset_{n}.json" for n in styles),
                                     "the style experiment's sets (SET=" + ", ".join(styles) + ")"))
    if "soak" in ctx:
        rows.append(("make soak", sum(float(r["seconds"]) for r in ctx["soak"].plain()["rows"]), "soak.json",
                     "the real-clock soak"))
    if "label_floor" in ctx:
        rows.append(("make label-floor", sec("label_floor", "seconds"), "label_floor.json",
                     "the training labels against the test labels"))
    if "error_sources" in ctx:
        rows.append(("make error-sources", sec("error_sources", "seconds"), "error_sources.json",
                     "where the evaluators err"))
    dem = ctx["democracy"].plain() if "democracy" in ctx else {}
    if isinstance(dem.get("seconds"), int | float) and isinstance((dem.get("final") or {}).get("seconds"), dict):
        # the choice's recorded wall time, then each member's time on the final set
        rows.append(("make democracy", float(dem["seconds"]) + sum(float(v) for v in dem["final"]["seconds"].values()),
                     "democracy.json", "the democracy study: the choice, then the final set"))
    play = ctx["democracy_play"].plain() if "democracy_play" in ctx else {}
    if isinstance(play.get("wall_seconds"), dict):
        rows.append(("make democracy-play", sum(float(v) for v in play["wall_seconds"].values()),
                     "democracy_play.json", "the democracy and its best member in one-ply play"))
    if "data_store" in ctx and "restore" in ctx["data_store"].plain():
        restored = ctx["data_store"].plain()["restore"]   # the whole command where it was timed, else the restore
        rows.append(("make restore-data", float(restored.get("make_restore_data_wall_seconds", restored["seconds"])),
                     "data_store.json", "the labelled data back from the store"))
    if "clock_strength" in ctx:
        clock_runs = ctx["clock_strength"].plain()["runs"].values()
        rows.append(("make clock-strength", sum(float(r["seconds"]) for r in clock_runs), "clock_strength.json",
                     "the search on a real clock"))
    for name, command, what in (("where_lost", "make where-lost", "where the search's lost games went wrong"),
                                ("time_use", "make time-use", "the search's use of its time"),
                                ("move_prior", "make move-prior", "a prior over quiet moves"),
                                ("search_ab", "make search-ab", "the search's parts in self-play")):
        if name in ctx:
            rows.append((command, sec(name, "seconds"), f"{name}.json", what))
    if "seeds" in ctx:
        # the file's own "seconds" is its last invocation's (a --compare-only rewrite takes seconds)
        rows.append(("make seeds", sum(float(v["seconds"]) for v in ctx["seeds"].plain()["seeds"].values()),
                     "seeds.json", "the seed spread"))
    rows += [
        ("make test", sec("ci", "make_test_seconds"), "ci.json", "the test suite"),
        ("make report", sec("ci", "make_report_seconds"), "ci.json", "this report"),
    ]
    return [{"target": t, "seconds": s, "file": f, "makes": m} for t, s, f, m in rows]
