// The websocket session: MessagePack frames (vendored @msgpack/msgpack), hello with the
// legal-moves opt-in, and reconnection. One Net per tab; the app gives it a handler.
import { Decoder, encode } from "./vendor/msgpack/index.mjs";

export const PROTOCOL_VERSION = 1;
export const CLIENT = "solrace-web/0.1";
// 64-bit integers (seeds, wall-clock ms) decode as BigInt; those a Number holds exactly
// become Numbers again, so only a seed above 2^53 stays a BigInt.
const decoder = new Decoder({ useBigInt64: true });
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function numbers(x) {
  if (typeof x === "bigint") return x <= SAFE && x >= -SAFE ? Number(x) : x;
  if (Array.isArray(x)) return x.map(numbers);
  if (x && typeof x === "object" && !(x instanceof Uint8Array)) {
    for (const key of Object.keys(x)) x[key] = numbers(x[key]);
  }
  return x;
}

/** Decode one server frame (ArrayBuffer) into a plain object. */
export function decodeFrame(buffer) {
  return numbers(decoder.decode(new Uint8Array(buffer)));
}

/** The websocket URL of this page's server (same host and port, same path as today). */
export function serverUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/`;
}

export class Net {
  /** ``onMessage(msg)`` gets every server message; ``onState(text)`` the link's state;
   * ``resumeHello()`` returns the hello to reconnect with (fresh or with a token). */
  constructor({ onMessage, onState, onDrop }) {
    this.onMessage = onMessage;
    this.onState = onState;
    this.onDrop = onDrop;
    this.ws = null;
    this.retries = 0;
    this.closedOnPurpose = false;
    this.clockOffset = 0; // server wall clock − Date.now()
  }

  /** Open a socket and send ``hello``; resolves once the socket is open. */
  connect(hello) {
    this.closedOnPurpose = false;
    if (this.ws) {
      this.ws.onclose = null;
      this.ws.close();
    }
    const ws = new WebSocket(serverUrl());
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.onState("connecting");
    return new Promise((resolve, reject) => {
      ws.onopen = () => {
        this.retries = 0;
        this.onState("online");
        this.send({ t: "hello", v: PROTOCOL_VERSION, c: CLIENT, lm: true, ds: true, ...hello }); // ds: spectator moves as one DS a tick
        resolve();
      };
      ws.onmessage = (event) => {
        if (typeof event.data === "string") return; // the protocol is binary only
        let msg;
        try {
          msg = decodeFrame(event.data);
        } catch (err) {
          console.warn("undecodable frame", err);
          return;
        }
        if (typeof msg.ts === "number" && (msg.t === "welcome" || msg.t === "countdown" || msg.t === "pong")) {
          this.clockOffset = msg.ts - Date.now();
        }
        this.onMessage(msg);
      };
      ws.onerror = () => reject(new Error("connection failed"));
      ws.onclose = () => {
        if (this.ws !== ws) return;
        this.ws = null;
        this.onState("offline");
        if (!this.closedOnPurpose) this.onDrop();
      };
    });
  }

  /** Milliseconds to wait before reconnect attempt number ``retries`` (with jitter). */
  backoff() {
    this.retries += 1;
    return Math.min(8000, 250 * 2 ** Math.min(this.retries, 5)) * (0.5 + Math.random() / 2);
  }

  send(message) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(encode(message));
      return true;
    }
    return false;
  }

  close() {
    this.closedOnPurpose = true;
    if (this.ws) this.ws.close();
  }

  /** The server's wall clock now (Unix ms), from the last welcome/countdown/pong. */
  serverNow() {
    return Date.now() + this.clockOffset;
  }
}
