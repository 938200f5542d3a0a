"""The attack kit (issue #17): each module reproduces one attack against a real
``solrace serve`` process and reports figures, so a defence can be measured before and
after with the same command::

    .venv/bin/python -m bench.attack ATTACK [--store memory|redis] [--duration S] ...
    .venv/bin/python -m bench.attack --list

Every run starts its own server (and, for ``--store redis``, its own redis-server on a
free loopback port), plays ONE honest player at a steady pace in its own room, measures
its move→ack latency in a quiet phase and then while the attack runs, and prints one JSON
line and a table. Traffic goes only to 127.0.0.0/8; every loop is bounded in count and
time. docs/SECURITY.md has the threat model and today's figures.
"""
