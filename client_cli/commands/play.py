"""``solrace play URL``: race on a board in the terminal (create a room or join one)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from client_cli import results_file


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``play`` subcommand."""
    p = subparsers.add_parser(
        "play",
        help="race in the terminal",
        description="Create a room (--create VARIANT) or join one (--join CODE) and race "
        "in a full-screen terminal view (80x24 or larger). docs/CLIENT.md lists the keys.",
    )
    p.add_argument("url", help="server URL, e.g. ws://127.0.0.1:8765")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--create",
        metavar="VARIANT",
        help="create a room: portuguese, spanish, brisbane, fortress, perseverance",
    )
    group.add_argument("--join", metavar="CODE", help="join the room with this code")
    p.add_argument("--name", default="player", help="your name (default %(default)s)")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="K=V",
        help="a variant option, e.g. kings_to_bottom=off (repeatable)",
    )
    p.add_argument(
        "--rank-by",
        choices=["time", "progress"],
        default="time",
        help="what ranks the race (default %(default)s)",
    )
    p.add_argument(
        "--time-limit",
        type=int,
        default=0,
        metavar="S",
        help="race time limit in seconds (0 = none)",
    )
    p.add_argument("--max-players", type=int, default=4, help="seats (default %(default)s)")
    p.add_argument(
        "--countdown",
        type=int,
        default=3,
        metavar="S",
        help="countdown before the start (default %(default)s)",
    )
    p.add_argument(
        "--deal",
        choices=["random", "winnable"],
        default="random",
        help="random deal, or one the solver proved winnable",
    )
    p.add_argument("--hints", action="store_true", help="allow hints")
    p.add_argument("--private", action="store_true", help="keep the room off the public list")
    p.add_argument("--no-spectators", action="store_true", help="refuse spectators")
    p.add_argument(
        "--spectator-delay",
        type=int,
        default=0,
        metavar="S",
        help="spectators see boards S seconds late",
    )
    p.add_argument("--auto", action="store_true", help="start with auto-moves to foundations on")
    p.add_argument("--ascii", action="store_true", help="suit letters instead of symbols")
    results_file.add_argument(p)
    p.set_defaults(func=run)


def parse_options(variant: str, pairs: list[str]) -> dict[str, Any]:
    """``["kings_to_bottom=off"]`` → ``{"kings_to_bottom": False}`` with the variant's own
    parsing; ``ValueError`` with a clear message otherwise."""
    import engine

    spec = engine.get_variant(variant)  # UnknownVariant names the five
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep:
            raise ValueError(f"--option takes KEY=VALUE, not {pair!r}")
        if key not in spec.options:
            known = ", ".join(spec.options) or "none"
            raise ValueError(f"{variant} has no option {key!r} (its options: {known})")
        options[key] = spec.options[key].parse_text(variant, key, value)
    return options


def build_settings(args: argparse.Namespace) -> Any:
    """The ``RoomSettings`` the flags ask for (``ValueError`` / ``RaceError`` if bad)."""
    from client_cli.sdk import settings_from

    return settings_from(
        args.create,
        options=parse_options(args.create, args.option),
        rank_by=args.rank_by,
        time_limit_s=args.time_limit,
        max_players=args.max_players,
        countdown_s=args.countdown,
        deal=args.deal,
        hints=args.hints,
        public=not args.private,
        spectators=not args.no_spectators,
        spectator_delay_s=args.spectator_delay,
    )


def run(args: argparse.Namespace) -> int:
    """Run the play screen; 0 after a finished race."""
    import engine
    from client_cli.sdk import RaceError

    save_to = args.save_results
    if results_file.path_refused("play", save_to):
        return 2
    settings = None
    if args.create:
        try:
            settings = build_settings(args)
        except (ValueError, engine.EngineError) as exc:
            print(f"solrace play: {exc}", file=sys.stderr)
            return 2
        except RaceError as exc:
            print(f"solrace play: bad settings: {exc.message}", file=sys.stderr)
            return 2
    if not sys.stdout.isatty():
        print(
            "solrace play needs a terminal (use `solrace bot` to play from a script)",
            file=sys.stderr,
        )
        return 2
    from client_cli.tui.play import PlayApp

    app = PlayApp(
        args.url,
        args.name,
        create=settings,
        join=args.join,
        auto_foundation=args.auto,
        symbols=not args.ascii,
        remember=True,  # resume tokens on disk: --join CODE takes your seat back
        save_results=save_to,
    )
    result = app.run()
    if app.session_error is not None:
        print(
            f"solrace play: {app.session_error.message} ({app.session_error.code})", file=sys.stderr
        )
        return 1
    farewell = app.farewell()
    if app.session_lost is not None:
        print(f"solrace play: {app.session_lost.message}", file=sys.stderr)
    if farewell:
        print(farewell)
    if save_to and app.client.room.results is not None:
        print(f"results saved to {save_to} (check them: solrace verify {save_to})")
    if app.session_lost is not None:
        return 1
    return int(result if result is not None else app.exit_code)
