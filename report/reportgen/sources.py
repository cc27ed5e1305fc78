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
    "dataset_more.json": ("the grown data of the other generator styles (positions, seconds)", "make more-data"),
    "data_stats.json": ("statistics of the full dataset", "report/data_stats.py data/full"),
    "settings.json": ("the code's settings: data recipe, versions, engine", "knights settings"),
    "independent.json": ("every evaluator on the independent test sets, by |eval| bucket", "knights results"),
    "search_strength.json": ("the alpha-beta search against Stockfish anchors", "knights match (search)"),
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
        listed = {r["name"] for r in rows}
        for v in versions:  # trained after the table was measured: its own metadata's figures
            row = _meta_row(src, v)
            if row and row["name"] not in listed:
                rows.append({**row, "from_metadata": True})
        return {"rows": rows, "from": "networks", "rows_tested": number(dig(doc, "data", "rows")),
                "folder": dig(doc, "data", "folder"), "letters": dig(doc, "data", "test_letters")}
    rows = []
    for v in versions:
        row = _meta_row(src, v)
        if row:
            rows.append(row)
    if not rows:
        return None
    meta = src.meta("EL", versions[-1]) or {}
    return {"rows": rows, "from": "metadata", "rows_tested": number(dig(meta, "data", "test", "rows")),
            "folder": dig(meta, "data", "test", "folder"), "letters": dig(meta, "data", "test", "letters")}


def _meta_row(src: Sources, v: int) -> dict | None:
    """A held-out row from a version's own metadata (its test split), or None."""
    meta = src.meta("EL", v)
    if not meta or not isinstance(meta.get("test"), dict):
        return None
    t = meta["test"]
    return dict(name=f"EL/v{v}", kind="network", parameters=number(meta.get("parameters")),
                epochs=number(len(dig(meta, "history", "train_loss", default=[]) or [])) or None,
                mae=number(t.get("mae")), median_ae=number(t.get("median_ae")),
                sign_agreement=number(t.get("sign_agreement")), seconds=None)


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
            "train_loss_name": dig(meta, "loss", "train"), "val_loss_name": dig(meta, "loss", "validation"),
            "train_rows": number(dig(meta, "data", "train", "rows")),
            "train_seconds": number(meta.get("train_seconds")), "parameters": number(meta.get("parameters")),
            "stored": meta.get("stored"), "batch_size": number(dig(meta, "train_config", "batch_size")),
            **kept_epoch(h, bool(dig(meta, "train_config", "keep_best")))}


def kept_epoch(h: dict, keep_best: bool) -> dict:
    """Which epoch's weights were shipped and how its validation loss compares with the
    best epoch's: ``best_epoch``, ``best_val``, ``last_val``, ``kept_epoch``,
    ``kept_val``, ``keep_best`` (epochs count from 1). Without ``keep_best`` the loop
    ships the last epoch, whatever its validation loss."""
    val = [number(x) for x in (h.get("val_loss") or [])]
    known = [(i + 1, v) for i, v in enumerate(val) if v is not None]
    if not known:
        return {"best_epoch": None, "best_val": None, "last_val": None, "kept_epoch": None, "kept_val": None,
                "keep_best": keep_best}
    best_epoch, best_val = min(known, key=lambda p: p[1])
    recorded = number(h.get("best_epoch"))
    if keep_best and recorded is not None and 1 <= recorded <= len(val) and val[int(recorded) - 1] is not None:
        best_epoch, best_val = int(recorded), val[int(recorded) - 1]
    last_epoch, last_val = known[-1]
    kept = (best_epoch, best_val) if keep_best else (last_epoch, last_val)
    return {"best_epoch": best_epoch, "best_val": best_val, "last_val": last_val, "kept_epoch": kept[0],
            "kept_val": kept[1], "keep_best": keep_best}


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
    """The versions of ``family``, by number: those the code declares (``settings.json``:
    name, family, number, inputs, train (the version's TrainConfig), data (letters) and
    layers (convs, widths) as dicts, parent, penalty and parameters) and those trained
    (a ``models_<family>/vN.json`` file, which adds ``description``; a version only
    trained, not declared, takes what its metadata records). So a new version shows in
    every table as soon as either file exists."""
    rows: dict[int, dict] = {}
    for name, v in settings(src, "versions").items():
        number_ = name.removeprefix(f"{family}/v")
        if number_ == name or not number_.isdigit() or not isinstance(v, dict):
            continue
        sections = {k: v[k] if isinstance(v.get(k), dict) else {} for k in ("inputs", "train", "data", "layers")}
        rows[int(number_)] = {"name": name, "family": family, "number": int(number_), **sections,
                              "parent": v.get("parent"), "penalty": number(v.get("penalty")),
                              "parameters": number(v.get("parameters")), "description": None}
    for n in trained_numbers(src, family):
        meta = src.meta(family, n) or {}
        description = meta.get("description") if isinstance(meta.get("description"), str) else None
        if n in rows:
            rows[n]["description"] = description
            continue
        data = {k: dig(meta, "data", k, "letters") for k in ("train", "val") if dig(meta, "data", k, "letters")}
        rows[n] = {"name": f"{family}/v{n}", "family": family, "number": n, "inputs": _section(meta, "inputs"),
                   "train": _section(meta, "train_config"), "data": data, "layers": {}, "parent": meta.get("parent"),
                   "penalty": None, "parameters": number(meta.get("parameters")), "description": description}
    return [rows[n] for n in sorted(rows)]


def _section(doc: dict, key: str) -> dict:
    return doc[key] if isinstance(doc.get(key), dict) else {}


def trained_numbers(src: Sources, family: str) -> list[int]:
    """The numbers of the versions of ``family`` with metadata (``models_EL/v8.json``):
    the registry of what is trained, read from the files themselves."""
    folder = src.models[family]
    found = (p.stem[1:] for p in folder.glob("v*.json")) if folder.is_dir() else ()
    return sorted(int(n) for n in found if n.isdigit())


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


def blend_by_validation(src: Sources) -> str | None:
    """The blend that the validation rows choose: the lowest validation MAE among the
    blends within the shipped budgets (ms a decision, MB of files). The test rows are
    only reported, never used to choose; the report checks that this is the shipped one."""
    blends = ensemble_blends(src)
    budgets = dig(src.result("ensemble.json"), "shipped", "budgets") or {}
    ms, mb = number(budgets.get("ms_per_decision")), number(budgets.get("mb"))
    ok = [b for b in blends if b["val_mae"] is not None
          and (ms is None or (b["ms"] is not None and b["ms"] <= ms))
          and (mb is None or (b["mb"] is not None and b["mb"] <= mb))]
    return min(ok, key=lambda b: b["val_mae"])["name"] if ok else None


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
               "decision_ens", "soak", "ensemble_load", "ensemble_decision", "search_nodes", "search_evals")


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


PER_EVENT = {"decisions/s": "ms a decision", "loads/s": "s a load"}
"""Rates whose target is really a time per event: shown as that time, as the target says it."""


def bench_kind(b: dict) -> str:
    """How a benchmark is judged: ``ratio`` (ours over a baseline run in the same
    process, at least the target), ``time`` (a time per decision or load, at most the
    target), ``rate`` (a rate, at least the target), ``count`` (clean games out of
    games played: all of them) or ``info`` (measured, no target)."""
    if b["unit"] == "games":
        return "count"
    if not b["target"]:
        return "info"
    if b["metric"] == "ratio":
        return "ratio"
    return "time" if b["unit"] in PER_EVENT else "rate"


def bench_measure(b: dict) -> tuple[float | None, float | None]:
    """The value a benchmark is judged on and its target, in the unit the target is
    stated in (a ratio, a rate, or a time per event: milliseconds a decision, seconds a load)."""
    kind = bench_kind(b)
    if kind in ("ratio", "info"):
        return b["ratio"], b["target"]
    if kind == "time":
        scale = 1000.0 if b["unit"] == "decisions/s" else 1.0
        return ((scale / b["rate"]) if b["rate"] else None), ((scale / b["target"]) if b["target"] else None)
    return b["rate"], b["target"]


def bench_met(b: dict) -> bool | None:
    """Whether the benchmark meets its target, judged here from its figures (None:
    nothing to judge); the report sets it beside the status the benchmark recorded."""
    kind = bench_kind(b)
    value, target = bench_measure(b)
    if kind == "count":
        return None if b["rate"] is None or b["baseline_rate"] is None else b["rate"] >= b["baseline_rate"]
    if kind == "info" or value is None or target is None:
        return None
    return value <= target if kind == "time" else value >= target


def bench(src: Sources, name: str) -> dict | None:
    return next((b for b in bench_entries(src) if b["name"] == name), None)


def decision_ms(src: Sources) -> list[tuple[str, float, str]]:
    """Milliseconds per move decision, ours and baseline, of the engine benchmarks
    (``decision``: batched engine vs the original's per-move loop; ``decision_ens``:
    the same with the democracy; ``ensemble_decision``: the democracy vs its network
    alone). Returns (label, ms, "ours" / "baseline" / "member")."""
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
        if base_ms:  # the democracy's reference is one of its members, not the original's way
            out.append((base, base_ms, "member" if name == "ensemble_decision" else "baseline"))
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


# -- independent test sets ---------------------------------------------------------------
HEADLINE_KEYS = ("quiet_level_mae", "quiet_level_rows", "win_probability_error", "best_move_share", "mean_cp_loss")
"""What play needs, per evaluation row (``knights results``; ``None`` where not measured): MAE on
quiet positions within a pawn of level, the win-probability error, and (``games`` only) the
one-ply move quality."""


def _evaluation_rows(rows) -> list[dict]:
    out = []
    for r in rows if isinstance(rows, list) else []:
        if not isinstance(r, dict) or number(r.get("mae")) is None:
            continue
        buckets = {str(b.get("bucket")): {"rows": number(b.get("rows")), "mae": number(b.get("mae"))}
                   for b in (r.get("buckets") or []) if isinstance(b, dict)}
        out.append({"name": str(r.get("name")), "kind": str(r.get("kind", "network")), "mae": number(r.get("mae")),
                    "median_ae": number(r.get("median_ae")), "sign_agreement": number(r.get("sign_agreement")),
                    "rows": number(r.get("rows")), "buckets": buckets,
                    **{k: number(r.get(k)) for k in HEADLINE_KEYS}})
    return out


def independent_sets(src: Sources) -> list[dict]:
    """The independent test sets (``independent.json``): name, file, rows, generator,
    label_engine, label_depth, seed, dropped (reason -> rows), build_seconds (generate +
    label + assemble of its source; sets built from one source share it), source_note,
    evaluation rows (name, kind, mae, median_ae, sign_agreement, buckets {bucket: {rows,
    mae}}), and democracy (best_member, best_member_mae, the democracy's and with-threats'
    MAE and gain)."""
    sets = dig(src.result("independent.json"), "sets")
    out = []
    for st in sets if isinstance(sets, list) else []:
        if not isinstance(st, dict) or not st.get("set"):
            continue
        times = st.get("build_time_s") if isinstance(st.get("build_time_s"), dict) else {}
        parts = [number(times.get(k)) for k in ("generate", "label", "assemble")]
        dem = st.get("democracy") if isinstance(st.get("democracy"), dict) else {}
        out.append({"name": str(st["set"]), "file": st.get("file"), "rows": number(st.get("rows")),
                    "generator": st.get("generator") or "", "label_engine": st.get("label_engine"),
                    "label_depth": number(st.get("label_depth")), "seed": number(st.get("seed")),
                    "dropped": {str(k): number(v) or 0.0 for k, v in (st.get("dropped") or {}).items()},
                    "build_seconds": sum(p for p in parts if p is not None) if any(p is not None for p in parts)
                    else None, "source_note": times.get("note") or "",
                    "evaluation": _evaluation_rows(st.get("evaluation")),
                    "move_quality": st.get("move_quality") if isinstance(st.get("move_quality"), dict) else None,
                    "democracy": {"best_member": dem.get("best_member"),
                                  "best_member_mae": number(dem.get("best_member_mae")),
                                  **{k: {"mae": number(dig(dem, k, "mae")), "gain": number(dig(dem, k, "gain")),
                                         "relative_gain": number(dig(dem, k, "relative_gain"))}
                                     for k in dem if isinstance(dem.get(k), dict)}}})
    return out


def independent_letters(src: Sources) -> dict:
    """The test letters' section of ``independent.json``: ``rows`` (evaluation rows),
    ``measured`` ("now" / "earlier"), ``data`` (folder, letters, rows)."""
    letters = dig(src.result("independent.json"), "letters")
    if not isinstance(letters, dict):
        return {"rows": [], "measured": None, "data": {}}
    rows = _evaluation_rows(letters.get("evaluation")) + _evaluation_rows(letters.get("extra_rows"))
    return {"rows": rows, "measured": letters.get("measured"),
            "data": letters.get("data") if isinstance(letters.get("data"), dict) else {}}


def independent_seconds(src: Sources) -> float | None:
    """How long ``make independent`` took: the build time of each source once (sets cut
    from the same source games share theirs)."""
    seen: dict[str, float] = {}
    for st in independent_sets(src):
        if st["build_seconds"] is not None:
            seen.setdefault(st["source_note"] or st["name"], st["build_seconds"])
    return sum(seen.values()) or None


def best_network_independent(src: Sources) -> str | None:
    """The network with the lowest mean MAE over the independent sets that measured it
    on every set (the one the report plots against Stockfish)."""
    sets = independent_sets(src)
    maes: dict[str, list[float]] = {}
    for st in sets:
        for r in st["evaluation"]:
            if r["kind"] == "network":
                maes.setdefault(r["name"], []).append(r["mae"])
    full = {n: sum(m) / len(m) for n, m in maes.items() if len(m) == len(sets)}
    return min(full, key=lambda n: full[n]) if full else None


# -- search --------------------------------------------------------------------------------
def search_runs(src: Sources) -> list[dict]:
    """The search's matches (``search_strength.json``): key, label, seconds a move (from
    the player's ``@ms``), games, rating, low, high, seconds_per_game, vs {opponent:
    {score, games, wins, draws, losses}}; in the file's order."""
    doc = src.result("search_strength.json")
    runs = dig(doc, "runs")
    out = []
    for key, r in (runs.items() if isinstance(runs, dict) else []):
        if not isinstance(r, dict) or number(r.get("rating")) is None:
            continue
        interval = r.get("interval") if isinstance(r.get("interval"), list) and len(r["interval"]) == 2 else [None] * 2
        player = str(r.get("player") or "")
        ms = number(player.rsplit("@", 1)[1]) if "@" in player else None
        vs = {str(o): {k: number(v.get(k)) for k in ("score", "games", "wins", "draws", "losses")}
              for o, v in (r.get("vs") or {}).items() if isinstance(v, dict)}
        out.append({"key": str(key), "label": str(key).replace("_", " "), "player": player,
                    "seconds_per_move": ms / 1000 if ms else None, "games": number(r.get("games")),
                    "rating": number(r.get("rating")), "low": number(interval[0]), "high": number(interval[1]),
                    "seconds_per_game": number(r.get("seconds_per_game")), "vs": vs})
    return out


def search_note(src: Sources) -> str:
    note = dig(src.result("search_strength.json"), "note")
    return note if isinstance(note, str) else ""
