// solrace in the browser: lobby, race and watch screens over one websocket.
// Routes: "/" lobby, "/r/CODE" play in room CODE, "/w/CODE" watch room CODE.
// The state lives in S; render() redraws the current screen from it (batched per frame).
import { clockText, fill, h } from "./dom.js";
import {
  RANKS, SUIT_SYMBOL, SUITS, applyDiff, cardName, hashText, isRed, parseMove, rankText,
} from "./cards.js";
import { commitment, sha256 } from "./crypto.js";
import { Net } from "./net.js";

const VARIANTS = {
  brisbane: { label: "Brisbane", options: { empty_pile: ["king", "any"] } },
  portuguese: { label: "Portuguese", options: { kings_to_bottom: false } },
  spanish: { label: "Spanish", options: { kings_to_bottom: true, foundation_takeback: false } },
  fortress: { label: "Fortress", options: { foundation_takeback: false } },
  perseverance: {
    label: "Perseverance",
    options: { kings_to_bottom: true, redeals: 2, redeal_when: ["stuck", "any_time"] },
  },
};
const LIST_EVERY_MS = 3000; // the lobby's room list refresh (a list costs 5 of 20 credits)
const AUTO_MARGIN = 2; // auto-move a card to its foundation when rank <= lowest + this

const S = {
  route: routeOf(location.pathname),
  name: localStorage.getItem("solrace.name") || `Player ${100 + Math.floor(Math.random() * 900)}`,
  helloName: null,
  intent: null, // what to do once welcomed: {kind: "list"|"join"|"create", ...}
  link: "connecting",
  rooms: [],
  // the room list's page: its cursor (null: the newest), the next page's, and the cursors
  // of the newer pages passed on the way (ListRooms.b / RoomList.n, PROTOCOL.md)
  list: { before: null, next: null, back: [] },
  room: null, // {code, settings, phase, seat, creator, commitment, seats, startMs}
  boards: new Map(), // seat -> {seat, seq, view, hash, legal}
  ranking: [],
  results: null,
  verdict: null, // the commitment check: {ok, text}
  earlyVerdict: null, // a verdict message that came before its results
  inflight: null, // the move text awaiting A/R
  sel: null, // {kind: "pile", pile, n} | {kind: "take", suit}
  cursor: 1, // keyboard: the focused pile
  cursorN: 1, // keyboard: how many cards from the top
  hint: null,
  auto: localStorage.getItem("solrace.auto") === "1",
  notice: null,
  ready: false,
  noReconnect: false,
  dragging: null,
  distrust: false, // our board may be wrong: resume from move 0
  askedRematch: false, // this player asked for the next deal (ready after the results)
  connects: 0, // sockets opened so far (shown as data-connects: tests wait on it)
};

function routeOf(path) {
  const m = /^\/(r|w)\/([A-Za-z0-9_-]{1,16})\/?$/.exec(path);
  if (!m) return { kind: "lobby" };
  return { kind: m[1] === "r" ? "play" : "watch", code: m[2] };
}

const tokenKey = (code) => `solrace.token.${code}`;
const net = new Net({
  onMessage: (msg) => { handle(msg); render(); },
  onState: (state) => {
    S.link = state;
    if (state === "online") S.connects += 1;
    render();
  },
  onDrop: () => reconnectLater(),
});

// ------------------------------------------------------------------ connecting
function helloFor() {
  const room = S.room, route = S.route;
  const code = room ? room.code : route.code;
  const token = code && route.kind !== "watch" ? sessionStorage.getItem(tokenKey(code)) : null;
  S.helloName = S.name;
  if (token && (!room || room.seat > 0)) {
    const own = room && !S.distrust ? S.boards.get(room.seat) : null;
    S.intent = null;
    S.distrust = false;
    return { n: S.name, k: token, s: own ? own.seq : 0 };
  }
  if (code) S.intent = { kind: "join", code, role: route.kind === "watch" || (room && room.seat === 0) ? "spectator" : "player" };
  else S.intent = { kind: "list" };
  return { n: S.name };
}

function connect() {
  net.connect(helloFor()).catch(() => {});
}

function reconnectLater() {
  if (S.noReconnect) return;
  setTimeout(connect, net.backoff());
}

/** Start over on a fresh connection (a desync or a lost move): resume the seat. */
function resync(why) {
  console.warn("resync:", why);
  S.inflight = null;
  S.distrust = true;
  connect();
}

// ------------------------------------------------------------------ server messages
function handle(msg) {
  const room = S.room;
  switch (msg.t) {
    case "welcome":
      runIntent();
      break;
    case "rooms":
      S.rooms = msg.r || [];
      S.list.next = msg.n || null;
      if (!S.rooms.length && S.list.before) listPage("newest"); // its rooms went: start again
      break;
    case "joined":
      onJoined(msg);
      break;
    case "seats":
      if (room) room.seats = msg.ss.map(seatDefaults);
      break;
    case "countdown":
      if (room) { room.phase = "countdown"; room.startMs = msg.st; }
      break;
    case "started":
      if (room) {
        room.phase = "running";
        room.startMs = msg.st;
        for (const seat of room.seats) seat.st = "playing"; // the server set every seat playing
        room.hidden = Boolean(msg.hd); // spectators: boards withheld (face-down cards)
      }
      for (const board of msg.bd) setBoard(board);
      autoFoundation();
      break;
    case "A":
      onAccepted(msg);
      break;
    case "R":
      onRejected(msg);
      break;
    case "D":
      onDiff(msg);
      break;
    case "DS": // a spectator's tick: exactly that run of D, then the latest P per seat
      for (const diff of msg.d || []) onDiff(diff);
      for (const progress of msg.ps || []) onProgress(progress);
      break;
    case "snap":
      if (S.room) S.room.hidden = false; // boards are shown from now on
      setBoard(msg.bd);
      break;
    case "P":
      onProgress(msg);
      break;
    case "rank":
      S.ranking = msg.k;
      for (const entry of msg.k) {
        const seat = room && room.seats.find((s) => s.p === entry.p);
        if (seat) Object.assign(seat, { g: entry.g, mv: entry.mv, st: entry.st });
      }
      break;
    case "results":
      onResults(msg);
      break;
    case "verdict":
      onVerdict(msg);
      break;
    case "hint":
      S.hint = msg.m ?? null;
      if (!S.hint) note("no move left");
      break;
    case "err":
      onError(msg);
      break;
    case "bye":
      if (msg.c === "taken_over") {
        S.noReconnect = true;
        note("this seat is now played from another tab or device");
      } else {
        note(`the server closed the connection: ${msg.m}`);
      }
      break;
    default:
      break; // unknown messages are ignored (PROTOCOL.md Versioning)
  }
}

/** Ask for the room list's current page (the newest, or the one the player paged to). */
function listRooms() {
  net.send(S.list.before ? { t: "list", b: S.list.before } : { t: "list" });
}

/** Page the room list: "older" (the server's next page), "newer" (back) or "newest". */
function listPage(where) {
  const list = S.list;
  if (where === "older" && list.next) {
    list.back.push(list.before);
    list.before = list.next;
  } else if (where === "newer" && list.back.length) {
    list.before = list.back.pop();
  } else {
    S.list = { before: null, next: null, back: [] };
  }
  listRooms();
}

function runIntent() {
  const intent = S.intent;
  S.intent = null;
  if (!intent || intent.kind === "list") listRooms();
  else if (intent.kind === "join") net.send({ t: "join", c: intent.code, r: intent.role });
  else if (intent.kind === "create") net.send({ t: "create", r: intent.settings });
}

function onJoined(msg) {
  const previous = S.room;
  const round = msg.rd || 1;
  // the same room, a new round (a rematch): a new deal, so a new commitment to keep
  const newRound = Boolean(previous && previous.code === msg.c && previous.round !== round);
  if (!previous || previous.code !== msg.c || newRound) {
    S.boards.clear();
    S.results = null;
    S.verdict = null;
    S.ranking = [];
    S.sel = null;
    S.earlyVerdict = null;
    S.askedRematch = false;
  }
  S.room = {
    code: msg.c, settings: msg.r, phase: msg.ph, seat: msg.p, creator: msg.cr || 0, round,
    commitment: previous && previous.code === msg.c && !newRound ? previous.commitment : msg.cm,
    seats: msg.ss.map(seatDefaults), startMs: msg.st ?? null, hidden: Boolean(msg.hd),
  };
  S.inflight = null;
  // A resume gets no welcome: the race clock in joined sets the server clock instead.
  if (msg.ck != null && msg.st != null) net.clockOffset = msg.st + msg.ck - Date.now();
  if (msg.k) sessionStorage.setItem(tokenKey(msg.c), msg.k);
  for (const board of msg.bd || []) setBoard(board);
  const me = msg.ss.find((s) => s.p === msg.p);
  S.ready = Boolean(me && me.r);
  S.route = { kind: msg.p > 0 ? "play" : "watch", code: msg.c };
  const path = `/${msg.p > 0 ? "r" : "w"}/${msg.c}`;
  if (location.pathname !== path) history.replaceState(null, "", path);
}

/** A SeatInfo with its omitted defaults filled in (the encoder leaves defaults out). */
function seatDefaults(seat) {
  return { b: false, r: false, on: true, st: "lobby", g: 0, mv: 0, fm: null, ...seat };
}

function setBoard(board) {
  S.boards.set(board.p, { seat: board.p, seq: board.s, view: board.w, hash: board.h, legal: board.lm ?? null });
  checkHash(board.p, board.w, board.h);
}

function onAccepted(msg) {
  const room = S.room;
  const own = room && S.boards.get(room.seat);
  const move = S.inflight;
  S.inflight = null;
  if (!own || !move || msg.s !== own.seq + 1) {
    resync("an ack for no move in flight");
    return;
  }
  try {
    applyDiff(own.view, move, msg.r);
  } catch (err) {
    resync(err.message);
    return;
  }
  own.seq = msg.s;
  own.hash = msg.h;
  own.legal = msg.lm ?? null;
  const me = S.room.seats.find((seat) => seat.p === own.seat);
  if (me) Object.assign(me, { mv: msg.s, g: progressOfBoard(own) }); // no P for own moves
  S.hint = null;
  checkHash(own.seat, own.view, msg.h);
  autoFoundation();
}

function onRejected(msg) {
  S.inflight = null;
  note(msg.m);
  if (msg.c === "out_of_order" || msg.c === "taken_over") resync(msg.c);
}

function onProgress(msg) {
  const seat = S.room && S.room.seats.find((s) => s.p === msg.p);
  if (seat) Object.assign(seat, { g: msg.g, mv: msg.mv, st: msg.st });
}

function onDiff(msg) {
  const board = S.boards.get(msg.p);
  if (!board || msg.s <= board.seq) return; // already applied (the receiver rule)
  if (msg.s > board.seq + 1) {
    resync(`a gap in seat ${msg.p}'s diffs`);
    return;
  }
  try {
    applyDiff(board.view, msg.m, msg.r);
  } catch (err) {
    resync(err.message);
    return;
  }
  board.seq = msg.s;
  board.hash = msg.h;
  if (msg.lm) board.legal = msg.lm;
  checkHash(msg.p, board.view, msg.h);
}

function checkHash(seat, view, expected) {
  const text = hashText(view);
  sha256(new TextEncoder().encode(text)).then((digest) => {
    const got = new DataView(digest.buffer).getUint32(0);
    const board = S.boards.get(seat);
    if (got !== expected && board && hashText(board.view) === text) resync(`seat ${seat}: state hash differs`);
  });
}

/** The deal's verdict, decided after the results went out (or just before them): the
 * results view then says whether the deal was winnable. */
function onVerdict(msg) {
  if (!S.room || msg.c !== S.room.code || msg.wn == null) return;
  if (!S.results) { S.earlyVerdict = msg; return; }
  S.results.wn = msg.wn;
  S.results.par = msg.par ?? null;
}

async function onResults(msg) {
  const early = S.earlyVerdict;
  S.earlyVerdict = null;
  if (early && early.c === msg.c && msg.wn == null) Object.assign(msg, { wn: early.wn, par: early.par ?? null });
  S.results = msg;
  if (S.room) S.room.phase = "finished";
  S.ranking = msg.k;
  S.inflight = null;
  S.sel = null;
  const given = S.room ? S.room.commitment : msg.cm;
  try {
    const mine = await commitment(msg.sd, msg.sl);
    S.verdict = mine === given
      ? { ok: true, text: "The revealed seed matches the commitment sent before the race: the deal was fixed in advance." }
      : { ok: false, text: `The revealed seed does NOT match the commitment (${mine} vs ${given}).` };
  } catch (err) {
    S.verdict = { ok: false, text: `Could not check the commitment: ${err.message}` };
  }
  render();
}

function onError(msg) {
  const route = S.route;
  if (msg.c === "bad_token" && route.code) {
    sessionStorage.removeItem(tokenKey(route.code));
    S.intent = { kind: "join", code: route.code, role: "player" };
    net.send({ t: "hello", v: 1, n: S.name, c: "solrace-web/0.1", lm: true, ds: true });
    return;
  }
  if ((msg.c === "room_closed" || msg.c === "room_full") && route.kind === "play" && !S.room) {
    note(`${msg.m}: watching instead`);
    S.route = { kind: "watch", code: route.code };
    net.send({ t: "join", c: route.code, r: "spectator" });
    return;
  }
  if (msg.c === "no_such_room" && !S.room) {
    note(`no room ${route.code || ""}: it may have expired`);
    S.route = { kind: "lobby" };
    history.replaceState(null, "", "/");
    listRooms();
    return;
  }
  note(msg.m || msg.c);
}

function note(text) {
  S.notice = text;
  clearTimeout(note.timer);
  note.timer = setTimeout(() => { S.notice = null; render(); }, 5000);
}

// ------------------------------------------------------------------ playing
function own() {
  return S.room && S.room.seat > 0 ? S.boards.get(S.room.seat) : null;
}

function canPlay() {
  const room = S.room, board = own();
  if (!room || !board || room.phase !== "running" || S.inflight) return false;
  const me = room.seats.find((s) => s.p === room.seat);
  return !me || me.st === "playing" || me.st === "lobby";
}

function play(move) {
  const board = own();
  if (!canPlay() || !board) return false;
  if (board.legal && !board.legal.includes(move)) {
    note(`${move} is not a legal move here`);
    return false;
  }
  S.sel = null;
  if (!net.send({ t: "M", s: board.seq + 1, m: move })) {
    note("offline: reconnecting…");
    return false;
  }
  S.inflight = move;
  render();
  return true;
}

/** The legal move taking the selection to ``target`` ("f" or a pile number), if any. */
function moveFor(sel, target) {
  const board = own();
  if (!board || !sel) return null;
  if (!board.legal) return notation(sel, target); // a server without hello.lm: it judges
  const moves = board.legal.map((text) => ({ text, mv: parseMove(text) }));
  if (sel.kind === "take") {
    const hit = moves.find(({ mv }) => mv.kind === "take" && mv.suit === sel.suit && mv.to === target);
    return hit ? hit.text : null;
  }
  if (target === "f") {
    const hit = moves.find(({ mv }) => mv.kind === "found" && mv.from === sel.pile);
    return hit ? hit.text : null;
  }
  const fits = moves.filter(({ mv }) => mv.kind === "pile" && mv.from === sel.pile && mv.to === target);
  const exact = fits.find(({ mv }) => mv.n === sel.n);
  if (exact) return exact.text;
  return fits.length === 1 ? fits[0].text : null;
}

/** The canonical notation of taking the selection to ``target`` (legal or not). */
function notation(sel, target) {
  if (sel.kind === "take") return target === "f" ? null : `f${sel.suit}>${target}`;
  if (target === "f") return sel.n === 1 ? `${sel.pile}>f` : null;
  return `${sel.pile}${sel.n > 1 ? `:${sel.n}` : ""}>${target}`;
}

function tryMove(sel, target) {
  const move = moveFor(sel, target);
  S.sel = null;
  if (move) play(move);
  else note("that move is not legal");
  render();
}

function autoFoundation() {
  const board = own();
  if (!S.auto || !board || !board.legal || !canPlay()) return;
  const f = board.view.foundations;
  const lowest = Math.min(f.S, f.H, f.D, f.C);
  for (const text of board.legal) {
    const mv = parseMove(text);
    if (mv.kind !== "found") continue;
    const up = board.view.tableau[mv.from - 1].up;
    const card = up[up.length - 1];
    if (RANKS.indexOf(card[0]) + 1 <= lowest + AUTO_MARGIN) {
      play(text);
      return;
    }
  }
}

function clickPile(pile, index) {
  const board = own();
  if (!board || !canPlay()) return;
  const up = board.view.tableau[pile - 1].up;
  if (S.sel && !(S.sel.kind === "pile" && S.sel.pile === pile)) {
    tryMove(S.sel, pile);
    return;
  }
  if (index === null || index < 0 || index >= up.length) {
    S.sel = null;
  } else {
    const n = up.length - index;
    S.sel = S.sel && S.sel.n === n ? null : { kind: "pile", pile, n };
  }
  S.cursor = pile;
  render();
}

function clickFoundation(suit) {
  const board = own();
  if (!board || !canPlay()) return;
  if (S.sel && S.sel.kind === "pile") {
    tryMove(S.sel, "f");
  } else if (board.view.foundations[suit] > 0) {
    S.sel = S.sel && S.sel.kind === "take" ? null : { kind: "take", suit };
    render();
  }
}

/** Double click: send the card to its foundation, else its only legal move. */
function quickMove(pile, index) {
  const board = own();
  if (!board || !board.legal || !canPlay()) return;
  const up = board.view.tableau[pile - 1].up;
  const sel = { kind: "pile", pile, n: up.length - index };
  let move = sel.n === 1 ? moveFor(sel, "f") : null;
  if (!move) {
    const from = board.legal.filter((t) => { const mv = parseMove(t); return mv.kind === "pile" && mv.from === pile && mv.n === sel.n; });
    if (from.length === 1) move = from[0];
  }
  S.sel = null;
  if (move) play(move);
  render();
}

function redeal() { play("redeal"); }

function askHint() {
  if (S.room && S.room.settings.h) net.send({ t: "hint" });
}

function onKey(event) {
  const board = own();
  const target = event.target;
  if (!board || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
  if (target.tagName === "BUTTON" && (event.key === "Enter" || event.key === " ")) return;
  const piles = board.view.tableau.length;
  const up = board.view.tableau[S.cursor - 1]?.up || [];
  const key = event.key;
  if (key === "ArrowRight" || key === "ArrowLeft") {
    S.cursor = ((S.cursor - 1 + (key === "ArrowRight" ? 1 : piles - 1)) % piles) + 1;
    S.cursorN = 1;
  } else if (key === "Home") {
    S.cursor = 1;
    S.cursorN = 1;
  } else if (key === "ArrowUp") {
    S.cursorN = Math.min(Math.max(1, up.length), S.cursorN + 1);
  } else if (key === "ArrowDown") {
    S.cursorN = Math.max(1, S.cursorN - 1);
  } else if (key === "Enter" || key === " ") {
    if (S.sel) tryMove(S.sel, S.cursor);
    else if (up.length) S.sel = { kind: "pile", pile: S.cursor, n: Math.min(S.cursorN, up.length) };
  } else if (key === "f") {
    tryMove(S.sel && S.sel.kind === "pile" ? S.sel : { kind: "pile", pile: S.cursor, n: 1 }, "f");
  } else if (key === "r") {
    redeal();
  } else if (key === "h") {
    askHint();
  } else if (key === "a") {
    setAuto(!S.auto);
  } else if (key === "Escape") {
    S.sel = null;
  } else {
    return;
  }
  event.preventDefault();
  render();
}

function setAuto(on) {
  S.auto = on;
  localStorage.setItem("solrace.auto", on ? "1" : "0");
  autoFoundation();
  render();
}

// Drag: press on a face-up card, move, release over a pile or the foundations.
function onPointerDown(event) {
  const card = event.target.closest(".own .card.up");
  if (!card || event.button !== 0 || !canPlay()) return;
  S.dragging = { pile: +card.dataset.pile, index: +card.dataset.index, x: event.clientX, y: event.clientY, ghost: null, card };
}

function onPointerMove(event) {
  const drag = S.dragging;
  if (!drag) return;
  if (!drag.ghost) {
    if (Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < 6) return;
    const pile = drag.card.parentElement;
    const cards = [...pile.querySelectorAll(".card.up")].filter((c) => +c.dataset.index >= drag.index);
    drag.ghost = h("div.ghost", {}, cards.map((c) => c.cloneNode(true)));
    drag.ghost.style.width = `${drag.card.offsetWidth}px`;
    document.body.append(drag.ghost);
    cards.forEach((c) => c.classList.add("lifted"));
  }
  drag.ghost.style.left = `${event.clientX - drag.card.offsetWidth / 2}px`;
  drag.ghost.style.top = `${event.clientY - 12}px`;
}

function onPointerUp(event) {
  const drag = S.dragging;
  S.dragging = null;
  if (!drag || !drag.ghost) return;
  drag.ghost.remove();
  S.suppressClick = true;
  setTimeout(() => { S.suppressClick = false; }, 0);
  const under = document.elementFromPoint(event.clientX, event.clientY);
  const up = own()?.view.tableau[drag.pile - 1].up || [];
  const sel = { kind: "pile", pile: drag.pile, n: up.length - drag.index };
  const pile = under && under.closest(".own .pile");
  if (under && under.closest(".own .foundations")) tryMove(sel, "f");
  else if (pile && +pile.dataset.pile !== drag.pile) tryMove(sel, +pile.dataset.pile);
  else render();
}

// ------------------------------------------------------------------ lobby actions
function createRoom(form) {
  const data = new FormData(form);
  const variant = data.get("variant");
  const options = {};
  for (const [name, dflt] of Object.entries(VARIANTS[variant].options)) {
    const raw = data.get(`o_${name}`);
    if (Array.isArray(dflt)) options[name] = raw || dflt[0];
    else if (typeof dflt === "number") options[name] = Number.parseInt(raw ?? dflt, 10);
    else options[name] = raw === "on";
  }
  const int = (key, dflt) => { const n = Number.parseInt(data.get(key), 10); return Number.isFinite(n) ? n : dflt; };
  const settings = {
    v: variant, o: options, r: data.get("rank_by"), m: int("max_players", 4),
    tl: int("time_limit", 0), sp: data.get("spectators") === "on", sd: int("delay", 0),
    d: data.get("deal"), h: data.get("hints") === "on", cd: int("countdown", 3),
    pu: data.get("public") === "on",
  };
  if (!settings.sp) delete settings.sd;
  setName(data.get("name") || S.name);
  if (S.helloName !== S.name) {
    S.intent = { kind: "create", settings };
    net.connect({ n: S.name }).catch(() => {});
  } else {
    net.send({ t: "create", r: settings });
  }
}

function setName(name) {
  const clean = String(name).trim().slice(0, 32);
  if (!clean) return;
  S.name = clean;
  localStorage.setItem("solrace.name", clean);
}

function goJoin(code, watch) {
  const clean = String(code).trim().toUpperCase(); // codes are upper case, read aloud
  if (!/^[A-Za-z0-9_-]{1,16}$/.test(clean)) { note("a room code is letters and digits"); render(); return; }
  location.assign(`/${watch ? "w" : "r"}/${clean}`);
}

/** Ask for the next deal in this room (``ready`` after the results); the room comes
 * back with a new ``joined`` (the next round) once every connected player asked, or the
 * creator starts it. */
function rematch() {
  S.askedRematch = true;
  net.send({ t: "ready", r: true });
}

/** The creator starts the next round now, with the players who asked. */
function startRematch() {
  net.send({ t: "start" });
}

// ------------------------------------------------------------------ rendering
const root = document.getElementById("app");
const keptNodes = new Map();

/** The element ``make()`` built the first time ``key`` was asked for: forms are built
 * once so a redraw (a rival's move, the room list) never wipes what someone is typing. */
function kept(key, make) {
  if (!keptNodes.has(key)) keptNodes.set(key, make());
  return keptNodes.get(key);
}
let queued = false;

function render() {
  if (queued) return;
  queued = true;
  requestAnimationFrame(() => {
    queued = false;
    if (S.dragging && S.dragging.ghost) return; // redraw after the drop
    const active = document.activeElement;
    fill(root, header(), S.notice ? h("p.notice", { role: "status" }, S.notice) : null, screen());
    // Forms are kept across redraws (kept()); give the one being typed in its focus back.
    if (active && active !== document.body && active.isConnected && document.activeElement !== active) active.focus();
    tick();
    // For bench/web_bench.py: when the first screen, and the first board, were drawn.
    const marks = [["solrace:screen", S.link === "online"], ["solrace:board", root.querySelector(".board")]];
    for (const [name, drawn] of marks) {
      if (drawn && !performance.getEntriesByName(name).length) performance.mark(name);
    }
  });
}

function header() {
  return h("header", {},
    h("a.brand", { href: "/" }, "solrace"),
    S.room ? h("span.code", {}, `room ${S.room.code}`) : null,
    h("span.link", { className: `link ${S.link}`, title: "connection", dataset: { connects: S.connects } }, S.link));
}

function screen() {
  const room = S.room;
  if (!room) return lobbyScreen();
  if (room.phase === "lobby" || room.phase === "countdown") return roomLobby(room);
  if (room.seat === 0) return watchScreen(room);
  return raceScreen(room);
}

function lobbyScreen() {
  return h("main.lobby", {},
    kept("join", joinForm),
    kept("create", createForm),
    h("section.panel.rooms", {},
      h("h2", {}, "Open rooms"),
      S.rooms.length === 0 ? h("p.muted", {}, "No public room is open. Create one!") :
        h("table", {},
          h("thead", {}, h("tr", {}, ["room", "variant", "players", "phase", "ranked by", ""].map((t) => h("th", {}, t)))),
          h("tbody", {}, S.rooms.map((r) => h("tr", { dataset: { code: r.c } },
            h("td.mono", {}, r.c),
            h("td", {}, VARIANTS[r.v]?.label || r.v),
            h("td", {}, `${r.n}/${r.m}${r.b ? ` (${r.b} bot${r.b > 1 ? "s" : ""})` : ""}`),
            h("td", {}, r.ph),
            h("td", {}, r.r),
            h("td.actions", {},
              r.ph === "lobby" && r.n < r.m ? h("button", { onclick: () => goJoin(r.c, false) }, "Join") : null,
              r.sp !== false ? h("button", { onclick: () => goJoin(r.c, true) }, "Watch") : null))))),
      S.list.back.length || S.list.next ? h("div.row.paging", {},
        h("button", { type: "button", disabled: !S.list.back.length, onclick: () => listPage("newer") }, "← Newer"),
        h("button", { type: "button", disabled: !S.list.next, onclick: () => listPage("older") }, "Older →")) : null));
}

function joinForm() {
  const code = h("input", { name: "code", placeholder: "room code", maxLength: 16, autocomplete: "off", "aria-label": "room code" });
  return h("section.panel", {},
    h("h2", {}, "Join a room"),
    h("form.row", { onsubmit: (e) => { e.preventDefault(); goJoin(code.value, false); } },
      code,
      h("button", { type: "submit" }, "Join"),
      h("button", { type: "button", onclick: () => goJoin(code.value, true) }, "Watch")));
}

function createForm() {
  const variantSelect = h("select", { name: "variant", "aria-label": "variant", onchange: () => fill(optionsBox, optionFields(variantSelect.value)) },
    Object.entries(VARIANTS).map(([v, d]) => h("option", { value: v }, d.label)));
  const optionsBox = h("div.options", {}, optionFields("brisbane"));
  const field = (label, input) => h("label", {}, h("span", {}, label), input);
  const check = (name, on) => h("input", { type: "checkbox", name, checked: on });
  return h("form.panel.create", { onsubmit: (e) => { e.preventDefault(); createRoom(e.target); } },
    h("h2", {}, "Create a room"),
    field("Your name", h("input", { name: "name", value: S.name, maxLength: 32, required: true, onchange: (e) => setName(e.target.value) })),
    field("Variant", variantSelect),
    optionsBox,
    field("Rank by", h("select", { name: "rank_by" }, h("option", { value: "time" }, "time to win"), h("option", { value: "progress" }, "progress"))),
    field("Deal", h("select", { name: "deal" }, h("option", { value: "random" }, "random"), h("option", { value: "winnable" }, "proven winnable"))),
    field("Seats", h("input", { name: "max_players", type: "number", min: 1, max: 16, value: 4 })),
    field("Time limit (s, 0 = none)", h("input", { name: "time_limit", type: "number", min: 0, max: 86400, value: 0 })),
    field("Countdown (s)", h("input", { name: "countdown", type: "number", min: 0, max: 60, value: 3 })),
    field("Spectator delay (s)", h("input", { name: "delay", type: "number", min: 0, max: 600, value: 0 })),
    h("div.checks", {},
      field("Spectators", check("spectators", true)),
      field("Hints", check("hints", false)),
      field("Public", check("public", true))),
    h("button.primary", { type: "submit" }, "Create"));
}

function optionFields(variant) {
  return Object.entries(VARIANTS[variant].options).map(([name, dflt]) => {
    let input;
    if (Array.isArray(dflt)) input = h("select", { name: `o_${name}` }, dflt.map((v) => h("option", { value: v }, v)));
    else if (typeof dflt === "number") input = h("input", { type: "number", name: `o_${name}`, min: 0, max: 99, value: dflt });
    else input = h("input", { type: "checkbox", name: `o_${name}`, checked: dflt });
    return h("label", {}, h("span", {}, name.replaceAll("_", " ")), input);
  });
}

function settingsText(settings) {
  const opts = Object.entries(settings.o || {}).map(([k, v]) => `${k.replaceAll("_", " ")}: ${v}`);
  const bits = [VARIANTS[settings.v]?.label || settings.v, `ranked by ${settings.r || "time"}`];
  if (settings.tl) bits.push(`${settings.tl} s limit`);
  if (settings.d === "winnable") bits.push("winnable deal");
  if (settings.h) bits.push("hints on");
  return [...bits, ...opts].join(" · ");
}

function roomLobby(room) {
  const base = location.origin;
  const isCreator = room.seat > 0 && room.seat === room.creator;
  return h("main.room", {},
    h("section.panel", {},
      h("h2", {}, `Room ${room.code}`),
      h("p.muted", {}, settingsText(room.settings)),
      h("p", {}, "Invite: ", h("a.mono", { href: `/r/${room.code}` }, `${base}/r/${room.code}`)),
      room.settings.sp !== false ? h("p", {}, "Watch: ", h("a.mono", { href: `/w/${room.code}` }, `${base}/w/${room.code}`)) : null,
      room.phase === "countdown" ? h("p.countdown", { id: "countdown" }, "") : null,
      seatList(room),
      room.seat > 0 && room.phase === "lobby" ? h("div.row", {},
        h("button.primary", { id: "ready", onclick: () => { S.ready = !S.ready; net.send({ t: "ready", r: S.ready }); render(); } }, S.ready ? "Not ready" : "Ready"),
        isCreator ? h("button", { id: "start", onclick: () => net.send({ t: "start" }) }, "Start now") : null,
        h("button", { onclick: leaveRoom }, "Leave")) : null,
      room.seat === 0 ? h("p.muted", {}, "You are watching; the boards appear when the race starts. ",
        h("span", { id: "delay" }, room.settings.sd ? `Boards will be shown ${room.settings.sd} s behind the race.` : "Boards will be shown live.")) : null));
}

function leaveRoom() {
  net.send({ t: "leave" });
  if (S.room) sessionStorage.removeItem(tokenKey(S.room.code));
  location.assign("/");
}

function seatList(room) {
  return h("ul.seats", {}, room.seats.map((s) => h("li", { className: s.p === room.seat ? "me" : "" },
    h("span.name", {}, s.n), s.b ? h("span.tag", {}, "bot") : null,
    s.r ? h("span.tag.ok", {}, "ready") : null,
    s.on === false ? h("span.tag.off", {}, "away") : null)));
}

function raceScreen(room) {
  const board = own();
  const me = room.seats.find((s) => s.p === room.seat);
  const finished = room.phase === "finished";
  const legal = board?.legal || [];
  return h("main.race", {},
    h("div.bar", {},
      h("span.timer", { id: "timer" }, ""),
      me ? h("span.status", { id: "my-status" }, me.st) : null,
      board ? h("span", { id: "my-progress" }, `${progressOfBoard(board)} / 52`) : null,
      h("label.toggle", {}, h("input", { type: "checkbox", id: "auto", checked: S.auto, onchange: (e) => setAuto(e.target.checked) }), "auto to foundations"),
      legal.includes("redeal") ? h("button", { id: "redeal", onclick: redeal }, `Redeal (${board.view.redeals_left} left)`) : null,
      room.settings.h && !finished ? h("button", { id: "hint", onclick: askHint }, "Hint") : null,
      !finished && me && me.st === "playing" ? h("button", { id: "resign", onclick: () => { if (confirm("Resign this race?")) net.send({ t: "resign" }); } }, "Resign") : null,
      kept("typed", typedMoveForm)),
    board ? boardView(board, { own: !finished, name: me ? me.n : "you" }) : h("p", {}, "waiting for the board…"),
    S.hint ? h("p.hint", { id: "hint-text" }, `Hint: ${S.hint}`) : null,
    finished && S.results ? resultsView(room) : null,
    rivalsView(room),
    h("p.keys.muted", {}, "Click a card then a pile, drag, or keys: ←/→ pile (Home: first), ↑/↓ cards, Enter pick/drop, f foundation, r redeal, h hint, a auto, Esc cancel."));
}

function typedMoveForm() {
  const input = h("input", { name: "move", placeholder: "type a move: 3>7", "aria-label": "move", size: 10, autocomplete: "off" });
  return h("form.typed", { onsubmit: (e) => { e.preventDefault(); if (input.value.trim()) play(input.value.trim()); input.value = ""; } }, input);
}

function watchScreen(room) {
  const delay = room.settings.sd || 0;
  const seats = new Map(room.seats.map((s) => [s.p, s]));
  return h("main.watch", {},
    h("div.bar", {},
      h("span.timer", { id: "timer" }, ""),
      h("span.delay", { id: "delay" }, delay ? `boards are shown ${delay} s behind the race` : "live (no delay)")),
    room.phase === "finished" && S.results ? resultsView(room) : null,
    room.hidden && S.boards.size === 0
      ? h("p.muted.hidden-note", {}, "boards are hidden while any seat has face-down cards: progress only")
      : null,
    h("div.boards", {}, [...S.boards.values()].map((board) =>
      boardView(board, { own: false, small: true, name: seats.get(board.seat)?.n || `seat ${board.seat}` }))),
    rivalsView(room));
}

function progressOfBoard(board) {
  const f = board.view.foundations;
  return f.S + f.H + f.D + f.C;
}

function boardView(board, { own: mine, small, name }) {
  const view = board.view;
  const hint = mine && S.hint ? parseMove(S.hint) : null;
  const targets = new Set();
  if (mine && S.sel) {
    for (let j = 1; j <= view.tableau.length; j++) if (moveFor(S.sel, j)) targets.add(j);
    if (S.sel.kind === "pile" && moveFor(S.sel, "f")) targets.add("f");
  }
  const foundations = h("div.foundations", { className: `foundations${targets.has("f") ? " target" : ""}` },
    SUITS.map((suit) => {
      const height = view.foundations[suit];
      const top = height ? cardEl(RANKS[height - 1] + suit) : h("div.card.slot", { title: `${suit} foundation (empty)` }, SUIT_SYMBOL[suit]);
      top.dataset.suit = suit;
      top.classList.add("found");
      if (S.sel && S.sel.kind === "take" && S.sel.suit === suit && mine) top.classList.add("selected");
      if (mine) top.addEventListener("click", () => clickFoundation(suit));
      return top;
    }),
    view.redeals_left ? h("span.redeals", {}, `${view.redeals_left} redeal${view.redeals_left > 1 ? "s" : ""} left`) : null);
  const piles = view.tableau.map((pile, i) => {
    const number = i + 1;
    const selected = mine && S.sel && S.sel.kind === "pile" && S.sel.pile === number ? S.sel.n : 0;
    const classes = ["pile"];
    if (targets.has(number)) classes.push("target");
    if (mine && S.cursor === number) classes.push("cursor");
    if (hint && (hint.from === number || hint.to === number)) classes.push("hinted");
    const el = h("div", { className: classes.join(" "), dataset: { pile: number } },
      h("span.num", {}, number),
      pile.down ? h("div.card.back", { title: `${pile.down} face-down card${pile.down > 1 ? "s" : ""}` }, h("span.count", {}, `×${pile.down}`)) : null,
      pile.up.map((code, index) => {
        const card = cardEl(code);
        card.classList.add("up");
        card.dataset.pile = number;
        card.dataset.index = index;
        if (selected && index >= pile.up.length - selected) card.classList.add("selected");
        if (mine && !selected && S.cursor === number && index >= pile.up.length - S.cursorN) card.classList.add("focus");
        if (mine) card.addEventListener("dblclick", () => quickMove(number, index));
        return card;
      }),
      !pile.down && !pile.up.length ? h("div.card.slot", {}, "") : null);
    if (mine) {
      el.addEventListener("click", (event) => {
        if (S.suppressClick) return;
        const card = event.target.closest(".card.up");
        clickPile(number, card ? +card.dataset.index : null);
      });
    }
    return el;
  });
  return h("section", { className: `board${mine ? " own" : ""}${small ? " small" : ""}`, dataset: { seat: board.seat, seq: board.seq }, "aria-label": `${name}'s board` },
    h("div.boardhead", {}, h("span.name", {}, name), h("span.muted", {}, ` · move ${board.seq} · ${progressOfBoard(board)}/52`)),
    foundations,
    tableau(view.tableau.length, piles));
}

function tableau(count, piles) {
  const el = h("div.tableau", {}, piles);
  el.style.setProperty("--piles", String(count)); // CSSOM, which the CSP allows
  return el;
}

function cardEl(code) {
  return h("div", { className: `card ${isRed(code) ? "red" : "black"}`, title: cardName(code), dataset: { code } },
    h("span.rank", {}, rankText(code)), h("span.suit", {}, SUIT_SYMBOL[code[1]]));
}

function rivalsView(room) {
  const ranking = S.ranking.length ? S.ranking : room.seats.map((s, i) => ({ k: i + 1, p: s.p, n: s.n, b: s.b, st: s.st, g: s.g || 0, mv: s.mv || 0 }));
  const live = new Map(room.seats.map((s) => [s.p, s]));
  return h("section.panel.rivals", { "aria-label": "ranking" },
    h("h3", {}, room.phase === "finished" ? "Final ranking" : "Race"),
    h("ol", {}, ranking.map((entry) => {
      const seat = live.get(entry.p) || entry;
      const progress = Math.max(entry.g || 0, seat.g || 0);
      return h("li", { className: entry.p === room.seat ? "me" : "", dataset: { seat: entry.p } },
        h("span.rank", {}, `${entry.k}.`),
        h("span.name", {}, entry.n), entry.b ? h("span.tag", {}, "bot") : null,
        entry.bl ? h("span.tag.bot-like", { title: "move timing beyond human" }, "bot-like") : null,
        h("span.tag", { className: `tag st-${seat.st || entry.st}` }, seat.st || entry.st),
        h("progress", { max: 52, value: progress, title: `${progress} cards on the foundations` }),
        h("span.num", {}, `${progress}/52 · ${plural(seat.mv ?? entry.mv, "move")}`),
        entry.fm != null ? h("span.num", {}, ` · ${clockText(entry.fm)}`) : null);
    })));
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function resultsView(room) {
  const r = S.results;
  return h("section.panel.results", { id: "results" },
    h("h2", {}, "Results"),
    h("p", {}, r.why === "time" ? "Time is up." : "Every racer is done."),
    h("p", { id: "deal" }, r.wn === true ? `The deal was winnable${r.par ? ` (solver: ${r.par} moves)` : ""}.` : r.wn === false ? "The deal was not winnable." : "Whether the deal was winnable is not known (yet)."),
    h("p.mono.wrap", {}, `seed ${String(r.sd)} · salt ${r.sl}`),
    S.verdict ? h("p", { id: "verdict", className: S.verdict.ok ? "ok" : "bad" }, `${S.verdict.ok ? "✓" : "✗"} ${S.verdict.text}`) : h("p", { id: "verdict" }, "checking the commitment…"),
    h("div.row", {},
      h("button.primary", { onclick: () => location.assign("/") }, "Lobby"),
      room.seat > 0 ? h("button", { id: "rematch", onclick: rematch, disabled: S.askedRematch }, S.askedRematch ? "Rematch asked: waiting for the others" : "Rematch (next deal, this room)") : null,
      room.seat > 0 && room.seat === room.creator ? h("button", { id: "start-rematch", onclick: startRematch }, "Start the next deal now") : null));
}

// The clocks: redrawn every 100 ms without a full render.
function tick() {
  const room = S.room;
  const timer = document.getElementById("timer");
  const countdown = document.getElementById("countdown");
  if (!room || room.startMs == null) return;
  const clock = net.serverNow() - room.startMs;
  if (countdown) countdown.textContent = clock < 0 ? `starts in ${clockText(-clock)}` : "go!";
  if (!timer) return;
  if (room.phase === "finished") {
    timer.textContent = "finished";
  } else if (clock < 0) {
    timer.textContent = `starts in ${clockText(-clock)}`;
  } else {
    const limit = (room.settings.tl || 0) * 1000;
    timer.textContent = limit ? `${clockText(clock)} · ${clockText(limit - clock)} left` : clockText(clock);
  }
}

setInterval(tick, 100);
setInterval(() => {
  if (!S.room && S.link === "online") listRooms();
}, LIST_EVERY_MS);
document.addEventListener("keydown", onKey);
document.addEventListener("pointerdown", onPointerDown);
document.addEventListener("pointermove", onPointerMove);
document.addEventListener("pointerup", onPointerUp);
window.addEventListener("pageshow", render);
connect();
render();
