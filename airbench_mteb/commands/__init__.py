"""Subcommands of the `airbench-mteb` CLI, one module each (``register(subparsers)``)."""
