"""Everything the report reads from measured results, in one place.

Each results file is written by one command (see :data:`FILES`); its schema is
interpreted only here, by the small adapter functions below, which return plain
rows for the tables and figures. A missing file, an unreadable one or a missing key
gives ``None`` (or an empty list): the caller then writes a clearly marked
"not yet measured" placeholder, and the build goes on. When a producer changes its
schema, adapt the matching function here and nothing else.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# file name under report/results -> (what it holds, the command that writes it)
FILES: dict[str, tuple[str, str]] = {
    "networks.json": ("held-out MAE of every network and the two baselines", "knights results"),
    "training_runs.json": ("time and size of every shipped training run", "knights ship-models"),
    "ensemble.json": ("learners, K sweep, blends of the democracy", "knights ensemble"),
    "elo.json": ("ratings with intervals, scores against every opponent", "make strength"),
    "quality.json": ("move quality of the shipped bot (Stockfish-judged)", "make strength"),
    "bench.json": ("throughput benchmarks against their baselines", "make bench"),
    "dataset.json": ("how the full dataset was generated (rows, games, seconds)", "make data"),
    "data_stats.json": ("statistics of the full dataset", "report/data_stats.py data/full"),
    "settings.json": ("the code's settings: data recipe, versions, engine", "knights settings"),
}


def dig(obj, *keys, default=None):
    """``obj[k1][k2]...`` or ``default`` when any step is missing."""
    for k in keys:
        in_dict = isinstance(obj, dict) and k in obj
        in_list = isinstance(obj, list) and isinstance(k, int) and -len(obj) <= k < len(obj)
        if in_dict or in_list:
            obj = obj[k]
        else:
            return default
    return obj


def number(x) -> float | None:
    """A finite float, else None (strings, NaN, missing)."""
    if isinstance(x, bool) or x is None:
        return None
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


@dataclass
class Input:
    """One file the report read (or wanted to): for the provenance table."""

    label: str
    path: Path
    status: str            # "read", "missing", "unreadable"
    producer: str = ""
    stamp: str | None = None
    quick: bool | None = None
    error: str | None = None


@dataclass
class Sources:
    """Where to read from (the repository by default; tests point elsewhere)."""

    root: Path = REPO
    results_dir: Path | None = None
    models: dict[str, Path] = field(default_factory=dict)
    inputs: dict[str, Input] = field(default_factory=dict)
    _cache: dict[Path, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self.results_dir = Path(self.results_dir) if self.results_dir else self.root / "report" / "results"
        self.models = {"EL": self.root / "models_EL", "SL": self.root / "models_SL", **self.models}

    # -- raw files ------------------------------------------------------------------------
    def _load(self, path: Path, label: str, producer: str = ""):
        if path in self._cache:
            return self._cache[path]
        doc = None
        if not path.is_file():
            rec = Input(label, path, "missing", producer)
        else:
            try:
                doc = json.loads(path.read_text())
                rec = Input(label, path, "read", producer, stamp=_stamp(doc), quick=_quick(doc))
            except (OSError, ValueError) as exc:
                rec = Input(label, path, "unreadable", producer, error=str(exc).splitlines()[0][:120])
        self.inputs.setdefault(label, rec)
        self._cache[path] = doc
        return doc

    def result(self, name: str) -> dict | None:
        """``report/results/<name>`` as parsed JSON, or None."""
        doc = self._load(self.results_dir / name, f"report/results/{name}", FILES.get(name, ("", ""))[1])
        return doc if isinstance(doc, dict) else None

    def meta(self, family: str, number_: int) -> dict | None:
        """Metadata of a trained version (``models_EL/v8.json``), or None."""
        path = self.models[family] / f"v{number_}.json"
        doc = self._load(path, f"models_{family}/v{number_}.json", f"knights ship-models ({family}/v{number_})")
        return doc if isinstance(doc, dict) else None

    def weights_file(self, family: str, number_: int) -> Path:
        return self.models[family] / f"v{number_}.pt"

    def missing(self, name: str) -> str:
        """Why a result is absent, for a placeholder: 'report/results/x.json (command)'."""
        what = FILES.get(name, ("", ""))[1]
        return f"report/results/{name}" + (f" ({what})" if what else "")


def _stamp(doc) -> str | None:
    if not isinstance(doc, dict):
        return None
    for key in ("generated", "updated", "created", "date"):
        if isinstance(doc.get(key), str):
            return doc[key][:19]
    env = dig(doc, "environment", "date") or dig(doc, "machine", "date")
    return env[:19] if isinstance(env, str) else None


def _quick(doc) -> bool | None:
    if isinstance(doc, dict) and isinstance(doc.get("quick"), bool):
        return doc["quick"]
    if isinstance(doc, dict) and isinstance(doc.get("benchmarks"), dict):
        flags = [b.get("quick") for b in doc["benchmarks"].values() if isinstance(b, dict)]
        if any(f is True for f in flags):
            return True
        if flags and all(f is False for f in flags):
            return False
    return None


# =========================================================================== adapters
# -- networks ---------------------------------------------------------------------------
def network_table(src: Sources, versions: list[int]) -> dict | None:
    """Rows of the held-out table: name, kind, parameters, epochs, mae, median_ae,
    sign_agreement; plus data (folder, letters, rows) and where it came from.

    From ``networks.json`` when present; otherwise from each trained version's
    metadata (its own test split; no baselines)."""
    doc = src.result("networks.json")
    if doc and isinstance(doc.get("evaluation"), list):
        rows = [dict(name=str(r.get("name")), kind=r.get("kind", "network"), parameters=number(r.get("parameters")),
                     epochs=number(r.get("epochs")), mae=number(r.get("mae")), median_ae=number(r.get("median_ae")),
                     sign_agreement=number(r.get("sign_agreement")), seconds=number(r.get("seconds")))
                for r in doc["evaluation"] if isinstance(r, dict)]
        return {"rows": rows, "from": "networks", "rows_tested": number(dig(doc, "data", "rows")),
                "folder": dig(doc, "data", "folder"), "letters": dig(doc, "data", "test_letters")}
    rows = []
    for v in versions:
        meta = src.meta("EL", v)
        if not meta or not isinstance(meta.get("test"), dict):
            continue
        t = meta["test"]
        rows.append(dict(name=f"EL/v{v}", kind="network", parameters=number(meta.get("parameters")),
                         epochs=number(len(dig(meta, "history", "train_loss", default=[]) or [])) or None,
                         mae=number(t.get("mae")), median_ae=number(t.get("median_ae")),
                         sign_agreement=number(t.get("sign_agreement")), seconds=None))
    if not rows:
        return None
    meta = src.meta("EL", versions[-1]) or {}
    return {"rows": rows, "from": "metadata", "rows_tested": number(dig(meta, "data", "test", "rows")),
            "folder": dig(meta, "data", "test", "folder"), "letters": dig(meta, "data", "test", "letters")}


def move_table(src: Sources, versions: list[int]) -> list[dict]:
    """SL rows: name, parameters, epochs, legal_share, top1_played (networks.json, else metadata)."""
    doc = src.result("networks.json")
    out = []
    if doc and isinstance(doc.get("move_networks"), list):
        for r in doc["move_networks"]:
            if isinstance(r, dict):
                out.append(dict(name=str(r.get("name")), parameters=number(r.get("parameters")),
                                epochs=number(r.get("epochs")), legal_share=number(r.get("legal_share")),
                                top1_played=number(r.get("top1_played")), rows=number(r.get("rows"))))
        if out:
            return out
    for v in versions:
        meta = src.meta("SL", v)
        if meta and isinstance(meta.get("test"), dict):
            out.append(dict(name=f"SL/v{v}", parameters=number(meta.get("parameters")),
                            epochs=number(len(dig(meta, "history", "train_loss", default=[]) or [])),
                            legal_share=number(meta["test"].get("legal_share")),
                            top1_played=number(meta["test"].get("top1_played")), rows=number(meta["test"].get("rows"))))
    return out


def history(src: Sources, family: str, v: int) -> dict | None:
    """Per-epoch train_loss, val_loss, rows_per_second, epoch_seconds, device; quick flag,
    training rows and seconds, parameters, stored form and the batch size trained with."""
    meta = src.meta(family, v)
    h = dig(meta, "history")
    if not isinstance(h, dict) or not h.get("train_loss"):
        return None
    clean = lambda xs: [number(x) for x in (xs or [])]  # noqa: E731
    return {"train_loss": clean(h.get("train_loss")), "val_loss": clean(h.get("val_loss")),
            "rows_per_second": clean(h.get("rows_per_second")), "epoch_seconds": clean(h.get("epoch_seconds")),
            "device": h.get("device"), "quick": bool(meta.get("quick")),
            "train_rows": number(dig(meta, "data", "train", "rows")),
            "train_seconds": number(meta.get("train_seconds")), "parameters": number(meta.get("parameters")),
            "stored": meta.get("stored"), "batch_size": number(dig(meta, "train_config", "batch_size"))}


def data_recipe(src: Sources, versions: list[int]) -> dict:
    """The full dataset as the models saw it: generator recipe, rows and chunks of the
    train / val / test splits (from the newest trained, non-quick EL version)."""
    for v in reversed(versions):
        meta = src.meta("EL", v)
        if meta and not meta.get("quick") and isinstance(meta.get("data"), dict):
            d = meta["data"]
            return {"version": f"EL/v{v}", "generator": dig(d, "train", "generator") or {},
                    **{k: {"rows": number(dig(d, k, "rows")), "chunks": number(dig(d, k, "chunks")),
                           "letters": dig(d, k, "letters"), "folder": dig(d, k, "folder")}
                       for k in ("train", "val", "test")}}
    return {}


# -- settings (imported from the code by knights settings) --------------------------------------
def settings(src: Sources, section: str) -> dict:
    """One section of ``settings.json`` (``data``, ``versions`` or ``engine``), ``{}`` when missing."""
    found = dig(src.result("settings.json"), section)
    return found if isinstance(found, dict) else {}


def versions(src: Sources, family: str) -> list[dict]:
    """The versions of ``family`` the code declares, by number: name, family, number,
    inputs, train (the version's TrainConfig), data (letters) and layers (convs,
    widths) as dicts, parent, penalty and parameters, as ``settings.json`` records them."""
    rows = []
    for name, v in settings(src, "versions").items():
        number_ = name.removeprefix(f"{family}/v")
        if number_ == name or not number_.isdigit() or not isinstance(v, dict):
            continue
        sections = {k: v[k] if isinstance(v.get(k), dict) else {} for k in ("inputs", "train", "data", "layers")}
        rows.append({"name": name, "family": family, "number": int(number_), **sections, "parent": v.get("parent"),
                     "penalty": number(v.get("penalty")), "parameters": number(v.get("parameters"))})
    return sorted(rows, key=lambda v: v["number"])


def file_sizes(src: Sources, pattern: str) -> dict[str, int]:
    """Sizes in bytes of the repository's files matching a glob (the shipped artefacts)."""
    return {str(p.relative_to(src.root)): p.stat().st_size for p in sorted(src.root.glob(pattern)) if p.is_file()}


# -- training runs ------------------------------------------------------------------------
def mean_rate(values) -> float | None:
    """The mean of the numeric, non-zero rates in ``values`` (None when there are none)."""
    xs = [number(x) for x in values or [] if number(x)]
    return sum(xs) / len(xs) if xs else None


def training_rate(run: dict | None, hist: dict | None) -> float | None:
    """Training rows a second of a version: its runs-log mean (:func:`training_runs`),
    else the mean of its metadata's per-epoch rates (:func:`history`)."""
    rps = (run or {}).get("rows_per_second")
    return rps if rps is not None else mean_rate((hist or {}).get("rows_per_second"))


def epochs_trained(run: dict | None, hist: dict | None) -> float | None:
    """Epochs the shipped weights of a version were trained for: its runs-log entry
    (:func:`training_runs`), else the length of its metadata's loss history (:func:`history`)."""
    epochs = (run or {}).get("epochs")
    return epochs if epochs is not None else (len(hist["train_loss"]) if hist else None)


def training_runs(src: Sources) -> dict[str, dict]:
    """``{"EL/v8": {seconds, epochs, train_rows, rows_per_second (mean), device}}``."""
    doc = src.result("training_runs.json") or {}
    runs = doc.get("runs", doc) if isinstance(doc, dict) else {}
    out = {}
    for name, r in runs.items():
        if not isinstance(r, dict):
            continue
        rps = r.get("rows_per_second")
        out[str(r.get("version", name))] = {"seconds": number(r.get("seconds")), "epochs": number(r.get("epochs")),
                                            "train_rows": number(r.get("train_rows")),
                                            "rows_per_second": mean_rate(rps if isinstance(rps, list) else [rps]),
                                            "device": r.get("device")}
    return out


# -- ensemble -------------------------------------------------------------------------------
def k_sweep(src: Sources) -> dict | None:
    s = dig(src.result("ensemble.json"), "k_sweep")
    if not isinstance(s, dict) or not s.get("ks") or not s.get("mae"):
        return None
    pairs = [(number(k), number(m)) for k, m in zip(s["ks"], s["mae"], strict=False)
             if number(k) is not None and number(m) is not None]
    if not pairs:
        return None
    best = number(s.get("best_k")) or min(pairs, key=lambda p: p[1])[0]
    return {"ks": [p[0] for p in pairs], "mae": [p[1] for p in pairs], "best_k": best,
            "train_rows": number(s.get("train_rows")), "val_rows": number(s.get("val_rows"))}


def ensemble_members(src: Sources) -> list[dict]:
    members = dig(src.result("ensemble.json"), "members")
    if not isinstance(members, dict):
        return []
    return [{"name": n, "kind": m.get("kind"), "val_mae": number(dig(m, "val", "mae")),
             "test_mae": number(dig(m, "test", "mae")), "sign": number(dig(m, "test", "sign_agreement")),
             "ms": number(m.get("ms_per_decision")), "mb": number(m.get("mb")),
             "train_rows": number(dig(m, "fit", "train_rows")), "fit_seconds": number(dig(m, "fit", "fit_seconds"))}
            for n, m in members.items() if isinstance(m, dict)]


def ensemble_blends(src: Sources) -> list[dict]:
    doc = src.result("ensemble.json")
    blends = dig(doc, "blends")
    if not isinstance(blends, dict):
        return []
    shipped = dig(doc, "shipped", "blend")
    return [{"name": n, "how": b.get("how", ""),
             "weights": {k: number(w) or 0.0 for k, w in (b.get("weights") or {}).items()},
             "val_mae": number(dig(b, "val", "mae")), "test_mae": number(dig(b, "test", "mae")),
             "ms": number(b.get("ms_per_decision")), "mb": number(b.get("mb")), "shipped": n == shipped}
            for n, b in blends.items() if isinstance(b, dict)]


def ensemble_summary(src: Sources) -> dict:
    doc = src.result("ensemble.json") or {}
    return {"shipped": dig(doc, "shipped", "blend"), "load_seconds": number(dig(doc, "shipped", "load_seconds")),
            "ms": number(dig(doc, "shipped", "ms_per_decision")), "mb": number(dig(doc, "shipped", "mb")),
            "budget_ms": number(dig(doc, "shipped", "budgets", "ms_per_decision")),
            "budget_mb": number(dig(doc, "shipped", "budgets", "mb")),
            "test_rows": number(dig(doc, "data", "test", "rows")), "val_rows": number(dig(doc, "data", "val", "rows")),
            "train_rows": number(dig(doc, "data", "train", "rows")),
            "seconds": number(doc.get("total_seconds")), "quick": doc.get("quick"),
            "networks": doc.get("networks") or []}


# -- playing strength -------------------------------------------------------------------------
def elo_players(src: Sources) -> list[dict]:
    """name, label, kind (ours / opponent / anchor), rating, low, high, games, score,
    shipped, vs {opponent: {score, games, wins_by_mate}}; strongest first."""
    players = dig(src.result("elo.json"), "players")
    if not isinstance(players, list):
        return []
    out = []
    for p in players:
        if not isinstance(p, dict) or number(p.get("rating")) is None:
            continue
        vs = {o: {"score": number(v.get("score")), "games": number(v.get("games")),
                  "wins_by_mate": number(v.get("wins_by_mate")), "wins": number(v.get("wins"))}
              for o, v in (p.get("vs") or {}).items() if isinstance(v, dict)}
        games = number(p.get("games"))
        rate = number(p.get("score_rate"))
        if rate is None and games:
            rate = (number(p.get("score")) or 0.0) / games
        out.append({"name": str(p.get("player")), "label": str(p.get("label") or p.get("player")),
                    "kind": p.get("kind") or ("anchor" if p.get("anchor") else "opponent"),
                    "rating": number(p.get("rating")), "low": number(p.get("low")), "high": number(p.get("high")),
                    "games": games, "score": rate, "shipped": bool(p.get("shipped")),
                    "relative": bool(p.get("relative")), "vs": vs})
    return sorted(out, key=lambda p: -p["rating"])


def elo_summary(src: Sources) -> dict:
    doc = src.result("elo.json") or {}
    targets = [{"opponent": t.get("opponent"), "what": t.get("what", ""), "games": number(t.get("games")),
                "score": number(t.get("score")), "mate_share": number(t.get("mate_share")), "status": t.get("status")}
               for t in (doc.get("targets") or []) if isinstance(t, dict)]
    return {"games": number(doc.get("games")), "seconds_games": number(doc.get("seconds_games")),
            "seconds_quality": number(doc.get("seconds_quality")), "workers": number(doc.get("workers")),
            "anchors": doc.get("anchors") or {}, "method": doc.get("method", ""), "targets": targets,
            "max_plies": number(dig(doc, "settings", "max_plies")),
            "adjudicate_cp": number(dig(doc, "settings", "adjudicate_cp"))}


def quality_players(src: Sources) -> tuple[list[dict], dict]:
    doc = src.result("quality.json")
    players = dig(doc, "players")
    if not isinstance(players, dict):
        return [], {}
    rows = [{"name": n, "games": number(p.get("games")), "moves": number(p.get("moves")),
             "accuracy": number(p.get("accuracy")), "acpl": number(p.get("acpl")),
             "inaccuracies": number(p.get("inaccuracies")), "mistakes": number(p.get("mistakes")),
             "blunders": number(p.get("blunders")), "blunders_per_game": number(p.get("blunders_per_game"))}
            for n, p in players.items() if isinstance(p, dict)]
    return rows, {"depth": number(doc.get("depth")), "games": number(doc.get("games"))}


# -- benchmarks ------------------------------------------------------------------------------
BENCH_ORDER = ("generate", "encode", "cache", "train_vs_row", "train_vs_model", "decision", "decision_ms",
               "decision_ens", "soak", "ensemble_load", "ensemble_decision")


def bench_entries(src: Sources) -> list[dict]:
    """name, status, unit, rate, baseline_rate, ratio, metric, target, baseline, quick,
    details; in :data:`BENCH_ORDER`, then any others."""
    benches = dig(src.result("bench.json"), "benchmarks")
    if not isinstance(benches, dict):
        return []
    names = [n for n in BENCH_ORDER if n in benches] + [n for n in benches if n not in BENCH_ORDER]
    out = []
    for n in names:
        b = benches[n]
        if not isinstance(b, dict):
            continue
        out.append({"name": n, "status": b.get("status", "?"), "unit": b.get("unit", ""),
                    "rate": number(b.get("rate")), "baseline_rate": number(b.get("baseline_rate")),
                    "ratio": number(b.get("ratio")), "metric": b.get("metric", "ratio"),
                    "target": number(b.get("target")), "baseline": b.get("baseline", ""),
                    "quick": b.get("quick"), "details": b.get("details") or {},
                    "cpus": dig(b, "machine", "cpu_count"), "date": dig(b, "machine", "date")})
    return out


def bench(src: Sources, name: str) -> dict | None:
    return next((b for b in bench_entries(src) if b["name"] == name), None)


def decision_ms(src: Sources) -> list[tuple[str, float, str]]:
    """Milliseconds per move decision, ours and baseline, of the engine benchmarks
    (``decision``: batched engine vs the original's per-move loop; ``decision_ens``:
    the same with the democracy; ``ensemble_decision``: the democracy vs its network
    alone). Returns (label, ms, "ours" / "baseline")."""
    labels = {"decision": ("one-ply engine, network", "per-move loop (original), network"),
              "decision_ens": ("one-ply engine, democracy", "per-move loop (original), democracy"),
              "ensemble_decision": ("democracy evaluation", "its network alone")}
    out = []
    for name, (ours, base) in labels.items():
        e = bench(src, name)
        if not e or e["status"] == "SKIP":
            continue
        d = e["details"]
        ms = number(d.get("ms_per_decision")) or (1000.0 / e["rate"] if e["rate"] else None)
        base_ms = (number(d.get("baseline_ms_per_decision")) or number(d.get("network_ms_per_decision"))
                   or (1000.0 / e["baseline_rate"] if e["baseline_rate"] else None))
        if ms:
            out.append((ours, ms, "ours"))
        if base_ms:
            out.append((base, base_ms, "baseline"))
    return out


def soak(src: Sources) -> dict | None:
    """The soak test: games, clean games, illegal moves, errors, capped games, outcomes
    against a random mover and in self-play, ms per ply, evaluator."""
    e = bench(src, "soak")
    if not e or e["status"] == "SKIP":
        return None
    d = e["details"]
    games = number(d.get("games")) or e["baseline_rate"]
    if not games:
        return None
    outcome = lambda x: {str(k): number(v) or 0.0 for k, v in x.items()} if isinstance(x, dict) else {}  # noqa: E731
    return {"games": games, "clean": e["rate"], "illegal": number(d.get("illegal")), "errors": number(d.get("errors")),
            "capped": number(d.get("capped")), "vs_random": outcome(d.get("vs_random")),
            "self_play": outcome(d.get("self_play")), "ms_per_ply": number(d.get("ms_per_ply")),
            "plies": number(d.get("plies")), "evaluator": d.get("evaluator"), "status": e["status"],
            "quick": e["quick"]}


# -- data ----------------------------------------------------------------------------------------
def data_stats_committed(src: Sources) -> dict | None:
    """Statistics of the full dataset, when computed once and committed."""
    doc = src.result("data_stats.json")
    return doc if doc and number(doc.get("rows")) else None


def dataset_generation(src: Sources) -> dict:
    """How ``make data`` generated the full dataset: rows, games, seconds, workers,
    Stockfish build, and the recipe it ran (seed, depth, max_plies)."""
    doc = src.result("dataset.json") or {}
    recipe = doc.get("recipe") if isinstance(doc.get("recipe"), dict) else {}
    return {"seconds": number(doc.get("seconds")), "rows": number(doc.get("rows")), "games": number(doc.get("games")),
            "workers": number(doc.get("workers")), "stockfish": doc.get("stockfish"),
            **{k: number(recipe.get(k)) for k in ("seed", "depth", "max_plies")}}
