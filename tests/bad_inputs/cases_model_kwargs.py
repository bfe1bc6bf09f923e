"""Bad `--model-kwargs` of `run`, `bias` and `encode`: every case stops before a model searches anything (the keys
are checked against the loader's signature, the values against its parameters' types, a refused value when the loader
is called)."""

from __future__ import annotations

from collections.abc import Callable

from tests.bad_inputs.framework import Case, Workspace

BM25_KEYS = "(it takes: analysis, b, k1, max_indexes, pruning, pyserini_ties, workers)"
FLOAT = "takes a finite number within float32's range (-3.403e+38 to 3.403e+38)"


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
    Case("model-kwargs-run-refused-value", argv=_with("run", "b=2"), error="airbench-mteb/bm25 (b=2.0): the model's loader"),
    Case("model-kwargs-bias-refused-type", argv=_with("bias", "k1=fast"), error=f"k1=fast: airbench-mteb/bm25's k1 {FLOAT}"),
    # issue 50, finding 2: each value held to its parameter's type before anything loads
    Case("model-kwargs-run-bool-as-float", argv=_with("run", "k1=true"), error=f"k1=true: airbench-mteb/bm25's k1 {FLOAT}"),
    Case("model-kwargs-run-bool-as-b", argv=_with("run", "b=false"), error=f"b=false: airbench-mteb/bm25's b {FLOAT}"),
    Case("model-kwargs-run-number-as-bool", argv=_with("run", "pyserini_ties=2"),
         error="pyserini_ties=2: airbench-mteb/bm25's pyserini_ties takes true or false"),
    Case("model-kwargs-run-text-as-bool", argv=_with("run", "pyserini_ties=yes"),
         error="pyserini_ties=yes: airbench-mteb/bm25's pyserini_ties takes true or false"),
    Case("model-kwargs-run-bool-as-int", argv=_with("run", "workers=true"),
         error="workers=true: airbench-mteb/bm25's workers takes a whole number"),
    Case("model-kwargs-run-fraction-as-workers", argv=_with("run", "workers=1.5"),
         error="workers=1.5: airbench-mteb/bm25's workers takes a whole number"),
    Case("model-kwargs-bias-fraction-as-max-indexes", argv=_with("bias", "max_indexes=2.5"),
         error="max_indexes=2.5: airbench-mteb/bm25's max_indexes takes a whole number"),
    Case("model-kwargs-run-beyond-float32", argv=_with("run", "k1=1e308"), error=f"k1=1e308: airbench-mteb/bm25's k1 {FLOAT}"),
    Case("model-kwargs-run-number-as-text", argv=_with("run", "analysis=1"),
         error="analysis=1: airbench-mteb/bm25's analysis takes text"),
]
