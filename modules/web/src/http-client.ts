/**
 * One HTTP(S) exchange on node:http, with the connection pinned to addresses checked beforehand
 * and the body read under a byte cap. No redirects, no policy: `fetch-tool.ts` and `search.ts`
 * build on it.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

import { canonicalAddress } from '@finger/net-address';

/** One resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** What {@link openRequest} needs. */
export interface OpenRequestParams {
  url: URL;
  method: 'GET' | 'HEAD';
  headers: Record<string, string>;
  signal: AbortSignal;
  /**
   * When set, the connection goes to these addresses only (whatever DNS says now), and a socket
   * that ends up connected anywhere else is destroyed. Unset for IP literals and trusted URLs.
   */
  pin?: readonly ResolvedAddress[];
}

/** The body of a response, read up to a cap. */
export interface BodyRead {
  body: Buffer;
  /** Bytes of the (decoded) body read, never more than the cap. */
  bytes: number;
  /** True when the body had more bytes than the cap; the rest was not read. */
  truncated: boolean;
  /** A content-encoding this client cannot decode (the body is then the raw bytes). */
  undecoded_encoding?: string;
}

/** The host of a URL without the brackets of an IPv6 literal. */
export function bareHostname(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** node calls `lookup` with `all: true` (an address list) or without (one address and family). */
type LookupCallback = (err: Error | null, address: string | ResolvedAddress[], family?: number) => void;

/** A `lookup` for net.connect that answers with the pinned addresses only. */
function pinnedLookup(pin: readonly ResolvedAddress[]): LookupFunction {
  return ((_hostname: string, options: { family?: number | string; all?: boolean }, callback: LookupCallback) => {
    const fam = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    const list = fam === 4 || fam === 6 ? pin.filter((a) => a.family === fam) : [...pin];
    if (list.length === 0) {
      const err = Object.assign(new Error(`no pinned address of family ${fam}`), { code: 'ENOTFOUND' });
      callback(err, options.all ? [] : '', 0);
      return;
    }
    if (options.all) {
      callback(null, list);
    } else {
      callback(null, list[0]!.address, list[0]!.family);
    }
  }) as unknown as LookupFunction;
}

/**
 * Sends the request and resolves with the response head (the body is not read yet). Rejects with
 * the socket or abort error as node reports it; the caller maps it to a finger code.
 */
export function openRequest(p: OpenRequestParams): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const mod = p.url.protocol === 'https:' ? https : http;
    const options: https.RequestOptions = {
      method: p.method,
      host: bareHostname(p.url),
      port: p.url.port === '' ? undefined : Number(p.url.port),
      path: `${p.url.pathname}${p.url.search}`,
      headers: p.headers,
      agent: false,
      signal: p.signal,
    };
    if (p.pin !== undefined) {
      options.lookup = pinnedLookup(p.pin);
    }
    let req: http.ClientRequest;
    try {
      req = mod.request(options, resolve);
    } catch (e) {
      reject(e);
      return;
    }
    req.on('error', reject);
    const pin = p.pin;
    if (pin !== undefined) {
      const allowed = new Set(pin.map((a) => canonicalAddress(a.address)));
      req.on('socket', (socket: Socket) => {
        socket.once('connect', () => {
          const remote = canonicalAddress(socket.remoteAddress ?? '');
          if (!allowed.has(remote)) {
            socket.destroy(new Error(`connected to ${remote}, which is not the checked address`));
          }
        });
      });
    }
    req.end();
  });
}

function decoderFor(encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.createGunzip();
  if (encoding === 'deflate') return zlib.createInflate();
  if (encoding === 'br') return zlib.createBrotliDecompress();
  return null;
}

/**
 * Reads the body (decoding gzip, deflate and br) until it ends or `maxBytes` decoded bytes are
 * in hand; past the cap it stops reading, destroys the response and reports `truncated: true`.
 * Rejects when the connection fails mid-body or `signal` aborts.
 */
export function readBody(res: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<BodyRead> {
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder = encoding === '' || encoding === 'identity' ? null : decoderFor(encoding);
  const undecoded = encoding !== '' && encoding !== 'identity' && decoder === null ? encoding : undefined;
  let stream: Readable = res;
  if (decoder !== null) {
    res.on('error', (e) => decoder.destroy(e));
    res.pipe(decoder);
    stream = decoder;
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    let done = false;
    const stop = () => {
      signal.removeEventListener('abort', onAbort);
      res.destroy();
      decoder?.destroy();
    };
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      stop();
      const out: BodyRead = { body: Buffer.concat(chunks, n), bytes: n, truncated };
      if (undecoded !== undefined) out.undecoded_encoding = undecoded;
      resolve(out);
    };
    const fail = (e: unknown) => {
      if (done) return;
      done = true;
      stop();
      reject(e);
    };
    const onAbort = () => fail(signal.reason);
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    stream.on('data', (chunk: Buffer) => {
      if (done) return;
      const room = maxBytes - n;
      if (chunk.length > room) {
        if (room > 0) {
          chunks.push(chunk.subarray(0, room));
          n += room;
        }
        finish(true);
        return;
      }
      chunks.push(chunk);
      n += chunk.length;
    });
    stream.on('end', () => finish(false));
    stream.on('error', fail);
    res.on('close', () => {
      if (!res.complete) fail(new Error('the connection closed before the body was complete'));
    });
  });
}
