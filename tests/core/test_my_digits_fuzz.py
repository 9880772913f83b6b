"""A damaged my-digits collection: a clear message, and nothing of it is lost.

Issue 17. The variants come from ``tests/fuzz_my_digits.py`` (seeded): a
damaged ``samples.json`` (invalid JSON, wrong types, missing fields, ids that
are paths, duplicated ids) and damaged or missing drawings. Every reader and
writer either works or raises ``DataError`` with one line; a damaged index is
left byte for byte, and no drawing already saved changes. The Draw tab's view
is checked in ``tests/ui/test_damaged_files_ui.py``.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.fuzz_my_digits import copy_of, healthy_collection, variants
from workbench.core.data.my_digits import INDEX_NAME, MyDigits
from workbench.core.data.registry import DataError

# Variants of each kind (90 in all).
KINDS = {
    "index invalid": 11,
    "index wrong type": 36,
    "index field missing": 4,
    "duplicated id": 2,
    "missing image": 7,
    "damaged image": 30,
}
INDEX_KINDS = (
    "index invalid",
    "index wrong type",
    "index field missing",
    "duplicated id",
)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def _calls(store: MyDigits) -> dict[str, object]:
    drawing = np.zeros((40, 40), np.uint8)
    drawing[5:35, 18:22] = 255
    return {
        "samples": store.samples,
        "counts": store.counts,
        "arrays mnist": lambda: store.arrays("mnist"),
        "arrays digits": lambda: store.arrays("digits"),
        "all arrays": store.all_arrays,
        "examples": lambda: store.examples("digits"),
        "add": lambda: store.add(drawing, 4),
        "relabel": lambda: store.relabel("nope", 1),
    }


def test_every_damaged_collection_says_why_and_keeps_every_file(tmp_path):
    logging.disable(logging.WARNING)
    healthy = tmp_path / "healthy"
    healthy_collection(healthy)
    kinds: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    problems = []
    try:
        for number, variant in enumerate(variants(healthy)):
            kinds[variant.kind] += 1
            folder = copy_of(healthy, tmp_path / f"v{number}")
            variant.apply(folder)
            before = _files(folder)
            store = MyDigits(folder)
            index_damaged = False
            for name, call in _calls(store).items():
                try:
                    call()
                except DataError as exc:
                    if name == "samples":
                        refused[variant.kind] += 1
                        index_damaged = True
                    if not str(exc).strip() or "\n" in str(exc):
                        problems.append(f"{variant.name} {name}: {exc!r}")
                except Exception as exc:  # the escape this test exists to catch
                    problems.append(
                        f"{variant.name} {name}: {type(exc).__name__}: {exc}"
                    )
            after = _files(folder)
            for file, data in before.items():
                if after.get(file) == data:
                    continue
                if file == INDEX_NAME and not index_damaged:
                    # Older indexes lack the style: mnist, written out now.
                    old = [{"style": "mnist", **e} for e in json.loads(data)["samples"]]
                    if json.loads(after[file])["samples"][: len(old)] == old:
                        continue  # a drawing was added to a sound index
                problems.append(f"{variant.name}: {file} changed")
    finally:
        logging.disable(logging.NOTSET)
    assert kinds == KINDS, kinds  # seeded: the same damage every time
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)
    assert refused["index invalid"] == kinds["index invalid"]
    assert refused["duplicated id"] == kinds["duplicated id"]
    assert refused["index wrong type"] >= 28


@pytest.mark.parametrize(
    "bad_id", ["../../outside", "/etc/passwd", "a/b", ".hidden", ""]
)
def test_an_id_that_is_a_path_is_damage_and_nothing_is_deleted(tmp_path, bad_id):
    store = healthy_collection(tmp_path / "mine")
    outside = tmp_path / "outside.png"
    outside.write_bytes(b"the user's")
    index = json.loads((store.folder / INDEX_NAME).read_text())
    index["samples"][0]["id"] = bad_id
    damaged = json.dumps(index).encode()
    (store.folder / INDEX_NAME).write_bytes(damaged)
    with pytest.raises(DataError, match=r"is damaged \(an id must be a file name"):
        store.delete(bad_id)
    assert outside.read_bytes() == b"the user's"
    assert (store.folder / INDEX_NAME).read_bytes() == damaged


def test_a_duplicated_id_is_named(tmp_path):
    store = healthy_collection(tmp_path / "mine")
    index = json.loads((store.folder / INDEX_NAME).read_text())
    index["samples"].append(index["samples"][2])
    (store.folder / INDEX_NAME).write_text(json.dumps(index))
    with pytest.raises(
        DataError, match=f"id {index['samples'][2]['id']} is listed twice"
    ):
        store.samples()
