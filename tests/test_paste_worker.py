"""The paste page's worker (scripts/errbook/web/assets/triage-worker.js) under Node.js. A log matched piece by piece,
pass after pass, gets exactly the answer of one pass of the engine over the whole text (which tests/test_engines.py
holds to the CLI's), whatever its line ends, its encoding and the pass budget; the early look (the end of the log,
then its error lines) names a diagnosis in the middle or at the end with its true line numbers before the in-order
check is done. tests/test_browser_biglogs.py does the same in Chromium with 5 and 50 MB logs."""
import base64
import json
import subprocess

import pytest

from conftest import NODE, REPO
from errbook.kb import entries
from errbook.web import bundle

pytestmark = pytest.mark.node
ERROR_LOG = REPO / "errata" / "corpus" / "real" / "RMN-0090-1.log"
ENDS = ("\n", "\r\n", "\r")


def run(b: dict, logs: list[dict], budget: int) -> list[dict]:
    r = subprocess.run([NODE, str(REPO / "tests" / "js" / "worker.cjs")], capture_output=True, text=True, timeout=600,
                       input=json.dumps({"bundle": b, "budget": budget, "tail": 256 << 10, "logs": logs}))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def kb_bundle():
    loaded, errors = entries.load_all(REPO)
    assert not errors
    return bundle.build(REPO, list(entries.active(loaded)))


def mixed_log(size: int, where: str) -> tuple[str, range]:
    """Real benign logs in turn, each with one kind of line end (\\n, \\r\\n or a lone \\r), up to `size`
    characters, with the real RMN-0090 log in the middle or at the end. Returns the text and the lines it holds."""
    benign = sorted((REPO / "errata" / "corpus" / "benign").glob("*.log"))
    parts, total, i = [], 0, 0
    while total < size:
        lines = benign[i % len(benign)].read_text(encoding="utf-8", errors="replace").splitlines()
        text = ENDS[i % 3].join(lines) + ENDS[i % 3]
        parts.append(text)
        total += len(text)
        i += 1
    err = ERROR_LOG.read_text(encoding="utf-8")
    at = len(parts) // 2 if where == "middle" else len(parts)
    parts.insert(at, err)
    before = sum(len(p.replace("\r\n", "\n").replace("\r", "\n").split("\n")) - 1 for p in parts[:at])
    return "".join(parts), range(before + 1, before + err.count("\n") + 1)


def diagnosis_lines(results: list[dict], eid: str) -> list[int]:
    r = next(x for x in results if x["id"] == eid)
    assert r["level"] == "diagnosis"
    return sorted({ln["line"] for ev in r["evidence"] for ln in ev["lines"]})


@pytest.mark.parametrize("budget", [1, 600000])
def test_pieces_and_passes_give_one_passs_answer(kb_bundle, budget):
    logs = {where: mixed_log(1_200_000, where) for where in ("middle", "end")}
    got = run(kb_bundle, [{"text": t} for t, _ in logs.values()], budget)
    for (where, (_, span)), g in zip(logs.items(), got, strict=True):
        done, whole = g["done"], g["whole"]
        assert done["type"] == "done" and done["complete"], (where, done.get("error"))
        assert done["results"] == whole["results"] and done["first"] == whole["firstFailureLine"], where
        assert done["nlines"] == g["lines"]
        assert (g["passes"] >= 4) if budget == 1 else (g["passes"] == 1), g["passes"]   # 1.2 MB is 5 pieces
        # the early look named it before the in-order check was through, on the very lines one pass shows
        assert g["early"], where
        want = diagnosis_lines(whole["results"], "RMN-0090")
        assert all(n in span for n in want)
        assert diagnosis_lines(g["early"][0]["results"], "RMN-0090") == want, where
        assert g["early"][0]["done"] == 0


def test_a_utf16_file_is_read_in_slices_as_decoded_whole(kb_bundle):
    """Windows PowerShell's > writes UTF-16 LE with a BOM: the worker decodes the file's slices as the engine
    decodes the whole, so the answer is the same."""
    text, _ = mixed_log(700_000, "middle")
    data = b"\xff\xfe" + text.encode("utf-16-le")
    g = run(kb_bundle, [{"b64": base64.b64encode(data).decode()}], 600000)[0]
    assert g["done"]["encoding"] == "utf-16-le" and g["done"]["total"] == len(data)
    assert g["done"]["results"] == g["whole"]["results"] and any(r["id"] == "RMN-0090" for r in g["whole"]["results"])
