"""Whether a TCP port can be listened on, checked the way MkDocs' development server binds: `errbook serve`
asks before its build (15-20 s) and the site plugin again just before MkDocs binds, so a taken port ends with
one line naming a free one instead of a traceback."""
from __future__ import annotations

import errno
import socket


def port_taken(host: str, port: int) -> str | None:
    """Why (host, port) cannot be listened on now, or None. Binds the way MkDocs' server does (SO_REUSEADDR),
    so a port held only by closed connections in TIME_WAIT counts as free."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        return f"cannot resolve {host}: {e}"
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is already in use"
            return f"cannot listen on {host}:{port}: {e.strerror or e}"
    return None


def free_port_near(host: str, port: int, tries: int = 20) -> int | None:
    return next((p for p in range(port + 1, min(port + 1 + tries, 65536)) if port_taken(host, p) is None), None)


def busy(host: str, port: int) -> str | None:
    """None when (host, port) is free; else one line saying why not, with a free port to try instead."""
    problem = port_taken(host, port)
    if problem is None:
        return None
    alt = free_port_near(host, port)
    return problem + (f"; try errbook serve --port {alt}" if alt else "; choose another with --port N")
