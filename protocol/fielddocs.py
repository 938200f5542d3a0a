"""What every field of every message means, for PROTOCOL.md's generated tables.

Kept beside the definitions (not in them) so messages.py stays readable; a test fails
when a field has no entry here or an entry names no field, so the two cannot drift.
"""

from __future__ import annotations

FIELD_DOCS: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------------ client → server
    "Hello": {
        "version": "protocol version; must equal the server's (1), else `version_mismatch`",
        "name": "the name other people see",
        "bot": "true for a program playing; bots and people are ranked alike, but shown as bots",
        "client": "client software and version, for the server's logs (e.g. `solrace-cli/0.1`)",
        "token": "a resume token from `joined`: take that seat back instead of opening a "
        "fresh session",
        "seen": "with `k`: the last move sequence this client applied to its own board "
        "(0: none); the server replays the moves after it",
        "legal_moves": "ask for your own board's legal moves with every state of it you "
        "receive (`lm` in boards, `A`, own `D`; see Legal moves)",
        "batched": "as a spectator, take the moves as one `DS` frame per tick instead of a "
        "`P` and a `D` per move (see Spectators)",
    },
    "RoomSettings": {
        "variant": "`portuguese`, `spanish`, `brisbane`, `fortress` or `perseverance`",
        "options": "the variant's options (RULES.md); missing ones take their defaults",
        "rank_by": "`time`: first to win ranks first; `progress`: most cards on the "
        "foundations ranks first",
        "max_players": "seats in the room",
        "time_limit_s": "the race ends this long after the start (0: no limit)",
        "spectators": "whether people may watch",
        "spectator_delay_s": "spectators see boards this far behind the race (needs `sp`)",
        "deal": "`random`: any seed; `winnable`: a seed a solver proved winnable",
        "hints": "whether players may ask for hints",
        "countdown_s": "seconds between the start signal and the race clock's zero",
        "public": "listed by `list`",
    },
    "CreateRoom": {
        "settings": "how the room races",
        "as_player": "take seat 1 (true) or only watch (false)",
    },
    "ListRooms": {"before": "the `next` of the previous page (absent: the first page)"},
    "Join": {
        "code": "the room code (case-insensitive)",
        "role": "`player` (only while the room is in its lobby) or `spectator`",
    },
    "Ready": {"ready": "ready (true) or not any more (false); after the results: want a "
                       "rematch (true) or not"},
    "StartNow": {},
    "Move": {
        "seq": "the number this move will have in your log: the last acknowledged "
        "sequence + 1",
        "move": "the move in RULES.md notation (`3>7`, `3:4>7`, `12>f`, `fH>4`, `redeal`)",
    },
    "Resign": {},
    "Leave": {},
    "HintRequest": {},
    "Ping": {"nonce": "echoed in `pong`"},
    # ------------------------------------------------------------------ server → client
    "Welcome": {
        "version": "the server's protocol version",
        "server": "server software and version",
        "node": "which server node this connection is on (for bug reports)",
        "server_ms": "the server's wall clock, Unix ms (for clock sync)",
        "max_frame": "the largest frame, in bytes, the server accepts from this client",
        "rate_per_s": "messages per second the rate limit refills (see Rate limits)",
    },
    "Error": {
        "code": "an error code (table below)",
        "message": "what went wrong, for people",
        "retryable": "sending the same request again later may succeed",
        "fatal": "the server closes the connection after this message",
    },
    "RoomSummary": {
        "code": "the room code",
        "variant": "the variant",
        "options": "the variant's options (all of them, resolved)",
        "rank_by": "`time` or `progress`",
        "phase": "`lobby`, `countdown`, `running` or `finished`",
        "players": "seats taken",
        "max_players": "seats in the room",
        "bots": "how many of the seats taken are bots",
        "spectators": "whether people may watch",
    },
    "RoomList": {"rooms": "one page of the open public rooms, newest first (at most 50)",
                 "next": "send it as `before` for the next page (absent: the last page)"},
    "SeatInfo": {
        "seat": "seat number (1..)",
        "name": "the player's name",
        "bot": "a program plays this seat",
        "ready": "ready to start (lobby); after the results: asked for a rematch",
        "connected": "a connection holds the seat now",
        "status": "`lobby`, `playing`, `won`, `stuck`, `resigned` or `timeout`",
        "progress": "cards on the foundations",
        "moves": "moves played",
        "finish_ms": "race clock when the seat won",
    },
    "Board": {
        "seat": "whose board",
        "seq": "moves applied to it (the sequence of the last one)",
        "view": "the board: a RULES.md layout with `down` as counts (see Views)",
        "hash": "the state hash of `w` (see State hash)",
        "legal": "your own board, if you asked (`hello.lm`): its legal moves, canonical "
        "notation (`[]`: none)",
    },
    "Joined": {
        "code": "the room code",
        "settings": "the room's settings, options resolved",
        "phase": "`lobby`, `countdown`, `running` or `finished`",
        "seat": "your seat; 0 for a spectator",
        "commitment": "SHA-256 commitment to the seed (see Seed commitment)",
        "seats": "every seat",
        "token": "players: the resume token for your seat; keep it secret (absent on a "
                 "resume and a rematch: keep the one you have)",
        "creator": "the creator's seat (0: a spectator created the room)",
        "start_ms": "when the race clock starts, server wall clock, Unix ms",
        "clock_ms": "the race clock when this was sent (running races)",
        "boards": "the boards you may see now (see Who sees what)",
        "round": "the room's round: 1, then one more at each rematch (see Rematch)",
        "hidden": "spectators: boards are withheld while any racing seat has a face-down "
        "card (see Who sees what); they follow as `snap` messages",
    },
    "Seats": {"seats": "every seat, after the change"},
    "Countdown": {
        "start_ms": "the race starts at this server wall-clock time, Unix ms",
        "server_ms": "the server's wall clock now, Unix ms (to count down locally)",
    },
    "Started": {
        "start_ms": "the race clock's zero, server wall clock, Unix ms",
        "boards": "players: their own board; spectators: every board (none if `hd`)",
        "hidden": "spectators: boards are withheld, as in `joined`",
    },
    "Accepted": {
        "seq": "the sequence of your move",
        "hash": "the state hash of your board after it",
        "clock_ms": "race clock when it was accepted",
        "revealed": "cards it turned face up, as [pile, code]",
        "legal": "if you asked (`hello.lm`): your board's legal moves after it (`[]`: none)",
    },
    "Rejected": {
        "seq": "the sequence your move carried",
        "code": "why (error code: `illegal_move`, `out_of_order`, `bad_notation`, ...)",
        "reason": "why, for people (for `illegal_move`: the rule it breaks)",
        "expected": "the sequence the server expects next",
        "retryable": "the same move may succeed if sent again later (`store_unavailable`)",
    },
    "Diff": {
        "seat": "whose board",
        "seq": "the move's sequence in that seat's log",
        "move": "the move, canonical notation",
        "hash": "the state hash after it",
        "clock_ms": "race clock when it was accepted",
        "revealed": "cards it turned face up, as [pile, code]",
        "legal": "your own board, if you asked (`hello.lm`): its legal moves after it",
    },
    "Diffs": {
        "diffs": "the tick's `D`, in order: apply them exactly as that run of `D` frames",
        "progress": "the tick's `P`, the latest per seat, applied after the diffs",
    },
    "Progress": {
        "seat": "whose progress",
        "progress": "cards on the foundations",
        "moves": "moves played",
        "status": "the seat's status",
        "clock_ms": "race clock of the change",
    },
    "RankEntry": {
        "rank": "1 for the best; equal entries share a rank (1, 2, 2, 4)",
        "seat": "seat number",
        "name": "the player's name",
        "bot": "a program played this seat",
        "status": "`won`, `stuck`, `resigned`, `timeout` (or `playing` in a live ranking)",
        "progress": "cards on the foundations",
        "moves": "moves played",
        "finish_ms": "race clock when the seat won",
        "progress_ms": "race clock when the seat first reached its progress",
        "bot_like": "a seat not declared a bot whose move clocks are beyond human "
        "(see Bot-like play)",
    },
    "Ranking": {"ranking": "everyone, best first"},
    "Snapshot": {"board": "the whole board, replacing the one you had"},
    "SeatLog": {
        "seat": "seat number",
        "moves": "every accepted move, in order",
        "clocks": "race clock (ms) when each move was accepted, same order",
    },
    "Results": {
        "code": "the room code",
        "variant": "the variant",
        "options": "every option of the variant, resolved",
        "rank_by": "`time` or `progress`",
        "seed": "the deal's seed (0 .. 2^64-1)",
        "salt": "the commitment's salt, 32 hex digits",
        "commitment": "the commitment sent in `joined`",
        "ranking": "the final ranking, best first",
        "logs": "every seat's move log",
        "reason": "why the race ended: `all_done` (nobody still playing) or `time`",
        "winnable": "the deal was proven winnable (absent: unknown)",
        "par": "a solver's solution length, when known",
        "round": "the round these results are of (1, then one more at each rematch)",
    },
    "Verdict": {
        "code": "the room code",
        "winnable": "the deal was proven winnable (true), proven not (false); absent: "
        "the solver could not decide",
        "par": "a solver's solution length, when winnable",
    },
    "Hint": {"move": "a legal move, or nil when no move remains"},
    "Pong": {"server_ms": "the server's wall clock, Unix ms", "nonce": "the ping's nonce"},
    "Closing": {"code": "why (error code)", "message": "why, for people"},
}

# Every constant of limits.py, in words (a test checks none is missing).
LIMIT_DOCS: dict[str, str] = {
    "PROTOCOL_VERSION": "the protocol's major version: `v` in `hello` must equal it",
    "MAX_VERSION": "largest `v` a hello may carry (any other value is `version_mismatch`)",
    "MAX_FRAME": "bytes in a client frame (a server may announce another in `welcome.mf`)",
    "MAX_SERVER_FRAME": "bytes a client should accept in a server frame",
    "MAX_NAME": "characters in a player name",
    "MAX_CODE": "characters in a room code",
    "MAX_TOKEN": "characters in a resume token",
    "MAX_SECRET": "characters in a token's secret",
    "MAX_NOTATION": "characters in a move",
    "MAX_VARIANT": "characters in a variant name",
    "MAX_OPTIONS": "options in a room's settings",
    "MAX_OPTION_KEY": "characters in an option name",
    "MAX_OPTION_STR": "characters in a string option value",
    "MIN_OPTION_INT": "smallest integer option value",
    "MAX_OPTION_INT": "largest integer option value",
    "MAX_SEQ": "moves in one seat's log",
    "MAX_SEATS": "seats in a room",
    "MAX_TIME_LIMIT_S": "a race's time limit, seconds",
    "MAX_SPECTATOR_DELAY_S": "the spectator delay, seconds",
    "MAX_COUNTDOWN_S": "the countdown, seconds",
    "MAX_CLIENT_STR": "characters in `hello.c`",
    "MAX_NONCE": "a ping's nonce",
    "MAX_SEED": "a seed (seeds are unsigned 64-bit integers)",
}
