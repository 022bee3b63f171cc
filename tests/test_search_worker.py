"""assets/errbook/errbook-search.js inside Material's own search worker bundle, run by Node.js: the proximity
signal puts the page that holds a pasted line's words together above pages that hold them apart (or in a title),
and leaves one-word queries as lunr ranks them."""
import json
import shutil
import subprocess
from pathlib import Path

import material
import pytest

from conftest import REPO

NODE = shutil.which("node")
pytestmark = pytest.mark.node    # fails without Node.js, unless allowed (tests/conftest.py)
WORKERS = Path(material.__file__).parent / "templates" / "assets" / "javascripts" / "workers"
PATCH = REPO / "scripts" / "errbook" / "web" / "assets" / "errbook-search.js"


def ranked(docs, queries):
    bundle = next(WORKERS.glob("search.*.min.js"))
    r = subprocess.run([NODE, str(REPO / "tests" / "js" / "search_worker.cjs"), str(bundle), str(PATCH)],
                       input=json.dumps({"docs": docs, "queries": queries}), capture_output=True, text=True,
                       timeout=60, check=True)
    return json.loads(r.stdout)


FILLER = " ".join(f"word{i}" for i in range(60))
DOCS = [
    # the words of the query, apart, one of them in the (boosted) title: lunr alone ranks this first
    {"id": "title-word", "title": "provider names available", "text": f"hip {FILLER} gpus {FILLER}"},
    # the whole line, once, in a longer text
    {"id": "the-line", "title": "torch sees no device", "text": f"{FILLER} No HIP GPUs are available {FILLER}"},
]


def test_a_line_held_together_outranks_its_words_apart():
    plain = "No~0 HIP~0 GPUs~0 are~0 available~0"          # what search-query.js sends for the pasted line
    assert ranked(DOCS, [plain]) == [["the-line", "title-word"]]


def test_one_word_queries_keep_lunrs_order():
    # "available" is in one title (boost 3) and one text: proximity has nothing to add to a single word
    assert ranked(DOCS, ["available~0"]) == [["title-word", "the-line"]]


def test_without_the_patch_the_title_wins(tmp_path):
    """The case above is a real one for lunr: the same index with Material's worker alone ranks the other way."""
    bundle = next(WORKERS.glob("search.*.min.js"))
    bare = tmp_path / "bare-worker.js"
    bare.write_text('importScripts("x");\n', encoding="utf-8")
    r = subprocess.run([NODE, str(REPO / "tests" / "js" / "search_worker.cjs"), str(bundle), str(bare)],
                       input=json.dumps({"docs": DOCS, "queries": ["No~0 HIP~0 GPUs~0 are~0 available~0"]}),
                       capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(r.stdout) == [["title-word", "the-line"]]
