"""The ``solrace`` command. Each subcommand lives in its own module under
``client_cli.commands`` exposing ``register(subparsers)``, which adds its parser and sets
``func`` to a callable ``(args) -> int`` (the exit status)."""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules under client_cli.commands, in the order --help lists them.
COMMANDS = [
    "demo", "serve", "play", "watch", "bot", "rooms", "replay", "bench", "deal", "solve", "verify",
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every installed subcommand."""
    parser = argparse.ArgumentParser(
        prog="solrace", description="Race on the same solitaire deal, live."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"client_cli.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"client_cli.commands.{name}":
                continue  # not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse ``argv`` and run the subcommand; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
