"""MiniLM over co*cktail's NQ-UTD in every setting, once per session: a fixture of tests/test_cocktail_tasks.py and
tests/test_significance.py (loaded by tests/conftest.py's ``pytest_plugins``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mteb
import numpy as np
import pytest

import airbench_mteb  # noqa: F401  (registers tasks and models)
from airbench_mteb.models import MINILM
from tests.conftest import SAMPLE_DATA


@pytest.fixture(scope="session")
def minilm_nq_utd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """MiniLM on CocktailNQUTD, every setting, with a new embedding cache.

    The model's encode is watched: it counts the texts it is given and keeps each text's vector,
    which tests/test_cocktail_tasks.py's independent computation ranks with instead of encoding everything
    again. The cache (``embeddings``) then holds every NQ-UTD text's vector: tests/test_significance.py's
    MiniLM run reads them from it (both modules run on one worker: tests/conftest.py).
    """
    root = tmp_path_factory.mktemp("minilm_nq_utd")
    with pytest.MonkeyPatch.context() as env:  # the settings hold for the session, then are undone
        env.setenv("AIRBENCH_MTEB_DATA_DIR", str(SAMPLE_DATA))
        env.setenv("AIRBENCH_MTEB_EMBEDDING_CACHE", str(root / "embeddings"))
        model = mteb.get_model(MINILM)
        encoded = {"document": 0, "query": 0}
        vectors: dict[tuple[str, str], np.ndarray] = {}
        encode = model.encode

        def watched_encode(inputs: Any, **kwargs: Any) -> Any:
            kind = kwargs["prompt_type"].value
            output = encode(inputs, **kwargs)
            encoded[kind] += len(inputs.dataset)
            vectors.update(((kind, text), vector) for text, vector in zip(inputs.dataset["text"], np.asarray(output),
                                                                           strict=True))
            return output

        model.encode = watched_encode
        result = mteb.evaluate(model, mteb.get_task("CocktailNQUTD"), cache=mteb.ResultCache(root / "results"),
                               show_progress_bar=False)
        yield {"result": result.task_results[0], "encoded": encoded, "vectors": vectors, "results": root / "results",
               "embeddings": root / "embeddings"}
