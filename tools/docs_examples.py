"""The documentation's examples: run from the pages' cog blocks, and checked by the tests.

Every command block in ``docs/*.md`` is one of two kinds:

- written by a cog block that runs it (``Page.bash`` / ``Page.python``) on the data the package ships,
  in the page's own working folder, and optionally shows its output: ``cog --check`` (``tests/test_docs.py``)
  runs it again and fails when the command fails or its output or a quoted number changed;
- preceded by ``<!-- not-run: REASON -->`` (it needs the hub, an LLM endpoint, a GPU, or minutes): shown,
  never run, and the reason is reported.

``python tools/docs_examples.py`` lists each page's blocks by kind; ``cog -I . -r docs/*.md`` regenerates
the pages (from the repository root).
"""

from __future__ import annotations

import atexit
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(?P<reason>.+?)\s*-->")
SNIPPET = re.compile(r'^--8<-- "(?P<path>[^"]+)"')  # pymdownx.snippets: a file included from the repository root
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+)(?P<lang>[\w-]*)")
COMMAND_LANGUAGES = {"bash", "sh", "shell", "console", "python", "py"}
# The plugin's own settings: an example never reads the user's (a data folder, CIs off, a catalog)
PLUGIN_VARIABLES = ("AIRBENCH_MTEB_DATA_DIR", "AIRBENCH_MTEB_CI", "AIRBENCH_MTEB_CI_RESAMPLES",
                    "AIRBENCH_MTEB_KEEP_TITLES", "AIRBENCH_MTEB_LLM_API_KEY", "OPENAI_API_KEY")


class ExampleError(RuntimeError):
    """A documented command that failed: its command line, exit status and output."""


class Page:
    """One page's examples: every command runs in the page's own folder, in order, offline.

    The folder holds the page's own caches, catalog and results, so pages never share a ``results/``
    and a run of one page starts from nothing. Its commands run with the Python that runs cog (its
    ``bin`` folder first on PATH: ``airbench-mteb``, ``mteb`` and ``python`` are that environment's).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.folder = Path(tempfile.mkdtemp(prefix=f"airbench-mteb-docs-{name}-"))
        atexit.register(shutil.rmtree, self.folder, ignore_errors=True)
        env = {k: v for k, v in os.environ.items() if k not in PLUGIN_VARIABLES}
        bin_dir = str(Path(sys.executable).parent)
        env.update({
            "PATH": os.pathsep.join([bin_dir, env.get("PATH", "")]),
            # the checkout being documented, not an installed copy
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
            "MTEB_CACHE": str(self.folder / ".cache" / "mteb"),
            "HF_DATASETS_CACHE": str(self.folder / ".cache" / "datasets"),
            "AIRBENCH_MTEB_CACHE": str(self.folder / ".cache" / "airbench_mteb"),
            "AIRBENCH_MTEB_EMBEDDING_CACHE": str(self.folder / ".cache" / "embeddings"),
            "AIRBENCH_MTEB_CATALOG": str(self.folder / ".cache" / "catalog.json"),
        })
        self.env = env

    def run(self, command: str) -> str:
        """Run a shell command in the page's folder with ``set -euo pipefail`` (a failing command anywhere, in a
        pipeline too, fails the example); its stdout (stdout and stderr, on failure, in the error)."""
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=self.folder, env=self.env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise ExampleError(f"docs/{self.name}.md: `{command}` exited {done.returncode}:\n"
                               f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done.stdout

    def bash(self, command: str, output: bool = False, keep: str | None = None) -> str:
        """Run ``command`` and return its fenced block (and, with ``output``, its stdout, or the lines
        matching the regex ``keep``, in a ``text`` block)."""
        stdout = self.run(command)
        block = f"```bash\n{command.strip()}\n```\n"
        if output or keep:
            lines = stdout.rstrip("\n").splitlines()
            if keep:
                lines = [line for line in lines if re.search(keep, line)]
            block += "\n```text\n" + "\n".join(lines) + "\n```\n"
        return block

    def python(self, code: str, output: bool = False) -> str:
        """Run a Python example (as a script in the page's folder) and return its fenced block."""
        code = textwrap.dedent(code).strip()
        stdout = self.run(f"python - <<'EOF'\n{code}\nEOF")
        block = f"```python\n{code}\n```\n"
        if output:
            block += "\n```text\n" + stdout.rstrip("\n") + "\n```\n"
        return block

    def path(self, relative: str) -> Path:
        return self.folder / relative


@dataclass(frozen=True)
class Block:
    """A fenced command block of a page: where it is, and how the tests treat it."""

    page: str  # relative to the repository root
    line: int
    language: str
    first_line: str
    kind: str  # "run" (written by cog, which runs it), "not-run", "included" or "unmarked"
    reason: str = ""


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name


def command_blocks(page: Path) -> list[Block]:
    """Every fenced block of a command language in ``page`` (and the files it includes), classified."""
    blocks: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    in_cog_code = in_cog_output = False
    fence: str | None = None
    reason = ""  # a not-run mark on the last non-blank line
    for number, line in enumerate(lines, 1):
        if fence is not None:  # inside a block: only its closing fence matters
            if line.strip() == fence:
                fence = None
            continue
        if "[[[cog" in line:
            in_cog_code = True
            line = line.split("[[[cog", 1)[1]
        if in_cog_code:
            if "]]]" in line:  # the code ends, its output follows
                in_cog_code, in_cog_output = False, True
            continue
        if "[[[end]]]" in line:
            in_cog_output = False
            continue
        opened = FENCE.match(line)
        if opened:
            fence = opened["indent"].strip() + opened["fence"]
            language = opened["lang"].lower()
            if language in COMMAND_LANGUAGES:
                first = lines[number].strip() if number < len(lines) else ""
                kind = "run" if in_cog_output else "not-run" if reason else "unmarked"
                blocks.append(Block(_name(page), number, language, first, kind,
                                    "" if in_cog_output else reason))
            reason = ""
            continue
        included = SNIPPET.match(line)
        if included:  # another file's walkthroughs (CONTRIBUTING.md, examples/): shown as that file has them
            source = ROOT / included["path"]
            blocks += [Block(b.page, b.line, b.language, b.first_line, "included",
                             f"included from {included['path']}, whose walkthroughs the pages do not run")
                       for b in command_blocks(source)]
        if line.strip():
            marked = NOT_RUN.search(line)
            reason = marked["reason"] if marked else ""
    return blocks


def pages(docs: Path = DOCS) -> list[Path]:
    """The README and every page of the site."""
    return [ROOT / "README.md", *sorted(docs.rglob("*.md"))]


def all_blocks(docs: Path = DOCS) -> list[Block]:
    return [block for page in pages(docs) for block in command_blocks(page)]


def main() -> int:
    blocks = all_blocks()
    for block in blocks:
        where = f"{block.page}:{block.line}"
        print(f"{block.kind:8} {where:34} {shlex.quote(block.first_line)[:70]}  {block.reason}")
    counts = {kind: sum(b.kind == kind for b in blocks) for kind in ("run", "not-run", "included", "unmarked")}
    print(", ".join(f"{n} {kind}" for kind, n in counts.items()))
    return 1 if counts["unmarked"] else 0


if __name__ == "__main__":
    sys.exit(main())
