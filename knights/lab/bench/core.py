"""Benchmarks: our pipeline against a baseline, run in the same process on the same data.

Speed targets in this project are **ratios** (ours / baseline) measured in one run,
so that a slow or busy machine slows both sides alike; absolute rates are reported
for information. ``knights bench [NAME ...] [--quick]`` runs the registered
benchmarks (all by default), prints one table row per result and merges the results
into ``report/results/bench.json`` (``$KNIGHTS_RESULTS_DIR`` overrides the folder).

Adding a benchmark
------------------
Register a function ``fn(quick: bool) -> list[dict]`` with :func:`benchmark` and build
each result with :func:`make_result` (or :func:`make_skip`)::

    from knights.lab.bench.core import benchmark, make_result

    @benchmark("train")
    def bench_train(quick: bool) -> list[dict]:
        ...
        return [make_result("train", ours_rate, baseline_rate, target=3.0,
                            baseline="row-by-row loader + same model")]

``knights bench`` finds such functions by importing, before it runs, every module
of the ``knights.lab.bench`` package (one file per subject: ``data``, ``training``, ``engine``,
``ensemble``), plus the modules listed, comma-separated, in ``$KNIGHTS_BENCH_MODULES``.

A run's benchmarks share a scratch folder (:func:`workdir`) and a memo of what they
measured or built (``MEMO``); both are gone when the run ends.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
import math
import os
import platform
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from knights.common import write_json

BenchFn = Callable[[bool], list[dict]]

BENCHMARKS: dict[str, BenchFn] = {}
"""Registered benchmarks, name -> ``fn(quick) -> list of result dicts``, in registration order."""

DEFAULT_RESULTS_DIR = Path("report/results")
RESULTS_FILE = "bench.json"
PLUGIN_ENV = "KNIGHTS_BENCH_MODULES"
RESULTS_ENV = "KNIGHTS_RESULTS_DIR"


# -- registry ------------------------------------------------------------------------
def benchmark(name: str) -> Callable[[BenchFn], BenchFn]:
    """Decorator: register ``fn(quick: bool) -> list[dict]`` under ``name``.

    Registering a different function under a taken name is an error (re-importing
    the same module replaces its own entry).
    """
    if not name or not isinstance(name, str) or any(c.isspace() for c in name):
        raise ValueError(f"bad benchmark name {name!r}: use a non-empty word")

    def register(fn: BenchFn) -> BenchFn:
        old = BENCHMARKS.get(name)
        if old is not None and (old.__module__, old.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ValueError(f"benchmark {name!r} is already registered by "
                             f"{old.__module__}.{old.__qualname__}")
        BENCHMARKS[name] = fn
        return fn

    return register


_PLUGIN_ERRORS: dict[str, str] = {}


def load_plugins() -> dict[str, str]:
    """Import the modules that register more benchmarks (see the module docstring).

    Returns ``{module: error}`` for those that failed to import; they are reported,
    and the benchmarks that did load still run.
    """
    root = Path(__file__).resolve().parent     # every module of knights/lab/bench/ registers benchmarks
    names = [f"{__package__}.{path.stem}" for path in sorted(root.glob("*.py"))
             if path.stem not in ("__init__", "core")]
    names += [m.strip() for m in os.environ.get(PLUGIN_ENV, "").split(",") if m.strip()]
    for module in names:
        if module == __name__ or module in _PLUGIN_ERRORS:
            continue
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not hide the others
            _PLUGIN_ERRORS[module] = f"{type(exc).__name__}: {exc}"
    return dict(_PLUGIN_ERRORS)


def select(names: Sequence[str]) -> list[str]:
    """The benchmarks to run: ``names`` in the given order, or all when empty.
    An unknown name is a ``ValueError`` listing the known ones."""
    if not names:
        return list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        msg = (f"unknown benchmark{'s' if len(unknown) > 1 else ''} "
               f"{', '.join(repr(n) for n in unknown)}; available: {', '.join(BENCHMARKS) or '(none)'}")
        if _PLUGIN_ERRORS:
            msg += "; modules that failed to load: " + "; ".join(f"{m} ({e})" for m, e in _PLUGIN_ERRORS.items())
        raise ValueError(msg)
    return list(dict.fromkeys(names))


# -- results ---------------------------------------------------------------------------
def make_result(name: str, rate: float, baseline_rate: float | None, *, target: float,
                metric: str = "ratio", unit: str = "rows/s", baseline: str = "",
                details: dict | None = None) -> dict:
    """One benchmark result. ``metric`` says what ``target`` bounds from below:
    ``"ratio"`` (ours / baseline, the default) or ``"rate"`` (ours, in ``unit``)."""
    if metric not in ("ratio", "rate"):
        raise ValueError(f"metric must be 'ratio' or 'rate', not {metric!r}")
    ratio = rate / baseline_rate if baseline_rate else None
    value = ratio if metric == "ratio" else rate
    passed = value is not None and math.isfinite(value) and value >= target
    return {
        "name": name, "status": "PASS" if passed else "MISS", "unit": unit,
        "rate": float(rate), "baseline_rate": None if baseline_rate is None else float(baseline_rate),
        "ratio": None if ratio is None else float(ratio), "metric": metric, "target": float(target),
        "passed": bool(passed), "baseline": baseline, "details": details or {},
    }


def make_skip(name: str, reason: str, *, target: float | None = None, metric: str = "ratio",
              unit: str = "rows/s") -> dict:
    """A result for a benchmark that could not run here (``reason`` says why and how to fix it)."""
    return {"name": name, "status": "SKIP", "unit": unit, "rate": None, "baseline_rate": None,
            "ratio": None, "metric": metric, "target": target, "passed": None, "baseline": "",
            "details": {"reason": reason}}


def _num(x: float | None, unit: str = "") -> str:
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}{unit}"
    return f"{x:,.2f}{unit}"


HEADER = f"{'benchmark':<12} {'ours':>14} {'baseline':>14} {'ratio':>9} {'target':>16}  result"


def format_row(r: dict) -> str:
    """The table row of one result."""
    if r.get("target") is None:
        target = "-"
    elif r["metric"] == "ratio":
        target = f">= {r['target']:g}x"
    else:
        target = f">= {_num(r['target'])}/s"
    ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.2f}x"
    row = (f"{r['name']:<12} {_num(r.get('rate')):>14} {_num(r.get('baseline_rate')):>14} "
           f"{ratio:>9} {target:>16}  {r['status']}")
    if r["status"] == "SKIP":
        row += f" ({r['details'].get('reason', '')})"
    return row


def machine_info() -> dict:
    info: dict[str, object] = {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    if hasattr(os, "sched_getaffinity"):
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    if hasattr(os, "getloadavg"):
        info["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    try:
        import torch
        info["torch"] = torch.__version__
    except Exception:  # noqa: BLE001 - torch is optional: any failure to load it means none
        info["torch"] = None
    return info


def results_dir(path: str | Path | None = None) -> Path:
    return Path(path or os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS_DIR)


def write_results(results: Sequence[dict], directory: str | Path | None = None, *,
                  quick: bool = False, machine: dict | None = None) -> Path:
    """Merge ``results`` by name into ``<directory>/bench.json`` (other entries are kept).

    A skipped result does not replace a measured one of the same name: a machine without a
    GPU, say, keeps the figures another machine measured (each entry names its machine)."""
    path = results_dir(directory) / RESULTS_FILE
    machine = machine or machine_info()
    doc: dict = {"benchmarks": {}}
    if path.exists():
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not valid JSON ({exc}); move it away to start afresh") from exc
        if not isinstance(doc.get("benchmarks"), dict):
            raise ValueError(f"{path} has no 'benchmarks' object; move it away to start afresh")
    for r in results:
        kept = doc["benchmarks"].get(r["name"])
        if r["status"] == "SKIP" and kept is not None and kept.get("status") != "SKIP":
            continue
        doc["benchmarks"][r["name"]] = {**r, "quick": quick, "machine": machine}
    doc["machine"] = machine
    doc["updated"] = machine["date"]
    write_json(path, doc)
    return path


def run_benchmarks(names: Sequence[str] = (), *, quick: bool = False,
                   results_directory: str | Path | None = None,
                   out: Callable[[str], None] = print) -> list[dict]:
    """Run the selected benchmarks, print the table, write the JSON; return the results."""
    load_plugins()
    chosen = select(names)
    for module, error in _PLUGIN_ERRORS.items():
        out(f"warning: benchmark module {module} failed to load: {error}")
    machine = machine_info()
    out(f"{'quick' if quick else 'full'} run on {machine['cpu_count']} CPUs, {machine['platform']}, "
        f"python {machine['python']}, torch {machine['torch']}, load {machine.get('loadavg', '?')}")
    out(HEADER)
    results: list[dict] = []
    try:
        for name in chosen:
            t0 = time.perf_counter()
            got = BENCHMARKS[name](quick)
            elapsed = time.perf_counter() - t0
            for r in got:
                r.setdefault("details", {})["bench_seconds"] = round(elapsed, 2)
                out(format_row(r))
            results.extend(got)
    finally:
        _cleanup()
    path = write_results(results, results_directory, quick=quick, machine=machine)
    out(f"results: {path}")
    return results


def main(args: argparse.Namespace) -> int:
    """Entry point of ``knights bench`` (``args.which``, ``args.quick``, optional
    ``args.results_dir``)."""
    run_benchmarks(list(getattr(args, "which", []) or []), quick=bool(getattr(args, "quick", False)),
                   results_directory=getattr(args, "results_dir", None))
    return 0


# -- scratch space for one run ------------------------------------------------------------
_WORKSPACE: tempfile.TemporaryDirectory | None = None
MEMO: dict[tuple, object] = {}
"""What the run's benchmarks built or measured once and share (bench data, baselines)."""


def workdir() -> Path:
    """The run's scratch folder (made on first use, removed by :func:`_cleanup`)."""
    global _WORKSPACE  # noqa: PLW0603 - one scratch folder per run
    if _WORKSPACE is None:
        _WORKSPACE = tempfile.TemporaryDirectory(prefix="knights-bench-")
    return Path(_WORKSPACE.name)


def _cleanup() -> None:
    """Remove the temporary bench data (and forget the memoised measurements on it)."""
    global _WORKSPACE  # noqa: PLW0603 - one scratch folder per run
    MEMO.clear()
    if _WORKSPACE is not None:
        _WORKSPACE.cleanup()
        _WORKSPACE = None
