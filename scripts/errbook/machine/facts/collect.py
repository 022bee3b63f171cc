"""Collecting this machine's facts: every probe (probes.py), the slow ones in parallel with short timeouts, then
the derived facts, then the limits of the file format. Never all-or-nothing: a failing probe is recorded in
"probes" and costs only its own facts; a fact that could not be collected is simply missing (a check that needs
it is "could not check", never a finding).
"""
from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import os
import subprocess
import sys
import threading
import time

from errbook import __version__
from errbook.machine.facts.derive import derive, install_prefix, lexical_prefix
from errbook.machine.facts.fileformat import FORMAT, FORMAT_VERSION, MAX_SECONDS, fit
from errbook.machine.facts.probe import Options, Probe, ProbeSkipped, Sink
from errbook.machine.facts.probes import AMD_SMI, PROBES, SLOW_PROBES
from errbook.machine.facts.vocab import VOCAB

DEFAULT_TIMEOUT = 4.0            # seconds for the slowest probe (the Python probe imports torch)


class UndeclaredFact(AssertionError):
    """A probe put a fact it does not declare in its `produces`."""


class Collector(Sink):
    """The facts collected so far and the record of each probe; safe to share between the probes' threads."""

    def __init__(self):
        self.facts: dict[str, dict] = {}
        self.probes: list[dict] = []
        self._lock = threading.Lock()

    def put(self, name: str, value, source: str) -> None:
        assert name in VOCAB, name
        with self._lock:
            self.facts[name] = {"value": value, "source": source}

    def has(self, name: str) -> bool:
        return name in self.facts

    def get(self, name: str, default=None):
        f = self.facts.get(name)
        return default if f is None else f["value"]

    def probe(self, p: Probe, opts: Options) -> None:
        t0 = time.perf_counter()
        rec: dict = {"probe": p.name, "ok": True}
        try:
            p.run(_Declared(self, p), opts)
        except ProbeSkipped as e:
            rec.update(skipped=str(e))
        except subprocess.TimeoutExpired as e:
            rec.update(ok=False, error=f"timed out after {e.timeout:g} s")
        except Exception as e:  # one failing probe never stops the others
            rec.update(ok=False, error=f"{type(e).__name__}: {e}"[:300])
        rec["seconds"] = round(time.perf_counter() - t0, 3)
        with self._lock:
            self.probes.append(rec)


class _Declared(Sink):
    """The collector as one probe sees it: it may put only the facts the probe declares."""

    def __init__(self, collector: Collector, p: Probe):
        self._c, self._p = collector, p

    def put(self, name: str, value, source: str) -> None:
        if name not in self._p.produces:
            raise UndeclaredFact(f"probe {self._p.name} does not declare {name}")
        self._c.put(name, value, source)

    def has(self, name: str) -> bool:
        return self._c.has(name)

    def get(self, name: str, default=None):
        return self._c.get(name, default)


def local_prefix(path: str) -> str:
    """The install prefix of a library on this machine: its real folder (symlinks resolved) when it exists."""
    if os.path.exists(path):
        return install_prefix(os.path.dirname(os.path.realpath(path)))
    return lexical_prefix(path)


def collect(timeout: float = DEFAULT_TIMEOUT, python: str | None = None, do_import: bool = True) -> dict:
    """Collect every fact this machine offers and return the facts document (see fileformat.FORMAT)."""
    t0 = time.perf_counter()
    F = Collector()
    opts = Options(timeout=timeout, python=python or sys.executable, do_import=do_import)
    with cf.ThreadPoolExecutor(max_workers=len(SLOW_PROBES)) as pool:
        futs = [pool.submit(F.probe, p, opts) for p in SLOW_PROBES]
        for p in PROBES:
            F.probe(p, opts)
        cf.wait(futs)
    if not F.has("gpu.gfx") and (F.get("gpu.pci_amd_count") or 0) > 0:
        F.probe(AMD_SMI, opts)
    # Runtime views of the targets stand in for the hardware's only when no override can have changed them.
    if not F.has("gpu.gfx") and F.get("env.HSA_OVERRIDE_GFX_VERSION") is None:
        for alt in ("gpu.rocminfo_gfx", "torch.gfx"):
            if F.get(alt):
                F.put("gpu.gfx", F.get(alt), F.facts[alt]["source"])
                break
    values = {k: v["value"] for k, v in F.facts.items()}
    sources = {k: v["source"] for k, v in F.facts.items()}
    derive(values, sources, resolve=local_prefix)
    facts = {k: {"value": values[k], "source": sources[k]} for k in sorted(values)}
    probes = sorted(F.probes, key=lambda p: p["probe"])
    cut = fit(facts)
    if cut:
        probes.append({"probe": "limits", "ok": True, "changed": cut[:64]})
    return {"format": FORMAT, "version": FORMAT_VERSION, "errbook": __version__,
            "collected": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seconds": min(round(time.perf_counter() - t0, 3), MAX_SECONDS),
            "facts": facts, "probes": probes}
