"""Play the bot in a browser: a local web page and the JSON API behind it.

``knights serve`` (or ``make web``) starts :func:`knights.frontends.web.server.serve` on
127.0.0.1. The modules, each small:

- :mod:`knights.frontends.web.engines`: the one place a bot is built from the page's settings
  (evaluator, stochastic opening, seed, search depth, movetime);
- :mod:`knights.frontends.web.games`: one game (board, settings, what the bot saw) and the
  store that keeps several apart, one id each;
- :mod:`knights.frontends.web.storage`: the games in one SQLite file, written on every move and
  pruned (at most 256 games, none idle over 30 days), so a restart loses none;
- :mod:`knights.frontends.web.app`: the Flask app, its JSON API and the static files;
- :mod:`knights.frontends.web.server`: the ``knights serve`` command.

The page itself is hand-written glue in ``static/`` over the board library
cm-chessboard, installed from npm into ``frontend/node_modules`` (``npm ci``).
"""
