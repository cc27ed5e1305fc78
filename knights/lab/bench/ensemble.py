"""Benchmarks of the shipped democracy ensemble, beside its network alone.

``ensemble_load``      loading the shipped ensemble (:func:`knights.evaluate.democracy.load_shipped`:
                       every learner's files checked and rebuilt, the network's weights
                       loaded). Target: under 3 s, i.e. a rate >= 0.33 loads/s. The
                       baseline is loading the network member alone; the time of a fresh
                       process (imports included) is in the details.
``ensemble_decision``  one move decision: the ~35 positions after every legal move of a
                       position, evaluated in one batch on **one core** (BLAS and torch
                       held to one thread). Target: under 25 ms, i.e. >= 40 decisions/s.
                       The baseline is the network alone on the same batches.

Without a shipped ensemble (``ensemble/models/democracy.json``) the quick run builds
one on the committed sample in a temporary folder (with a one-epoch network when no
EL network is trained); the full run reports SKIP with the command that ships one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from knights.lab.bench import core as bench
from knights.lab.bench.core import benchmark, make_result, make_skip
from knights.lab.results.timing import timed

LOAD_TARGET_S = 3.0
DECISION_TARGET_MS = 25.0
SHIP_HINT = "no shipped ensemble: run `knights ensemble` (or `knights bench ensemble_load --quick`)"


def _context(quick: bool) -> dict:
    """The ensemble folder to measure, its network member(s) and decision batches (memoised per run)."""
    key = ("ensemble", quick)
    if key in bench.MEMO:
        return bench.MEMO[key]  # type: ignore[return-value]
    from knights.data.cache import ChunkCache, load_encoded
    from knights.data.chunks import select_chunks
    from knights.evaluate import democracy
    from knights.lab.results.timing import decision_batches
    from knights.learn import registry
    from knights.learn.experiment import SAMPLE_DATA

    ctx: dict = {}
    if democracy.is_shipped():
        ctx["folder"] = democracy.MODELS_DIR
        ctx["source"] = "shipped"
    elif quick:
        from knights.evaluate.names import DEFAULT_NETWORK
        from knights.lab.ensemble.plan import quick_plan
        from knights.lab.ensemble.train import train_all

        work = bench.workdir() / "ensemble"
        trained = registry.get(DEFAULT_NETWORK).is_trained()
        result = train_all(quick_plan(), networks=[DEFAULT_NETWORK] if trained else [],
                           quick_network=None if trained else DEFAULT_NETWORK, out_dir=work / "models",
                           results_md=work / "RESULTS.md", results_json=work / "ensemble.json", progress=False)
        ctx["folder"] = result.out_dir
        ctx["source"] = "quick ensemble built on the sample (not shipped)"
    else:
        ctx["skip"] = SHIP_HINT
        bench.MEMO[key] = ctx
        return ctx
    doc = democracy.read_manifest(ctx["folder"])
    used = [m for m in doc["members"] if democracy.counts(m)]
    ctx["networks"] = [(m["version"], m.get("models_dir")) for m in used if m["kind"] == "network"]
    ctx["members"] = {m["name"]: m["weight"] for m in used}
    block = load_encoded(select_chunks(registry.REPO_ROOT / SAMPLE_DATA, "k"), ChunkCache())
    ctx["batches"] = decision_batches(block, count=8 if quick else 20, seed=1)
    bench.MEMO[key] = ctx
    return ctx


def _load_network(ctx: dict):
    from knights.lab.ensemble.members import network_member

    return [network_member(v, d) for v, d in ctx["networks"]]


def _cold_load_seconds(folder: Path | None = None, network: tuple | None = None) -> float | None:
    """Load time in a fresh Python process, imports included: the ensemble in ``folder``,
    or the ``(version, models_dir)`` network alone."""
    if network is not None:
        load = ("from knights.lab.ensemble.members import network_member; "
                f"network_member({network[0]!r}, {network[1]!r})")
    else:
        load = f"from knights.evaluate.democracy import load_shipped; load_shipped({str(folder)!r})"
    code = f"import time; t = time.perf_counter(); {load}; print(time.perf_counter() - t)"
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
        return float(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError):
        return None


@benchmark("ensemble_load")
def bench_ensemble_load(quick: bool) -> list[dict]:
    from knights.evaluate.democracy import load_shipped

    ctx = _context(quick)
    if "skip" in ctx:
        return [make_skip("ensemble_load", ctx["skip"], target=1 / LOAD_TARGET_S, metric="rate", unit="loads/s")]
    repeats = 3 if quick else 5
    ens_s, _ens = timed(lambda: load_shipped(ctx["folder"]), repeats)
    net_s = timed(lambda: _load_network(ctx), repeats)[0] if ctx["networks"] else None
    cold = _cold_load_seconds(ctx["folder"])
    cold_net = _cold_load_seconds(network=ctx["networks"][0]) if ctx["networks"] else None
    return [make_result("ensemble_load", 1.0 / ens_s, 1.0 / net_s if net_s else None, target=1 / LOAD_TARGET_S,
                        metric="rate", unit="loads/s",
                        baseline=("loading the network alone (" + ", ".join(v for v, _ in ctx["networks"]) + ")")
                        if net_s else "no network member",
                        details={"seconds": round(ens_s, 4),
                                 "network_seconds": None if net_s is None else round(net_s, 4),
                                 "fresh_process_seconds": None if cold is None else round(cold, 3),
                                 "network_fresh_process_seconds": None if cold_net is None else round(cold_net, 3),
                                 "members": ctx["members"], "ensemble": ctx["source"],
                                 "target_seconds": LOAD_TARGET_S})]


@benchmark("ensemble_decision")
def bench_ensemble_decision(quick: bool) -> list[dict]:
    import numpy as np

    from knights.evaluate.democracy import load_shipped
    from knights.lab.results.timing import ms_per_decision

    ctx = _context(quick)
    if "skip" in ctx:
        return [make_skip("ensemble_decision", ctx["skip"], target=1000 / DECISION_TARGET_MS, metric="rate",
                          unit="decisions/s")]
    batches = ctx["batches"]
    repeats = 3 if quick else 7
    ens = load_shipped(ctx["folder"])
    ens_ms = ms_per_decision(ens.evaluate, batches, repeats)
    nets = _load_network(ctx)
    net_ms = ms_per_decision(nets[0].evaluate, batches, repeats) if nets else None
    sizes = [len(b) for b in batches]
    return [make_result("ensemble_decision", 1000.0 / ens_ms, 1000.0 / net_ms if net_ms else None,
                        target=1000 / DECISION_TARGET_MS, metric="rate", unit="decisions/s",
                        baseline=f"the network alone ({nets[0].name}), same batches, one core" if nets
                        else "no network member",
                        details={"ms_per_decision": round(ens_ms, 3),
                                 "network_ms_per_decision": None if net_ms is None else round(net_ms, 3),
                                 "positions_per_decision": float(np.mean(sizes)), "decisions": len(batches),
                                 "threads": 1, "members": ctx["members"], "ensemble": ctx["source"],
                                 "target_ms": DECISION_TARGET_MS})]
