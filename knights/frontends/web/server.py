"""``knights serve``: the web page on a local port (127.0.0.1:8000 unless told).

:func:`start` runs the app in a background thread and returns the running server
(the browser tests use it on a free port); :func:`serve` runs it until Ctrl-C. On a
loopback address the app answers only loopback host names; anything else is
served with a warning, since every machine that reaches it can then play. The games
are kept in a SQLite file (``--db``, default :data:`~knights.frontends.web.storage.DEFAULT_DB`),
so a restarted server goes on with them.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
import threading
import webbrowser
from pathlib import Path

from werkzeug.serving import BaseWSGIServer, make_server

from knights.frontends.web.storage import DEFAULT_DB, IDLE_DAYS, MAX_GAMES

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``knights serve`` options."""
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to listen on (default {DEFAULT_HOST}: this machine only)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--db", type=Path, default=DEFAULT_DB,
                        help=f"the SQLite file that keeps the games, so a restart loses none (default {DEFAULT_DB}, "
                             f"from the current directory; at most {MAX_GAMES} games, none idle over "
                             f"{IDLE_DAYS:g} days)")
    parser.add_argument("--open", action="store_true", help="also open the page in the default browser")


def is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def check_address(host: str, port: int) -> None:
    """Bind ``host:port`` once and let go, so that what is wrong is named: a host that is
    no address of this machine (``--host``) apart from a port that is taken (``--port``).
    A RuntimeError (one line) when it cannot be bound."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise RuntimeError(f"bad --host {host!r}: no such address ({exc}); "
                           f"{DEFAULT_HOST} serves this machine only") from None
    family, kind, proto, _, address = found[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise RuntimeError(f"cannot listen on {host}:{port}: the port is taken; choose another with "
                                   "--port") from None
            if exc.errno == errno.EADDRNOTAVAIL:
                raise RuntimeError(f"bad --host {host!r}: not an address of this machine ({exc.strerror}); "
                                   f"{DEFAULT_HOST} serves this machine only") from None
            raise RuntimeError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None


def build_server(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 db: str | Path = ":memory:") -> BaseWSGIServer:
    """The app behind a threaded WSGI server bound to ``host:port`` (not yet serving),
    its games kept in ``db`` (a SQLite file; ``":memory:"``: lost on exit). A RuntimeError
    (one line) when the board library is missing, the host is bad, the port taken or the
    database unusable."""
    from knights.frontends.web.app import board_library_missing, create_app
    from knights.frontends.web.games import GameStore

    missing = board_library_missing()
    if missing is not None:
        raise RuntimeError(missing)
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be 0-65535, not {port}")
    check_address(host, port)
    trusted = ["127.0.0.1", "localhost", "[::1]", "::1"] if is_loopback(host) else None
    if trusted is not None and host not in trusted:
        trusted.append(host)
    app = create_app(GameStore(db=db), trusted_hosts=trusted)
    try:
        return make_server(host, port, app, threaded=True)
    except (OSError, SystemExit) as exc:   # werkzeug exits when it cannot bind, after saying why
        why = exc.strerror if isinstance(exc, OSError) else "see the line above"
        raise RuntimeError(f"cannot listen on {host}:{port} ({why or exc})") from None


def url_of(server: BaseWSGIServer) -> str:
    host = server.host if ":" not in server.host else f"[{server.host}]"
    return f"http://{host}:{server.server_port}/"


def start(host: str = DEFAULT_HOST, port: int = 0,
          db: str | Path = ":memory:") -> tuple[BaseWSGIServer, threading.Thread]:
    """A server running in a daemon thread (``server.shutdown()`` stops it)."""
    server = build_server(host, port, db)
    thread = threading.Thread(target=server.serve_forever, name="knights-web", daemon=True)
    thread.start()
    return server, thread


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, db: str | Path = DEFAULT_DB,
          open_browser: bool = False) -> int:
    """Serve until interrupted; returns the exit code."""
    server = build_server(host, port, db)
    url = url_of(server)
    if not is_loopback(host):
        print(f"warning: listening on {host}: every machine that can reach this one can play here",
              file=sys.stderr)
    print(f"Knights and Kernels in the browser: open {url}  (Ctrl-C stops the server; games are kept "
          f"in {db})", flush=True)
    if open_browser:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0


def main(args: argparse.Namespace) -> int:
    """``knights serve``: the options come from :func:`add_arguments`."""
    return serve(args.host, args.port, db=args.db, open_browser=args.open)
