"""The solrace client SDK: ``RaceClient`` (an asyncio session that keeps every visible
board current and resumes after drops) and the bot SDK (``Bot``, ``run_bot``).
docs/CLIENT.md is the guide."""

from .boards import BoardState
from .bot import Bot, BotOutcome, play_bot, run_bot, run_bot_sync
from .client import Desynced, Disconnected, RaceClient, Reconnected, settings_from
from .errors import ClientClosed, ConnectionLost, MoveRejected, RaceError
from .offline import OfflineOutcome, play_offline
from .room import RoomState

__all__ = [
    "BoardState",
    "Bot",
    "BotOutcome",
    "ClientClosed",
    "ConnectionLost",
    "Desynced",
    "Disconnected",
    "MoveRejected",
    "OfflineOutcome",
    "RaceClient",
    "RaceError",
    "Reconnected",
    "RoomState",
    "play_bot",
    "play_offline",
    "run_bot",
    "run_bot_sync",
    "settings_from",
]
