"""`airbench-mteb`: mteb's own CLI plus the plugin's commands.

``airbench-mteb run`` is ``mteb run`` with the plugin registered, ``--data-dir`` for local
mirrors, local model folders and the bundled model aliases. The other commands live in
``airbench_mteb/commands/<command>.py`` (``-`` spelled ``_``), each exposing ``register(subparsers)``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence

from airbench_mteb.errors import USER_ERRORS, one_line

SIGPIPE_EXIT = 141  # what a shell reports for a command ended by SIGPIPE (128 + 13)

# One module per command, named after it (`export-beir` -> commands/export_beir.py)
COMMAND_MODULES = (
    "airbench_mteb.commands.tasks",
    "airbench_mteb.commands.download",
    "airbench_mteb.commands.report",
    "airbench_mteb.commands.export_beir",
    "airbench_mteb.commands.generate",
    "airbench_mteb.commands.register_dataset",
    "airbench_mteb.commands.compare",
    "airbench_mteb.commands.generate_irsc",
    "airbench_mteb.commands.bias",
    "airbench_mteb.commands.demo",
    "airbench_mteb.commands.encode",
    "airbench_mteb.commands.package_submission",
    "airbench_mteb.commands.score_submission",
    "airbench_mteb.commands.stats",
    "airbench_mteb.commands.significance",
    "airbench_mteb.commands.consistency",
    "airbench_mteb.commands.sample_data",
    "airbench_mteb.commands.leaderboard",
)


def build_parser() -> argparse.ArgumentParser:
    import airbench_mteb  # noqa: F401  (registers tasks before mteb's parser lists anything)
    from airbench_mteb.commands.run import register_mteb_commands

    parser = argparse.ArgumentParser(prog="airbench-mteb", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    register_mteb_commands(subparsers)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def _parsed(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command's arguments. Building the parser imports mteb's CLI and every command: the cyclic collector is
    paused meanwhile (run again and again over the objects piling up, it took a quarter of a run's start-up), and
    what they made, which lives until the process ends, is then frozen out of its sight."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return build_parser().parse_args(argv)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def main(argv: Sequence[str] | None = None) -> int:
    command = "airbench-mteb"
    try:
        # building the parser registers the tasks, which reads settings: inside the one error path too
        args = _parsed(argv)
        command = " ".join(filter(None, (command, args.command, getattr(args, "generator", None))))
        result = args.func(args)
        sys.stdout.flush()  # a reader that left (`| head`) is found here, not at the interpreter's exit
    except USER_ERRORS as error:
        # the message names the culprit, a traceback adds nothing
        print(f"{command}: {one_line(error)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # as a Unix tool: stop quietly; stdout goes to /dev/null so the final flush cannot raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return SIGPIPE_EXIT
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
