"""A bot by name: one dataclass, one parser.

Every way a user names a bot (``knights play --evaluator``, the UCI options, the web page's form,
lichess-bot's ``engine`` options, an arena player) parses here, once, into a :class:`BotSpec`;
:func:`knights.engine.build.build` turns a spec into an engine. The grammar::

    bot        := evaluator                                                   depth and time from the options
                | "ours" [":" evaluator] [":det" | ":stoch"]                  the one-ply bot
                | "search" [DEPTH] ":" [evaluator] [":det" | ":stoch"] ["@" MS]   the search, DEPTH plies or MS a move
                | "ab" N                                                      the search over material, N plies
    evaluator  := "default" | "" | base [variant] | network "+quiesce" | "sparse+quiesce"
                                                                  (the evaluator grammar: knights.evaluate.names)

Parsing is syntax only: no file is read and neither torch nor numba is imported, so ``knights uci``
answers ``uci`` at once. What the default is, and whether a name's files are here, is the builder's
question (:func:`knights.engine.build.resolve`).

>>> parse("ours:el/8:det")
BotSpec(evaluator='EL/v8', depth=1, movetime=None, stochastic=False, seed=None, capture_bonus=0.0)
>>> parse("search:material@250").movetime, parse("search3:default").depth, parse("ab2").evaluator
(0.25, 3, 'material')
>>> parse("Material+THREATS", depth=1).text()
'ours:material+threats'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from knights.engine.constants import UNLIMITED_DEPTH
from knights.evaluate.names import EvaluatorError, canonical_evaluator_name, is_default

ONE_PLY_EVALUATOR = "sparse+quiesce"
"""What the one-ply bot plays unless told otherwise: the democracy of :data:`SPARSE_DEMOCRACY`, each network
judged where the captures end (:mod:`knights.engine.judged`). Its choice is in report/results (one_ply_*.json)."""
SEARCH_NETWORK = "EL/v25"
"""What the search plays unless told otherwise: a compiled sparse network, evaluated incrementally
(report/results/search_strength.json, ``network_ab*``: chosen in self-play at the time a move the bot plays)."""
SPARSE_DEMOCRACY = ("EL/v19", "EL/v20", "EL/v21", "EL/v22", "EL/v23", "EL/v24")
"""The members of ``sparse+quiesce``, equal weights."""
PLAY_MOVETIME = 1.0
"""Seconds a move of a bot that has no clock (the terminal, the web page) unless told otherwise."""
SEARCH_DEPTH = 3
"""The depth of a ``search:`` bot given neither a depth nor a time (an arena match without a movetime)."""
_SEARCH = re.compile(r"search(\d*):")
_AB = re.compile(r"ab([1-9])")


class SpecError(EvaluatorError):
    """A bot name that does not parse: one line saying why."""


@dataclass(frozen=True)
class BotSpec:
    """What makes a bot: the evaluator that judges positions and how far it looks.

    ``evaluator``: a canonical evaluator name (:func:`knights.evaluate.names.canonical_evaluator_name`), ``None``
    for the default at this depth; ``depth``: plies, 1 for the paper's one-ply bot; ``movetime``: seconds a move
    (``None``: the front end's clock decides, or the depth alone); ``stochastic``: the original's random pick among
    the best moves in the opening; ``seed``: of that randomness (``None``: fresh); ``capture_bonus``: pawns added to
    a capture's value for the side to move (the original's 0.15; 0 by default)."""

    evaluator: str | None = None
    depth: int = UNLIMITED_DEPTH
    movetime: float | None = None
    stochastic: bool = True
    seed: int | None = None
    capture_bonus: float = 0.0

    def __post_init__(self) -> None:
        if not 1 <= self.depth <= UNLIMITED_DEPTH:
            raise SpecError(f"a depth is from 1 (the one-ply bot) to {UNLIMITED_DEPTH}, not {self.depth}")
        if self.movetime is not None and not self.movetime > 0:
            raise SpecError(f"a time a move is more than 0 seconds, not {self.movetime}")
        if not 0 <= self.capture_bonus <= 1:
            raise SpecError(f"the capture bonus is from 0 to 1 pawn, not {self.capture_bonus}")

    @property
    def one_ply(self) -> bool:
        """Whether this is the one-ply bot (it judges each move's position and looks no further)."""
        return self.depth <= 1

    def with_options(self, **changes: object) -> BotSpec:
        """The same spec with some fields changed (``None`` values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})   # type: ignore[arg-type]

    def text(self) -> str:
        """The spec in the arena's spelling, which :func:`parse` reads back to this spec (the seed and the capture
        bonus aside): ``ours:EL/v8:det``, ``search:EL/v24@100``, ``search3:material``."""
        evaluator = self.evaluator or "default"
        det = "" if self.stochastic else ":det"
        if self.one_ply:
            return f"ours:{evaluator}{det}"
        if self.movetime is not None:
            return f"search:{evaluator}{det}@{round(self.movetime * 1000)}"
        depth = "" if self.depth == UNLIMITED_DEPTH else str(self.depth)
        return f"search{depth}:{evaluator}{det}"


def parse_evaluator(text: str | None) -> str | None:
    """The canonical evaluator name ``text`` spells, ``None`` for the default (:class:`SpecError` if none)."""
    if is_default(text):
        return None
    assert text is not None
    return canonical_evaluator_name(text)


def _flags(rest: str) -> tuple[str, bool]:
    """``EL/v8:det`` -> ``("EL/v8", False)``: the evaluator and the opening's randomness."""
    stochastic = True
    for suffix, value in ((":det", False), (":stoch", True)):
        if rest.endswith(suffix) or rest == suffix[1:]:
            rest, stochastic = rest[: -len(suffix)] if rest.endswith(suffix) else "", value
    return rest, stochastic


def parse(text: str | None, *, depth: int | None = None, movetime: float | None = None,
          stochastic: bool | None = None, seed: int | None = None, capture_bonus: float | None = None) -> BotSpec:
    """The :class:`BotSpec` that ``text`` names. A plain evaluator name (or ``None``: the default) takes its
    depth and time from the keywords (default: search as deep as the clock allows); the arena's forms
    (``ours:``, ``search:``, ``ab<N>``) carry their own, which the keywords do not override. The keywords
    ``stochastic``, ``seed`` and ``capture_bonus`` apply to every form."""
    options = {"stochastic": stochastic, "seed": seed, "capture_bonus": capture_bonus}
    word = (text or "").strip()
    if word == "ours" or word.startswith("ours:"):
        evaluator, random_opening = _flags(word[len("ours:"):] if word != "ours" else "")
        spec = BotSpec(parse_evaluator(evaluator), depth=1, stochastic=random_opening)
        return spec.with_options(**options)
    found = _SEARCH.match(word)
    if found:
        rest, at, ms = word[found.end():].partition("@")
        evaluator, random_opening = _flags(rest)
        if found.group(1) and at:
            raise SpecError(f"{word!r}: a search has a fixed depth (search3:...) or a time (...@1000), not both")
        if at and not re.fullmatch(r"[1-9]\d*", ms):
            raise SpecError(f"{word!r}: '@' is followed by the milliseconds a move, e.g. search:EL/v24@1000")
        plies = int(found.group(1)) if found.group(1) else (UNLIMITED_DEPTH if at else SEARCH_DEPTH)
        if not 1 <= plies <= UNLIMITED_DEPTH:
            raise SpecError(f"{word!r}: a search depth is from 1 to {UNLIMITED_DEPTH}")
        spec = BotSpec(parse_evaluator(evaluator), depth=plies, movetime=int(ms) / 1000 if at else None,
                       stochastic=random_opening)
        return spec.with_options(**options)
    ab = _AB.fullmatch(word)
    if ab:
        return BotSpec("material", depth=int(ab.group(1))).with_options(**options)
    spec = BotSpec(parse_evaluator(word), depth=UNLIMITED_DEPTH if depth is None else depth, movetime=movetime)
    return spec.with_options(**options)


def is_bot(text: str) -> bool:
    """Whether ``text`` is in one of the forms that name our bot in a match (``ours``, ``search``, ``ab<N>``)."""
    word = text.strip()
    return word == "ours" or word.startswith("ours:") or bool(_SEARCH.match(word)) or bool(_AB.fullmatch(word))


def network_of(player: str) -> str:
    """The evaluator a searching player's spec names, read by :func:`parse`: ``search:EL/v16@100`` (or
    ``search:EL/v16:det@100``) -> ``EL/v16``; ``search:default@100`` (or no spec) -> :data:`SEARCH_NETWORK`.
    The results files and the report name a run's network by it."""
    return parse(player).evaluator or SEARCH_NETWORK
