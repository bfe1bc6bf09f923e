"""The document batches the plugin prepares in Arrow are MTEB's own, column for column and batch for batch."""

from __future__ import annotations

import datasets
import mteb
import pytest
from mteb.types import PromptType

from airbench_mteb.models.document_loader import document_loader
from airbench_mteb.mteb_compat import create_dataloader

# Python's white space at the ends (\x1c, NBSP, ideographic space), characters that are not (zero-width
# space), empty and white-space titles, and a title that ends where the text starts.
TITLES = ["", "T", " T ", "\u3000", "Title\xa0", "x\u200b", "", "a"]
TEXTS = ["plain", "  padded\n", "\x1cfile sep\x1c", "\u3000ideographic\u3000", "", " ", "\u200bzero width", "b"]


@pytest.fixture(scope="module")
def metadata() -> mteb.TaskMetadata:
    return mteb.get_task("AIR-Bench_24.05_qa_msmarco_en").metadata


def _batches(loader: object) -> list[dict]:
    """Each batch with tensors (a numeric column) as lists, so batches compare by value."""
    return [{key: value.tolist() if hasattr(value, "tolist") else value for key, value in batch.items()}
            for batch in loader]


@pytest.mark.parametrize("columns", [
    {"id": [f"d{i}" for i in range(8)], "text": TEXTS},
    {"id": [f"d{i}" for i in range(8)], "title": TITLES, "text": TEXTS},
    {"id": [f"d{i}" for i in range(8)], "text": TEXTS, "title": TITLES, "score": list(range(8))},
])
def test_documents_are_prepared_as_mteb_prepares_them(metadata: mteb.TaskMetadata, columns: dict,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = datasets.Dataset.from_dict(columns)
    with monkeypatch.context() as patch:  # prepared in Arrow, not handed to MTEB
        patch.setattr("airbench_mteb.models.document_loader.create_dataloader", None)
        ours = document_loader(corpus, task_metadata=metadata, batch_size=3)
    theirs = create_dataloader(corpus, task_metadata=metadata, prompt_type=PromptType.document, batch_size=3)
    assert ours.dataset.column_names == theirs.dataset.column_names
    assert ours.dataset.features == theirs.dataset.features
    assert ours.dataset[:] == theirs.dataset[:]
    assert _batches(ours) == _batches(theirs)


def test_a_row_arrow_cannot_prepare_exactly_goes_to_mteb(metadata: mteb.TaskMetadata) -> None:
    corpus = datasets.Dataset.from_dict({"id": ["a", "b"], "title": ["T", None], "text": ["x", "y"]})
    with pytest.raises(TypeError):  # MTEB's own failure on a null title, not a silently different text
        document_loader(corpus, task_metadata=metadata, batch_size=2)
