#!/usr/bin/env python3
"""Triage vs the site's own search: for every labelled real log, paste its error line into the built site's
search (Material for MkDocs, in headless Chromium) and see which entry comes first; compare with
`errbook triage` on the whole log.

usage: python scripts/search_baseline.py [--site site/]   (builds the site first when it is missing)
"""
from __future__ import annotations

import argparse
import functools
import http.server
import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from errbook.triage import evaluate  # noqa: E402

ERROR_LINE = re.compile(r"error|fault|fail|cannot|unable|not found|warning|exception|abort", re.I)


def error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if ERROR_LINE.search(ln):
            return ln[:200]
    return (lines[-1] if lines else "")[:200]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", default=str(REPO / "site"))
    args = ap.parse_args()
    site = Path(args.site)
    if not (site / "search" / "search_index.json").is_file():
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=REPO,
                       check=True)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--disable-background-networking", f"--user-data-dir={tempfile.mkdtemp()}"):
        opts.add_argument(a)
    drv = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)

    real, _ = evaluate.load_set(REPO)
    tri = evaluate.evaluate(REPO)
    rows = []
    for case in real:
        q = error_line(case["path"].read_text(encoding="utf-8", errors="replace"))
        drv.get(f"{base}/?q={quote(q)}")
        ids: list[str] = []
        end = time.time() + 6
        while time.time() < end:
            links = drv.find_elements(By.CSS_SELECTOR, ".md-search-result__link")
            meta = drv.find_elements(By.CSS_SELECTOR, ".md-search-result__meta")
            if links or (meta and "No matching" in meta[0].text):
                ids = [m.group(1) for a in links if (m := re.search(r"/entries/(RMN-\d{4})/",
                                                                    a.get_attribute("href") or ""))]
                break
            time.sleep(0.2)
        seen = list(dict.fromkeys(ids))
        rows.append({"name": case["name"], "expect": case["expect"], "query": q, "got": seen[:3]})
    drv.quit()
    httpd.shutdown()
    n = len(rows) or 1
    out = {
        "logs": len(rows),
        "site_search": {"top1": round(sum(bool(r["got"]) and r["got"][0] == r["expect"] for r in rows) / n, 4),
                        "top3": round(sum(r["expect"] in r["got"] for r in rows) / n, 4),
                        "no_result": round(sum(not r["got"] for r in rows) / n, 4)},
        "triage": {"top1": tri["top1"], "top3": tri["top3"]},
        "rows": rows,
    }
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
