"""The ``pcfuzz`` command line: one module per subcommand (``NAME``, ``HELP``,
``add_parser(sub)``, ``run(args) -> int``), dispatched and mapped to exit statuses
in :mod:`pcfuzz.cli.app`."""

from pcfuzz.cli.app import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "build_parser", "main"]
