// Whether text names finger's own daemon as a network peer: a URL or `host:port` whose host is a
// loopback alias (127.0.0.0/8 in any inet_aton spelling — `127.1`, `2130706433`, `0x7f.1`,
// `0177.0.0.1` —, `localhost`, `localhost.`, `*.localhost`, `::1`, `0.0.0.0`, `::`, IPv4-mapped
// `::ffff:127.0.0.1` / `::ffff:7f00:1`) or one of the daemon's own hosts, on one of its ports; a
// `/dev/tcp/HOST/PORT` path; `$FINGER_URL`; or a host and a port given apart to a network client
// (`nc 127.0.0.1 7770`, `socket.connect(("localhost", 7770))`). Lexical: no name is resolved.

import type { FingerSelf } from './finger-self.js';

/** The value of an IPv4 literal in any spelling inet_aton accepts, or null. */
function ipv4Value(host: string): number | null {
  const parts = host.split('.');
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    let v: number;
    if (/^0x[0-9a-f]*$/i.test(p)) v = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) v = parseInt(p, 8);
    else if (/^(?:0|[1-9]\d*)$/.test(p)) v = Number(p);
    else return null;
    if (!Number.isFinite(v)) return null;
    nums.push(v);
  }
  const last = nums.length - 1;
  let value = 0;
  for (let i = 0; i < last; i++) {
    if (nums[i]! > 255) return null;
    value = value * 256 + nums[i]!;
  }
  const room = 2 ** (8 * (4 - last));
  if (nums[last]! >= room) return null;
  return value * room + nums[last]!;
}

/** 127.0.0.0/8 or 0.0.0.0 (which connects to this machine). */
function localV4(v: number): boolean {
  return Math.floor(v / 2 ** 24) === 127 || v === 0;
}

/** The eight 16-bit groups of an IPv6 literal (a dotted IPv4 tail allowed), or null. */
function ipv6Groups(host: string): number[] | null {
  let h = host.replace(/%.*$/, '');
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (tail !== null) {
    const v = ipv4Value(tail[1]!);
    if (v === null) return null;
    h = `${h.slice(0, tail.index)}${Math.floor(v / 65536).toString(16)}:${(v % 65536).toString(16)}`;
  }
  const halves = h.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const a = parse(halves[0]!);
  const b = halves.length === 2 ? parse(halves[1]!) : [];
  if (a === null || b === null) return null;
  if (halves.length === 1) return a.length === 8 ? a : null;
  const fill = 8 - a.length - b.length;
  if (fill < 1) return null;
  return [...a, ...new Array<number>(fill).fill(0), ...b];
}

/** Whether `host` (brackets and a trailing dot allowed) is this machine by a loopback or wildcard alias. */
export function isLoopbackHost(host: string): boolean {
  let h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h.endsWith('.') && h.length > 1) h = h.slice(0, -1);
  if (h === 'localhost' || h.endsWith('.localhost') || h === 'localhost.localdomain' || h === 'ip6-localhost')
    return true;
  if (h.includes(':')) {
    const g = ipv6Groups(h);
    if (g === null) return false;
    const zeros = g.slice(0, 5).every((x) => x === 0);
    if (zeros && g[5] === 0 && g[6] === 0 && (g[7] === 0 || g[7] === 1)) return true; // ::, ::1
    if (zeros && (g[5] === 0xffff || g[5] === 0)) return localV4(g[6]! * 65536 + g[7]!); // ::ffff:a.b.c.d
    return false;
  }
  const v = ipv4Value(h);
  return v !== null && localV4(v);
}

/** A loopback literal somewhere in a text (a code string): `127.0.0.1`, `localhost`, `::1`, `0.0.0.0`. */
const LOOPBACK_IN_TEXT =
  /(?<![\w.])(?:127(?:\.\d{1,3}){1,3}|localhost|0\.0\.0\.0|::1|0x7f[0-9a-f.]*|2130706433)(?![\w])/i;

/** The host just before `:PORT` at `at` (the index of the colon), bracketed IPv6 included. */
function hostBefore(text: string, at: number): string {
  if (text[at - 1] === ']') {
    const open = text.lastIndexOf('[', at - 1);
    return open < 0 ? '' : text.slice(open, at);
  }
  let k = at;
  while (k > 0 && /[A-Za-z0-9._%-]/.test(text[k - 1]!)) k--;
  return text.slice(k, at);
}

/**
 * The daemon address `text` names (for the reason), or null: `host:PORT` with a loopback or own
 * host, a URL on a default port the daemon listens on, `/dev/tcp/HOST/PORT`, or `$FINGER_URL`.
 */
export function daemonAddressIn(text: string, self: FingerSelf): string | null {
  if (/\$\{?FINGER_URL\b/.test(text)) return '$FINGER_URL';
  const own = (h: string): boolean => isLoopbackHost(h) || self.hosts.includes(h.toLowerCase().replace(/^\[|\]$/g, ''));
  for (const port of self.ports) {
    const p = String(port);
    if (!text.includes(p)) continue;
    const re = new RegExp(`:0*${p}(?!\\d)`, 'g');
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const host = hostBefore(text, m.index);
      if (host !== '' && own(host)) return `${host}:${port}`;
    }
    const dev = new RegExp(`/dev/(?:tcp|udp)/([^/\\s'"]+)/0*${p}(?!\\d)`).exec(text);
    if (dev !== null && own(dev[1]!)) return dev[0];
  }
  // a URL without a port, where the daemon listens on the scheme's default one
  if (self.ports.includes(80) || self.ports.includes(443)) {
    const url = /\b(https?|wss?):\/\/(?:[^/@\s'"]*@)?(\[[^\]\s]*\]|[^/:?#\s'"\\]+)(?![:\w.-])/gi;
    for (let m = url.exec(text); m !== null; m = url.exec(text)) {
      const port = /^(?:https|wss)$/i.test(m[1]!) ? 443 : 80;
      if (self.ports.includes(port) && own(m[2]!)) return m[0];
    }
  }
  return null;
}

/**
 * A host and one of the daemon's ports given apart among a command's words (`nc 127.0.0.1 7770`,
 * `telnet localhost 7770`, `python -c 'connect(("127.0.0.1", 7770))'`): the pair, or null.
 */
export function daemonPairIn(words: readonly string[], self: FingerSelf): string | null {
  const ports = self.ports.map(String);
  const portAt = words.findIndex((w) => ports.some((p) => new RegExp(`(?<![\\d.:])0*${p}(?![\\d.])`).test(w)));
  if (portAt < 0) return null;
  for (const w of words) {
    if (isLoopbackHost(w) || self.hosts.includes(w.toLowerCase())) return `${w} ${words[portAt]}`;
    const inText = LOOPBACK_IN_TEXT.exec(w);
    if (inText !== null) return `${inText[0]} and ${words[portAt]}`;
  }
  return null;
}
