"""The Elo estimator on synthetic results with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from knights.lab.arena.elo import Z95, K, Table, elo_difference, expected_score, fit_ratings, simulate_games


def games_with_score(a: str, b: str, wins: int, draws: int, losses: int) -> list[tuple[str, str, float]]:
    return [(a, b, 1.0)] * wins + [(a, b, 0.5)] * draws + [(a, b, 0.0)] * losses


def test_expected_score_and_difference_are_inverse():
    assert expected_score(1500, 1500) == pytest.approx(0.5)
    assert expected_score(1900, 1500) == pytest.approx(10 / 11)
    for s in (0.1, 0.3, 0.5, 0.75, 0.99):
        assert expected_score(1350 + elo_difference(s), 1350) == pytest.approx(s)
    assert elo_difference(1.0) == math.inf and elo_difference(0.0) == -math.inf


@pytest.mark.parametrize("wins,draws,losses", [(30, 0, 10), (5, 10, 25), (1, 0, 1), (17, 6, 17)])
def test_two_player_analytic(wins, draws, losses):
    """Score s against an anchor at R gives R + 400 log10(s / (1 - s)), se = 1 / (K sqrt(n p q))."""
    n = wins + draws + losses
    s = (wins + 0.5 * draws) / n
    r = fit_ratings(games_with_score("x", "sf", wins, draws, losses), {"sf": 1350.0}, prior_draws=0)
    assert r["x"].rating == pytest.approx(1350 + 400 * math.log10(s / (1 - s)), abs=1e-6)
    se = 1 / (K * math.sqrt(n * s * (1 - s)))
    assert r["x"].se == pytest.approx(se, rel=1e-6)
    assert r["x"].low == pytest.approx(r["x"].rating - Z95 * se, rel=1e-9)
    assert r["x"].games == n and r["x"].score == pytest.approx(wins + 0.5 * draws)
    assert r["sf"].rating == 1350 and r["sf"].anchor and r["sf"].se == 0


def test_prior_is_one_virtual_draw_per_pairing():
    r = fit_ratings(games_with_score("x", "sf", 30, 0, 10), {"sf": 1350.0}, prior_draws=1.0)
    assert r["x"].rating == pytest.approx(1350 + elo_difference(30.5 / 41), abs=1e-6)


def test_perfect_scores_stay_finite_and_ordered():
    games = games_with_score("x", "sf", 40, 0, 0) + games_with_score("y", "sf", 0, 0, 40)
    r = fit_ratings(games, {"sf": 1500.0})
    assert math.isfinite(r["x"].rating) and math.isfinite(r["y"].rating)
    assert r["x"].rating == pytest.approx(1500 + elo_difference(40.5 / 41), abs=1e-6)
    assert r["y"].rating == pytest.approx(1500 - elo_difference(40.5 / 41), abs=1e-6)
    assert r["x"].low > 1500 > r["y"].high
    with pytest.raises(ValueError, match="unbounded"):
        fit_ratings(games, {"sf": 1500.0}, prior_draws=0)


def test_chain_recovers_known_ratings_within_intervals():
    """Weak rungs that never met an anchor are rated through their neighbours."""
    true = {"random": 400.0, "greedy": 750.0, "ab2": 1000.0, "ab3": 1200.0,
            "sf1350": 1350.0, "sf1500": 1500.0, "sf1800": 1800.0}
    anchors = {p: true[p] for p in ("sf1350", "sf1500", "sf1800")}
    pairings = [("random", "greedy", 300), ("greedy", "ab2", 300), ("ab2", "ab3", 300),
                ("ab3", "sf1350", 300), ("ab3", "sf1500", 300), ("ab2", "sf1350", 200), ("ab3", "sf1800", 200)]
    games = simulate_games(true, pairings, seed=11)
    r = fit_ratings(games, anchors)
    for p, value in true.items():
        if p in anchors:
            assert r[p].rating == value and r[p].anchor
            continue
        assert r[p].low <= value <= r[p].high, (p, value, r[p])
        assert r[p].high - r[p].low < 200  # informative: a few hundred games per pairing
    # intervals widen down the chain, away from the anchors
    assert r["random"].se > r["ab2"].se > r["ab3"].se


def test_interval_coverage_is_about_95_percent():
    rng = np.random.default_rng(5)
    hits, trials = 0, 300
    for t in range(trials):
        truth = float(rng.uniform(1000, 1700))
        games = simulate_games({"x": truth, "a": 1350.0}, [("x", "a", 60)], seed=1000 + t, draw_rate=0.0)
        r = fit_ratings(games, {"a": 1350.0}, prior_draws=0.0 if 0 < sum(g[2] for g in games) < 60 else 1.0)
        hits += r["x"].low <= truth <= r["x"].high
    assert 0.90 <= hits / trials <= 0.99


def test_tables_agree_and_group_without_anchor_is_relative():
    games = games_with_score("a", "b", 6, 2, 2) + games_with_score("c", "sf", 3, 0, 1)
    t1 = Table.from_games(games)
    t2 = Table.from_counts([("a", "b", 10, 7.0), ("c", "sf", 4, 3.0)])
    r1, r2 = fit_ratings(t1, {"sf": 1400}), fit_ratings(t2, {"sf": 1400})
    for p in ("a", "b", "c"):
        assert r1[p].rating == pytest.approx(r2[p].rating)
    assert r1["a"].relative and r1["b"].relative and not r1["c"].relative
    assert {r1["a"].rating, r1["b"].rating} >= {0.0}  # the busier of a, b is pinned at 0
    assert r1["a"].rating - r1["b"].rating == pytest.approx(elo_difference(7.5 / 11), abs=1e-6)


def test_anchor_without_games_is_reported_and_bad_scores_rejected():
    r = fit_ratings(games_with_score("x", "sf", 2, 0, 2), {"sf": 1350, "sf2000": 2000})
    assert r["sf2000"].rating == 2000 and r["sf2000"].games == 0
    with pytest.raises(ValueError):
        Table.from_games([("x", "y", 1.5)])
    with pytest.raises(ValueError):
        Table.from_games([("x", "x", 1.0)])
