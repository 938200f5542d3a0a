"""The race core: the life of a room as pure functions and a pure state machine.

Nothing here does I/O: no asyncio, no store, no sockets. The shell (``server.race``,
``server.lobby``, ``server.room``, ``server.sweeper``) reads the store, feeds the core
what it read plus the time, and carries out what the core returns. The core imports
only ``engine`` and ``protocol`` (checked by ``scripts/check_imports.py``).
"""
