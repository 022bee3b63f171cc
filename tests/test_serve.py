"""errbook serve: a taken port is refused at once with a --port hint; SIGTERM stops mkdocs serve with it."""
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import errbook
from errbook.common import ports


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child_pid(p: subprocess.Popen) -> int:
    """The pid errbook serve announces for its mkdocs serve (its first line, unless MkDocs spoke first)."""
    for _ in range(50):
        m = re.search(r"mkdocs serve is process (\d+)", p.stderr.readline())
        if m:
            return int(m.group(1))
    raise AssertionError("errbook serve did not say which process serves")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:      # a zombie (exited, not yet reaped by anyone) is not serving
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def test_busy_port_is_refused_before_the_build(mini_root):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        t0 = time.monotonic()
        r = errbook("serve", "--port", str(port), root=mini_root, timeout=60)
        took = time.monotonic() - t0
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"port {port}" in err and "--port" in err
    assert took < 10, f"{took:.1f}s: the port must be checked before the site is built"


def test_port_check_tells_taken_from_free():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert "in use" in (ports.port_taken("127.0.0.1", port) or "")
        alt = ports.free_port_near("127.0.0.1", port)
        assert alt is not None and alt != port and ports.port_taken("127.0.0.1", alt) is None


@pytest.mark.slow
def test_a_draft_is_served_and_sigterm_stops_mkdocs_serve_too(site_root):
    """Right after errbook new, serve shows the draft with its banner; SIGTERM then ends both processes."""
    assert errbook("new", "runtime", r"C:\ROCm\bin\hipcc.exe fails", root=site_root).returncode == 0
    port = _free_port()
    p = subprocess.Popen([sys.executable, "-m", "errbook.cli", "--root", str(site_root), "serve", "--port", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        child = _child_pid(p)
        deadline = time.monotonic() + 240
        while ports.port_taken("127.0.0.1", port) is None:      # the site is built and served
            assert p.poll() is None and time.monotonic() < deadline, p.stderr.read()
            time.sleep(0.5)
        page = ""
        while "</html>" not in page and time.monotonic() < deadline:      # bound, then serving once built
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/entries/RMN-0002/", timeout=60) as r:
                    page = r.read().decode()
            except OSError:
                time.sleep(0.5)
        assert 'class="admonition warning"' in page and "Draft" in page and "hipcc.exe fails" in page
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=15)
        gone = time.monotonic() + 5
        while _alive(child) and time.monotonic() < gone:
            time.sleep(0.1)
        assert not _alive(child), "mkdocs serve outlived errbook serve"
        assert ports.port_taken("127.0.0.1", port) is None
        assert rc == 0
        assert "Traceback" not in p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()


def test_mkdocs_serve_dies_with_errbook_serve_even_on_sigkill(mini_root):
    """SIGKILL cannot be forwarded: the child asked Linux to end it with its parent (PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    p = subprocess.Popen([sys.executable, "-m", "errbook.cli", "--root", str(mini_root), "serve", "--port",
                          str(_free_port())], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        child = _child_pid(p)
        assert _alive(child)
        p.kill()
        p.wait(timeout=10)
        gone = time.monotonic() + 10
        while _alive(child) and time.monotonic() < gone:
            time.sleep(0.1)
        assert not _alive(child), "mkdocs serve outlived a killed errbook serve"
    finally:
        if p.poll() is None:
            p.kill()


def test_a_port_taken_during_the_build_ends_with_one_line(tmp_path, capsys):
    """errbook serve checked the port before the build; the plugin checks again just before MkDocs binds."""
    from mkdocs.livereload import LiveReloadServer

    from errbook.web.plugin import ErrbookPlugin
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=port, root=str(tmp_path))
        plugin = ErrbookPlugin()
        plugin.root = tmp_path
        try:
            with pytest.raises(SystemExit) as ended:
                plugin.on_serve(server, config=None, builder=None)
        finally:
            server.server_close()
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert f"port {port} on 127.0.0.1 is already in use; try errbook serve --port" in err
