"""``knights serve``: the web page on a local port (127.0.0.1:8000 unless told).

:func:`start` runs the app in a background thread and returns the running server
(the browser tests use it on a free port); :func:`serve` runs it until Ctrl-C. On a
loopback address the app answers only loopback host names; anything else is
served with a warning, since every machine that reaches it can then play.
"""

from __future__ import annotations

import argparse
import sys
import threading
import webbrowser

from werkzeug.serving import BaseWSGIServer, make_server

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``knights serve`` options."""
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to listen on (default {DEFAULT_HOST}: this machine only)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--open", action="store_true", help="also open the page in the default browser")


def is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def build_server(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> BaseWSGIServer:
    """The app behind a threaded WSGI server bound to ``host:port`` (not yet serving).
    A RuntimeError (one line) when the board library is missing or the port is taken."""
    from knights.web.app import board_library_missing, create_app

    missing = board_library_missing()
    if missing is not None:
        raise RuntimeError(missing)
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be 0-65535, not {port}")
    trusted = ["127.0.0.1", "localhost", "[::1]", "::1"] if is_loopback(host) else None
    if trusted is not None and host not in trusted:
        trusted.append(host)
    try:
        return make_server(host, port, create_app(trusted_hosts=trusted), threaded=True)
    except (OSError, SystemExit) as exc:   # werkzeug exits on a taken port, after saying so
        why = exc.strerror if isinstance(exc, OSError) else "the port is taken"
        raise RuntimeError(f"cannot listen on {host}:{port} ({why or exc}); choose another with --port") from None


def url_of(server: BaseWSGIServer) -> str:
    host = server.host if ":" not in server.host else f"[{server.host}]"
    return f"http://{host}:{server.server_port}/"


def start(host: str = DEFAULT_HOST, port: int = 0) -> tuple[BaseWSGIServer, threading.Thread]:
    """A server running in a daemon thread (``server.shutdown()`` stops it)."""
    server = build_server(host, port)
    thread = threading.Thread(target=server.serve_forever, name="knights-web", daemon=True)
    thread.start()
    return server, thread


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, open_browser: bool = False) -> int:
    """Serve until interrupted; returns the exit code."""
    server = build_server(host, port)
    url = url_of(server)
    if not is_loopback(host):
        print(f"warning: listening on {host}: every machine that can reach this one can play here",
              file=sys.stderr)
    print(f"Knights and Kernels in the browser: open {url}  (Ctrl-C stops the server)", flush=True)
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
    return serve(args.host, args.port, open_browser=args.open)
