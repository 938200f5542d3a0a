"""The browser client in real chromium: create, join, race, resume, interoperate with the
terminal client's SDK, and fit a phone. Every wait is on a selector or an event."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from client_cli.bots import GreedyBot
from client_cli.sdk import RaceClient, play_bot, settings_from

from .conftest import Node, Pages, SdkLoop
from .ui import as_view, default_options, legal_moves, play_checked, read_board

pytestmark = pytest.mark.slow


def create_room(page: Any, variant: str, *, countdown: int = 0, hints: bool = False,
                delay: int = 0) -> str:
    """Fill the lobby's create form; returns the new room's code (from the URL)."""
    page.wait_for_selector("form.create")
    page.select_option('select[name="variant"]', variant)
    page.fill('input[name="countdown"]', str(countdown))
    page.fill('input[name="delay"]', str(delay))
    if hints:
        page.check('input[name="hints"]')
    page.click('form.create button[type="submit"]')
    page.wait_for_url(re.compile(r"/r/[A-Za-z0-9_-]+$"))
    page.wait_for_selector("#ready")
    code: str = page.url.rsplit("/", 1)[1]
    return code


def seat_names(page: Any) -> list[str]:
    """The names in the room's seat list."""
    names: list[str] = page.locator(".seats .name").all_inner_texts()
    return names


# The five variants, each moved a different way (every input method gets exercised).
VARIANT_INPUTS = [
    ("brisbane", "click"),
    ("portuguese", "drag"),
    ("spanish", "keys"),
    ("fortress", "typed"),
    ("perseverance", "click"),
]


@pytest.mark.parametrize(("variant", "how"), VARIANT_INPUTS)
def test_each_variant_loads_and_accepts_a_move(pages: Pages, variant: str, how: str) -> None:
    page = pages.open("/", name=f"solo {variant}")
    create_room(page, variant, hints=variant == "fortress")
    page.click("#ready")  # the only player is ready: the race starts
    page.wait_for_selector('.board.own[data-seq="0"]')
    options = default_options(variant)
    expected_piles = {"brisbane": 7, "portuguese": 13, "spanish": 13, "fortress": 10,
                      "perseverance": 12}[variant]
    assert page.locator(".board.own .pile").count() == expected_piles
    play_checked(page, how, variant, options)
    if variant == "fortress":  # a room with hints: the hint names a legal move
        page.click("#hint")
        hint = page.locator("#hint-text").inner_text().removeprefix("Hint: ")
        assert hint in legal_moves(as_view(read_board(page), variant, options))
    pages.shot(page, f"variant-{variant}")


def test_two_browsers_and_a_bot_race_to_the_end(pages: Pages, sdk: SdkLoop, ws_url: str) -> None:
    ann = pages.open("/", name="Ann")
    code = create_room(ann, "brisbane")
    bob = pages.open(f"/r/{code}", name="Bob")
    bob.wait_for_selector("#ready")
    expect(ann.locator(".seats li")).to_have_count(2)

    async def bot_race() -> Any:
        async with RaceClient(ws_url, "Greedy", bot=True) as client:
            await client.join(code)
            await client.ready()
            return await play_bot(client, GreedyBot(), max_moves=300, results_timeout=60)

    bot = sdk.spawn(bot_race())
    expect(ann.locator(".seats li")).to_have_count(3)
    ann.click("#ready")
    bob.click("#ready")
    for page in (ann, bob):
        page.wait_for_selector('.board.own[data-seq="0"]')
    options = default_options("brisbane")
    play_checked(ann, "click", "brisbane", options)
    play_checked(bob, "drag", "brisbane", options)
    play_checked(ann, "keys", "brisbane", options)
    pages.shot(ann, "race-running")
    # Rivals' progress is live: Bob's page lists all three racers.
    assert bob.locator(".rivals li").count() == 3
    for page in (ann, bob):
        page.click("#resign")  # the confirm() dialog is accepted by the fixture
    outcome = bot.result(90)
    assert outcome.results is not None
    for page in (ann, bob):
        page.wait_for_selector("#verdict.ok")  # the commitment was checked in the page
        ranking = page.locator(".rivals li .name").all_inner_texts()
        assert sorted(ranking) == ["Ann", "Bob", "Greedy"]
    assert f"seed {outcome.results.seed} · salt {outcome.results.salt}" in ann.locator(
        "#results").inner_text()
    pages.shot(ann, "race-results")


def test_reload_resumes_the_seat_and_a_second_tab_is_another_person(
    pages: Pages, sdk: SdkLoop, ws_url: str
) -> None:
    page = pages.open("/", name="Reloader")
    code = create_room(page, "fortress")
    rival = RaceClient(ws_url, "Rival")

    async def rival_joins() -> None:
        await rival.connect()
        await rival.join(code)
        await rival.ready()

    sdk.run(rival_joins())
    page.click("#ready")
    page.wait_for_selector('.board.own[data-seq="0"]')
    options = default_options("fortress")
    play_checked(page, "typed", "fortress", options)
    page.reload()
    page.wait_for_selector('.board.own[data-seq="1"]')  # the same seat, its move kept
    assert page.locator(".rivals li.me .name").inner_text() == "Reloader"
    play_checked(page, "click", "fortress", options)  # and it plays on
    # Another tab has its own sessionStorage: no token, so it is not this player; the
    # race has started, so it watches.
    other = page.context.new_page()
    other.goto(f"{pages.base}/r/{code}")
    other.wait_for_selector(".watch .board")
    assert other.url.endswith(f"/w/{code}")
    other.close()
    sdk.run(rival.close())


def test_rooms_cross_between_the_terminal_client_and_the_browser(
    pages: Pages, sdk: SdkLoop, ws_url: str
) -> None:
    # A room made by the terminal client's SDK, joined from the browser by its link.
    host = RaceClient(ws_url, "Terminal")
    room = sdk.run(_create(host, settings_from("spanish", countdown_s=0)))
    page = pages.open(f"/r/{room}", name="Browser")
    page.wait_for_selector("#ready")
    assert seat_names(page) == ["Terminal", "Browser"]
    sdk.run(host.wait_for(lambda r: len(r.seats) == 2))
    # The reverse: a room made in the browser, joined by the SDK with its code.
    maker = pages.open("/", name="Maker")
    code = create_room(maker, "perseverance")
    guest = RaceClient(ws_url, "Guest")
    sdk.run(_join(guest, code))
    expect(maker.locator(".seats li")).to_have_count(2)
    assert seat_names(maker) == ["Maker", "Guest"]
    # They race: the browser's move reaches the SDK as progress of seat 1.
    sdk.run(guest.ready())
    maker.click("#ready")
    maker.wait_for_selector('.board.own[data-seq="0"]')
    play_checked(maker, "click", "perseverance", default_options("perseverance"))
    moved = sdk.run(guest.wait_for(lambda r: r.seats[1].moves == 1))
    assert moved.code == code
    sdk.run(host.close())
    sdk.run(guest.close())


async def _create(client: RaceClient, settings: Any) -> str:
    await client.connect()
    state = await client.create_room(settings)
    return state.code


async def _join(client: RaceClient, code: str) -> None:
    await client.connect()
    await client.join(code)


def test_the_page_fits_a_phone(pages: Pages) -> None:
    lobby = pages.open("/", width=375, height=800, name="Phone")
    lobby.wait_for_selector("form.create")
    assert lobby.evaluate("document.documentElement.scrollWidth") <= 375
    pages.shot(lobby, "phone-lobby")
    create_room(lobby, "spanish")  # 13 piles: the widest layout
    lobby.click("#ready")
    lobby.wait_for_selector('.board.own[data-seq="0"]')
    assert lobby.evaluate("document.documentElement.scrollWidth") <= 375
    rights = lobby.eval_on_selector_all(
        ".board.own .pile .card", "cards => cards.map(c => c.getBoundingClientRect().right)")
    assert len(rights) == 52 and max(rights) <= 375
    play_checked(lobby, "click", "spanish", default_options("spanish"))
    pages.shot(lobby, "phone-race")


def test_the_lobby_lists_rooms_live_and_joins_by_list_or_code(pages: Pages) -> None:
    watcher = pages.open("/", name="Browsing")
    watcher.wait_for_selector("form.create")
    host = pages.open("/", name="Host")
    code = create_room(host, "portuguese")
    row = watcher.locator(f'tr[data-code="{code}"]')
    expect(row).to_contain_text("Portuguese")  # appears on the next refresh, no reload
    row.get_by_role("button", name="Join").click()
    watcher.wait_for_url(f"**/r/{code}")
    typist = pages.open("/", name="Typist")
    typist.fill('input[name="code"]', code.lower())  # codes are read aloud: any case
    typist.press('input[name="code"]', "Enter")
    typist.wait_for_url(f"**/r/{code}")
    expect(host.locator(".seats li")).to_have_count(3)
    assert seat_names(host) == ["Host", "Browsing", "Typist"]


async def _public_rooms(url: str, count: int) -> list[str]:
    """``count`` public lobbies, made one after another and left open; their codes."""
    codes = []
    async with RaceClient(url, "Maker", reconnect=False) as maker:
        for _ in range(count):
            codes.append((await maker.create_room(settings_from("spanish"))).code)
            await maker.leave()
    return codes


def test_the_lobby_pages_through_the_room_list(pages: Pages, web_node: Node, sdk: SdkLoop,
                                               ws_url: str) -> None:
    config = web_node.server.config
    page_size, config.list_page = config.list_page, 2  # read at each list request
    try:
        made = set(sdk.run(_public_rooms(ws_url, 5)))
        page = pages.open("/", name="Pager")
        rows = page.locator("section.rooms tbody tr")
        expect(rows).to_have_count(2)
        newer = page.get_by_role("button", name="← Newer")
        older = page.get_by_role("button", name="Older →")
        expect(newer).to_be_disabled()
        first = set(rows.evaluate_all("rows => rows.map((r) => r.dataset.code)"))
        older.click()
        expect(newer).to_be_enabled()
        for code in first:
            expect(page.locator(f'tr[data-code="{code}"]')).to_have_count(0)
        expect(rows).to_have_count(2)
        second = set(rows.evaluate_all("rows => rows.map((r) => r.dataset.code)"))
        # the four newest rooms are ours, two a page, each once
        assert len(first | second) == 4 and first | second <= made
        newer.click()
        for code in first:
            expect(page.locator(f'tr[data-code="{code}"]')).to_have_count(1)
        expect(newer).to_be_disabled()
    finally:
        config.list_page = page_size


def test_a_dropped_connection_resumes_the_seat(pages: Pages, web_node: Node, sdk: SdkLoop,
                                               ws_url: str) -> None:
    page = pages.open("/", name="Dropper")
    code = create_room(page, "brisbane")
    rival = RaceClient(ws_url, "Steady")
    sdk.run(_join(rival, code))
    sdk.run(rival.ready())
    page.click("#ready")
    page.wait_for_selector('.board.own[data-seq="0"]')
    options = default_options("brisbane")
    play_checked(page, "click", "brisbane", options)
    assert web_node.drop("Dropper") == 1
    page.wait_for_selector('.link[data-connects="2"]')  # it reconnected by itself
    page.wait_for_selector('.board.own[data-seq="1"]')
    assert page.url.endswith(f"/r/{code}")
    play_checked(page, "keys", "brisbane", options)  # the same seat, its board intact
    state = sdk.run(rival.wait_for(lambda r: r.seats[1].moves == 2 and r.seats[1].connected))
    assert state.seats[1].name == "Dropper"
    sdk.run(rival.close())


def test_rematch_goes_back_to_the_lobby_on_a_new_deal(pages: Pages) -> None:
    ann = pages.open("/", name="Ann")
    code = create_room(ann, "spanish")
    bob = pages.open(f"/r/{code}", name="Bob")
    bob.wait_for_selector("#ready")
    expect(ann.locator(".seats li")).to_have_count(2)
    for page in (ann, bob):
        page.click("#ready")
    for page in (ann, bob):
        page.wait_for_selector('.board.own[data-seq="0"]')
        page.click("#resign")
    first = {}
    for name, page in (("ann", ann), ("bob", bob)):
        page.wait_for_selector("#verdict.ok")
        first[name] = page.locator("#results").inner_text()
    ann.click("#rematch")
    expect(ann.locator("#rematch")).to_be_disabled()
    expect(ann.locator("#rematch")).to_have_text(re.compile("waiting for the others"))
    bob.click("#rematch")  # everyone asked: the room is back in its lobby, same code
    for page in (ann, bob):
        page.wait_for_selector("#ready")
        expect(page.locator("#results")).to_have_count(0)
        assert page.url.endswith(f"/r/{code}")
    for page in (ann, bob):
        page.click("#ready")
    for page in (ann, bob):
        page.wait_for_selector('.board.own[data-seq="0"]')
        page.click("#resign")
    for page in (ann, bob):
        page.wait_for_selector("#verdict.ok")  # the new deal's own commitment checks out
    second = ann.locator("#results").inner_text()
    seed_line = re.compile(r"seed (\d+) · salt")
    old, new = seed_line.search(first["ann"]), seed_line.search(second)
    assert old is not None and new is not None and old.group(1) != new.group(1)
    pages.shot(ann, "rematch-results")
