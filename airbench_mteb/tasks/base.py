"""Behaviour shared by every task of the plugin; the task classes themselves are declarations."""

from __future__ import annotations

from typing import Any

from mteb.abstasks.retrieval import AbsTaskRetrieval

from airbench_mteb.data.retrieval_data import RetrievalData


class PluginRetrievalTask(AbsTaskRetrieval):
    """An MTEB retrieval task whose data come from a plugin loader instead of a hub dataset.

    Subclasses implement :meth:`load_split`. Evaluation goes through the content-keyed
    embedding cache, so a corpus shared by splits, subsets or tasks is encoded once.
    """

    def load_split(self, hf_subset: str, split: str) -> RetrievalData:
        raise NotImplementedError

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        self.dataset = {}
        for hf_subset in self.hf_subsets:
            for split in self.eval_splits:
                self.dataset.setdefault(hf_subset, {})[split] = self.load_split(hf_subset, split).to_mteb()
        self.data_loaded = True

    def _evaluate_subset(self, model: Any, data_split: Any, **kwargs: Any) -> Any:
        from airbench_mteb.models.embedding_cache import with_embedding_cache

        return super()._evaluate_subset(with_embedding_cache(model), data_split, **kwargs)
