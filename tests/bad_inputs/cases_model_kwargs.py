"""Bad `--model-kwargs` of `run`, `bias` and `encode`: every case stops before a model searches anything (the keys
are checked against the loader's signature, a refused value when the loader is called)."""

from __future__ import annotations

from collections.abc import Callable

from tests.bad_inputs.framework import Case, Workspace

BM25_KEYS = "(it takes: analysis, b, k1, max_indexes, pyserini_ties, workers)"


def _with(command: str, *items: str) -> Callable[[Workspace], list[str]]:
    return lambda ws: [command, "-m", "airbench-mteb/bm25", "-t", "CocktailNQUTD", "--model-kwargs", *items,
                       "--output-folder", str(ws.tmp / "results")]


CASES = [
    Case("model-kwargs-run-unknown-key", argv=_with("run", "k1=1.2", "k3=1"), error=f"does not take 'k3' {BM25_KEYS}"),
    Case("model-kwargs-bias-unknown-key", argv=_with("bias", "kone=1.2"), error=f"does not take 'kone' {BM25_KEYS}"),
    Case("model-kwargs-run-no-equals", argv=_with("run", "k1"), error="'k1' is not KEY=VALUE"),
    Case("model-kwargs-run-key-twice", argv=_with("run", "k1=1", "k1=2"), error="'k1' is given twice"),
    Case("model-kwargs-run-device", argv=_with("run", "device=cpu"), error="'device' is set by MTEB itself"),
    Case("model-kwargs-run-null", argv=_with("run", "k1=null"), error="'null' names no value"),
    Case("model-kwargs-run-empty", argv=_with("run", "analysis="), error="'' names no value"),
    Case("model-kwargs-run-list", argv=_with("run", "k1=[1, 2]"), error="'[1, 2]' is not a JSON scalar"),
    Case("model-kwargs-run-too-large", argv=_with("run", "k1=1e999"), error="'1e999' is not a finite number"),
    Case("model-kwargs-run-refused-value", argv=_with("run", "b=2"), error="airbench-mteb/bm25 (b=2): the model's loader"),
    Case("model-kwargs-bias-refused-type", argv=_with("bias", "k1=fast"), error="(k1=fast): the model's loader refused"),
]
