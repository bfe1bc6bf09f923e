"""What the start-up hook adds to every Python start, and what registration adds to `import mteb`.

Interleaves runs with and without the hook (AIRBENCH_MTEB_NO_HOOK=1 still imports the tiny
hook module but installs nothing), and reads the hook module's own import time from
``-X importtime``. Prints medians; last line ``startup_overhead_ms=<value>``.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time

PAIRS = int(os.environ.get("BENCH_PAIRS", "60"))


def wall(code: str, **env: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, **env}, capture_output=True)
    return time.perf_counter() - start


def hook_import_us() -> float:
    """Cumulative microseconds `-X importtime` reports for the hook module."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True,
                          check=True)
    match = re.search(r"import time:\s+\d+ \|\s+(\d+) \|\s+_airbench_mteb_hook", done.stderr)
    if match is None:
        raise SystemExit("the start-up hook is not installed in this interpreter (pip install the package)")
    return float(match.group(1))


def main() -> None:
    with_hook, without_hook = [], []
    for _ in range(PAIRS):
        with_hook.append(wall("pass"))
        without_hook.append(wall("pass", AIRBENCH_MTEB_NO_HOOK="1"))
    module_us = statistics.median(hook_import_us() for _ in range(PAIRS))
    start_ms = statistics.median(with_hook) * 1e3
    delta_ms = (statistics.median(a - b for a, b in zip(with_hook, without_hook, strict=True))) * 1e3
    print(f"python -c pass: {start_ms:.1f} ms median over {PAIRS} runs")
    print(f"finder installation (hook on - hook off, interleaved pairs): {delta_ms:+.2f} ms")
    print(f"hook module import incl. its stdlib imports (-X importtime): {module_us / 1e3:.2f} ms")
    mteb_on = [wall("import mteb") for _ in range(5)]
    mteb_off = [wall("import mteb", AIRBENCH_MTEB_NO_HOOK="1") for _ in range(5)]
    print(f"import mteb: {statistics.median(mteb_off):.2f} s without the plugin, "
          f"{statistics.median(mteb_on):.2f} s with registration")
    print(f"startup_overhead_ms={module_us / 1e3 + max(delta_ms, 0.0):.2f}")


if __name__ == "__main__":
    main()
