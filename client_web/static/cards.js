// Boards as the protocol sends them (views: face-down cards as counts), the diff rules of
// PROTOCOL.md "Views and diffs", the state hash, and move notation. No rules of any
// variant live here: the server sends the legal moves (hello.lm).
import { sha256 } from "./crypto.js";

export const SUITS = ["S", "H", "D", "C"];
export const SUIT_SYMBOL = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
export const SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
export const RANKS = "A23456789TJQK";
const RANK_NAME = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };

/** The rank shown on a card ("T" is drawn as "10"). */
export function rankText(code) {
  return code[0] === "T" ? "10" : code[0];
}

/** "QH" → "queen of hearts" (for screen readers and titles). */
export function cardName(code) {
  return `${RANK_NAME[code[0]] || code[0]} of ${SUIT_NAME[code[1]]}`;
}

export function isRed(code) {
  return code[1] === "H" || code[1] === "D";
}

/** A deep copy of a view (views are small). */
export function copyView(view) {
  return JSON.parse(JSON.stringify(view));
}

/** Parse canonical notation: {kind: "pile"|"found"|"take"|"redeal", from, n, to, suit}. */
export function parseMove(text) {
  let m;
  if (text === "redeal") return { kind: "redeal" };
  if ((m = /^(\d+)>f$/.exec(text))) return { kind: "found", from: +m[1], n: 1 };
  if ((m = /^f([SHDC])>(\d+)$/.exec(text))) return { kind: "take", suit: m[1], to: +m[2], n: 1 };
  if ((m = /^(\d+)(?::(\d+))?>(\d+)$/.exec(text))) {
    return { kind: "pile", from: +m[1], n: m[2] ? +m[2] : 1, to: +m[3] };
  }
  throw new Error(`bad notation ${text}`);
}

/** Apply (move, revealed) to a view in place; throws when it cannot apply (out of step). */
export function applyDiff(view, move, revealed) {
  const piles = view.tableau;
  const pile = (i) => {
    if (!(i >= 1 && i <= piles.length)) throw new Error(`no pile ${i}`);
    return piles[i - 1];
  };
  const mv = parseMove(move);
  if (mv.kind === "pile") {
    const src = pile(mv.from), dst = pile(mv.to);
    if (src.up.length < mv.n) throw new Error(`pile ${mv.from} has too few face-up cards`);
    dst.up.push(...src.up.splice(src.up.length - mv.n, mv.n));
  } else if (mv.kind === "found") {
    const src = pile(mv.from);
    if (!src.up.length) throw new Error(`pile ${mv.from} has no face-up card`);
    view.foundations[src.up.pop()[1]] += 1;
  } else if (mv.kind === "take") {
    const height = view.foundations[mv.suit];
    if (!height) throw new Error(`foundation ${mv.suit} is empty`);
    view.foundations[mv.suit] = height - 1;
    pile(mv.to).up.push(RANKS[height - 1] + mv.suit);
  } else {
    const all = piles.flatMap((p) => p.up);
    for (let i = 0; i < piles.length; i++) {
      piles[i] = { down: 0, up: all.slice(4 * i, 4 * i + 4) };
    }
    view.redeals_left -= 1;
  }
  for (const [p, code] of revealed || []) {
    const target = pile(p);
    if (target.up.length || !target.down) throw new Error(`cannot reveal on pile ${p}`);
    target.down -= 1;
    target.up = [code];
  }
  return view;
}

/** The state hash text of PROTOCOL.md "State hash". */
export function hashText(view) {
  const piles = view.tableau.map((p) => `${p.down}:${p.up.join("")}`);
  const f = view.foundations;
  return `${piles.join("|")}|F${f.S},${f.H},${f.D},${f.C}|R${view.redeals_left}`;
}

/** The 32-bit state hash (first 4 bytes of SHA-256 of hashText, big-endian). */
export async function stateHash(view) {
  const digest = await sha256(new TextEncoder().encode(hashText(view)));
  return new DataView(digest.buffer, digest.byteOffset).getUint32(0);
}

/** Cards on the foundations. */
export function progressOf(view) {
  const f = view.foundations;
  return f.S + f.H + f.D + f.C;
}
