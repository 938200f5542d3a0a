"""Watching in the browser: /w/CODE opens as a spectator with no click, and no face-down
card identity ever reaches the page (its DOM or its websocket frames) before the results.

Brisbane deals cards face down, and while any racing seat has one the server sends
spectators no board at all (the room-wide rule, docs/SERVER.md): the page says so and
shows progress only; no card code reaches it before the boards are shown (here: with the
results, as both seats stop with cards face down). The final boards are checked against
the test's own computation: the engine deals the revealed seed and replays the logs."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from playwright.sync_api import expect

import engine
from client_cli.sdk import RaceClient, settings_from

from .conftest import Pages, SdkLoop
from .ui import read_board

pytestmark = pytest.mark.slow


def _strings(value: Any) -> list[str]:
    """Every string anywhere inside a decoded MessagePack value (keys included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(k) + _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _watching(pages: Pages, code: str) -> tuple[Any, list[bytes], list[str]]:
    """A page opened on /w/CODE, with the binary frames it receives and its console
    warnings (a resync logs one)."""
    frames: list[bytes] = []
    warnings: list[str] = []
    context = pages.browser.new_context(viewport={"width": 1100, "height": 900})
    pages.contexts.append(context)
    page = context.new_page()
    page.on("pageerror", lambda exc: pages.errors.append(str(exc)))
    page.on("console", lambda msg: warnings.append(msg.text) if msg.type == "warning" else None)
    page.on("websocket", lambda ws: ws.on(
        "framereceived", lambda payload: frames.append(payload) if isinstance(payload, bytes)
        else None))
    page.goto(f"{pages.base}/w/{code}")
    return page, frames, warnings


async def _start(one: RaceClient, two: RaceClient, code: str) -> None:
    await one.ready()
    await two.ready()
    for client in (one, two):
        await client.wait_for(lambda r: r.my_board is not None)


async def _two_seated(one: RaceClient, two: RaceClient, variant: str) -> str:
    """``one`` creates a ``variant`` room that starts without a countdown, ``two`` joins;
    the room's code."""
    await one.connect()
    await two.connect()
    state = await one.create_room(settings_from(variant, countdown_s=0))
    await two.join(state.code)
    return state.code


async def _play(client: RaceClient, count: int) -> None:
    for _ in range(count):
        board = client.room.my_board
        assert board is not None
        legal = board.legal_moves()
        if not legal:
            return
        await client.move(legal[-1])


def test_brisbane_spectator_sees_no_face_down_card(pages: Pages, sdk: SdkLoop, ws_url: str) -> None:
    one, two = RaceClient(ws_url, "One"), RaceClient(ws_url, "Two")
    code = sdk.run(_two_seated(one, two, "brisbane"))
    page, frames, _ = _watching(pages, code)  # no click: the link alone makes a spectator
    expect(page.locator(".seats li")).to_have_count(2)
    assert "live" in page.locator("#delay").inner_text()
    sdk.run(_start(one, two, code))
    page.wait_for_selector(".hidden-note")
    assert "face-down cards: progress only" in page.locator(".hidden-note").inner_text()
    sdk.run(_play(one, 6))
    sdk.run(_play(two, 4))
    page.wait_for_selector('.rivals li[data-seat="1"] .num:has-text("6 moves")')
    page.wait_for_selector('.rivals li[data-seat="2"] .num:has-text("4 moves")')
    assert page.locator(".board").count() == 0
    shown = page.eval_on_selector_all("[data-code]", "els => els.map(e => e.dataset.code)")
    html = page.content()
    before_results = list(frames)
    pages.shot(page, "watch-brisbane")

    async def finish() -> Any:
        await one.resign()
        await two.resign()
        state = await one.wait_for(lambda r: r.results is not None)
        return state.results

    results = sdk.run(finish())
    page.wait_for_selector("#verdict.ok")
    options = dict(results.options)
    face_down: set[str] | None = None
    for log in results.logs:
        game = engine.new_game("brisbane", seed=results.seed, **options)
        for move in log.moves:
            game.play(move)
        down = {code for pile in game.to_layout()["tableau"] for code in pile["down"]}
        face_down = down if face_down is None else face_down & down
    assert face_down, "the race revealed every card: nothing left to check"
    decoded = [msgpack.unpackb(frame, raw=False, strict_map_key=False) for frame in before_results]
    # progress did reach the spectator: the page asks for ticks (hello.ds), so as DS
    assert any(msg.get("t") == "DS" and msg.get("ps") for msg in decoded)
    assert not any(msg.get("t") in ("D", "snap") or msg.get("bd") or msg.get("d")
                   for msg in decoded)
    every_card = {engine.cards.CODES[c] for c in range(52)}
    leaked = {s for msg in decoded for s in _strings(msg)} & every_card
    assert leaked == set(), f"cards in the spectator's frames while boards were hidden: {leaked}"
    assert shown == [] and not any(f'"{card}"' in html for card in face_down)
    # With the results come the final boards, as the engine replays the logs.
    for log in results.logs:
        page.wait_for_selector(f'.board[data-seat="{log.seat}"][data-seq="{len(log.moves)}"]')
        game = engine.new_game("brisbane", seed=results.seed, **options)
        for move in log.moves:
            game.play(move)
        assert read_board(page, f'.board[data-seat="{log.seat}"]')["tableau"] == \
            game.view()["tableau"]
    for client in (one, two):
        sdk.run(client.close())


def test_the_spectator_delay_is_shown(pages: Pages, sdk: SdkLoop, ws_url: str) -> None:
    host = RaceClient(ws_url, "Host")

    async def setup() -> str:
        await host.connect()
        state = await host.create_room(settings_from("fortress", spectator_delay_s=7))
        return state.code

    code = sdk.run(setup())
    page = pages.open(f"/w/{code}")
    expect(page.locator("#delay")).to_contain_text("7 s behind")
    sdk.run(host.close())


def test_the_page_follows_moves_sent_as_ticks(pages: Pages, sdk: SdkLoop, ws_url: str) -> None:
    """A face-up deal: the page gets the moves as ``DS`` frames (one per tick) and applies
    each diff as a lone ``D`` (hash checked, no resync): its boards end as the engine
    replaying the results' logs."""
    one, two = RaceClient(ws_url, "One"), RaceClient(ws_url, "Two")
    code = sdk.run(_two_seated(one, two, "spanish"))
    page, frames, warnings = _watching(pages, code)
    expect(page.locator(".seats li")).to_have_count(2)
    sdk.run(_start(one, two, code))

    async def play() -> None:
        await _play(one, 12)
        await _play(two, 9)

    sdk.run(play())

    async def finish() -> Any:
        await one.resign()
        await two.resign()
        state = await one.wait_for(lambda r: r.results is not None)
        return state.results

    results = sdk.run(finish())
    page.wait_for_selector("#verdict.ok")
    for log in results.logs:
        page.wait_for_selector(f'.board[data-seat="{log.seat}"][data-seq="{len(log.moves)}"]')
        game = engine.new_game("spanish", seed=results.seed, **dict(results.options))
        for move in log.moves:
            game.play(move)
        assert read_board(page, f'.board[data-seat="{log.seat}"]')["tableau"] == \
            game.view()["tableau"]
    decoded = [msgpack.unpackb(frame, raw=False, strict_map_key=False) for frame in frames]
    ticks = [msg for msg in decoded if msg.get("t") == "DS"]
    assert sum(len(msg.get("d", [])) for msg in ticks) == sum(
        len(log.moves) for log in results.logs)
    assert not any(msg.get("t") == "D" for msg in decoded)
    assert not [w for w in warnings if "resync" in w]
    for client in (one, two):
        sdk.run(client.close())
