/**
 * Turns a response body into what an agent can read, by content type: HTML → readable text
 * (scripts, styles and other non-content elements dropped), JSON → parsed value, other text →
 * text, anything else → base64. No I/O; large HTML is converted in a worker thread.
 */
import { createRequire } from 'node:module';

// html-to-text is loaded on the first HTML page, not when the daemon starts (idle memory).
const requireLazy = createRequire(import.meta.url);
let h2t: typeof import('html-to-text') | undefined;
const convert: typeof import('html-to-text').convert = (html, options) =>
  (h2t ??= requireLazy('html-to-text') as typeof import('html-to-text')).convert(html, options);

import { convertInWorker } from './html-worker.js';

/** How a body is presented. */
export type ContentKind = 'html' | 'json' | 'text' | 'binary';

/** The body fields of a fetch result. Exactly one of `text`, `json`, `base64` is set. */
export interface ConvertedBody {
  kind: ContentKind;
  title?: string;
  text?: string;
  json?: unknown;
  base64?: string;
  /** Set when the presentation differs from what the content type promised (e.g. truncated JSON). */
  note?: string;
}

const TEXT_TYPES = new Set([
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-javascript',
  'application/x-www-form-urlencoded',
  'application/x-ndjson',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/x-sh',
  'application/sql',
  'application/graphql',
]);

/** The lower-cased media type of a Content-Type header, without parameters. */
export function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** The `charset` parameter of a Content-Type header, if any. */
function charsetOf(contentType: string): string | undefined {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return m?.[1];
}

/** Picks the presentation from the media type; without one, sniffs for text. */
export function classify(contentType: string, body: Buffer): ContentKind {
  const mt = mediaType(contentType);
  if (mt === 'text/html' || mt === 'application/xhtml+xml') return 'html';
  if (mt === 'application/json' || mt === 'text/json' || mt.endsWith('+json')) return 'json';
  if (mt.startsWith('text/') || mt.endsWith('+xml') || TEXT_TYPES.has(mt)) return 'text';
  if (mt === '') return looksLikeText(body) ? 'text' : 'binary';
  return 'binary';
}

/** No NUL byte and valid UTF-8 in the first 4 KiB (the last few bytes may be a cut character). */
function looksLikeText(body: Buffer): boolean {
  const head = body.subarray(0, 4096);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, Math.max(0, head.length - 3)));
    return true;
  } catch {
    return false;
  }
}

/** Decodes with the declared charset (unknown labels fall back to UTF-8; bad bytes become U+FFFD). */
export function decodeText(body: Buffer, contentType: string): string {
  const label = charsetOf(contentType) ?? 'utf-8';
  try {
    return new TextDecoder(label).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

const SKIPPED = [
  'head',
  'title',
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'iframe',
  'object',
  'embed',
  'img',
];

/** HTML larger than this many characters is converted in a worker thread (see html-worker.ts). */
export const WORKER_THRESHOLD = 32 * 1024;

function htmlOptions(baseUrl: string): Record<string, unknown> {
  return {
    wordwrap: false,
    selectors: [
      ...SKIPPED.map((selector) => ({ selector, format: 'skip' })),
      { selector: 'a', options: { baseUrl, hideLinkHrefIfSameAsText: true } },
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
      { selector: 'table', format: 'dataTable' },
    ],
  };
}

/**
 * Readable text of an HTML document: headings, paragraphs, lists and tables kept; links shown as
 * `text [absolute url]`; the head (the title is reported apart), scripts, styles, images, inline
 * SVG, templates and frames dropped. Synchronous: for small documents and snippets.
 */
export function htmlToText(html: string, baseUrl: string): string {
  return convert(html, htmlOptions(baseUrl)).trim();
}

/**
 * {@link htmlToText} off the calling thread when the document is larger than
 * {@link WORKER_THRESHOLD}; rejects with `signal.reason` when the signal aborts first.
 */
export async function htmlToTextAsync(html: string, baseUrl: string, signal: AbortSignal): Promise<string> {
  if (html.length <= WORKER_THRESHOLD) return htmlToText(html, baseUrl);
  return (await convertInWorker(html, htmlOptions(baseUrl), signal)).trim();
}

/** The text of the first `<title>`, entities decoded; undefined when there is none. */
export function htmlTitle(html: string): string | undefined {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  if (m === null) return undefined;
  const t = convert(m[1] ?? '', { wordwrap: false })
    .replace(/\s+/g, ' ')
    .trim();
  return t === '' ? undefined : t;
}

/**
 * Converts a body for the result. `truncated` bodies are converted as far as they go, except JSON,
 * which cannot be parsed when cut: it is returned as text with a note. Large HTML is converted in a
 * worker thread that `signal` terminates.
 */
export async function convertBody(
  body: Buffer,
  contentType: string,
  finalUrl: string,
  truncated: boolean,
  signal: AbortSignal,
): Promise<ConvertedBody> {
  const kind = classify(contentType, body);
  if (kind === 'binary') return { kind, base64: body.toString('base64') };
  const text = decodeText(body, contentType);
  if (kind === 'html') {
    const out: ConvertedBody = { kind, text: await htmlToTextAsync(text, finalUrl, signal) };
    const title = htmlTitle(text);
    if (title !== undefined) out.title = title;
    return out;
  }
  if (kind === 'json') {
    if (truncated) return { kind, text, note: 'the JSON body was truncated, so it is returned as text, not parsed' };
    try {
      return { kind, json: JSON.parse(text) as unknown };
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return { kind, text, note: `the body is not valid JSON (${why}), so it is returned as text` };
    }
  }
  return { kind, text };
}
