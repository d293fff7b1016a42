// Cloud instance-metadata endpoints (AWS/Azure/GCP/OpenStack 169.254.169.254, AWS IPv6
// fd00:ec2::254, ECS/EKS task credentials 169.254.170.2/.23, Alibaba 100.100.100.200, GCP
// metadata.google.internal): a request to one hands out the machine's cloud credentials. Hosts are
// compared after normalisation, so `0xa9fea9fe`, `2852039166`, `0251.0376.0251.0376`,
// `[::ffff:169.254.169.254]` and `METADATA.google.internal.` are the same address. All lexical.

/** IPv4 metadata addresses, as 32-bit numbers. */
const IPV4 = new Map<number, string>([
  [ipv4(169, 254, 169, 254), '169.254.169.254'],
  [ipv4(169, 254, 170, 2), '169.254.170.2'],
  [ipv4(169, 254, 170, 23), '169.254.170.23'],
  [ipv4(100, 100, 100, 200), '100.100.100.200'],
]);
/** IPv6 metadata addresses, fully expanded (8 groups of 4 hex digits). */
const IPV6 = new Map<string, string>([
  ['fd00:0ec2:0000:0000:0000:0000:0000:0254', 'fd00:ec2::254'],
  ['fd00:0ec2:0000:0000:0000:0000:0000:0023', 'fd00:ec2::23'],
]);
/** Metadata host names (lower case, no trailing dot); `metadata` (GCP) and `instance-data` (AWS) are short names. */
const NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);
/** Short names that only count in a URL (as a bare word they are too common). */
const SHORT_NAMES = new Set(['metadata', 'instance-data']);

function ipv4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
}

/** One inet_aton part: decimal, 0-octal or 0x-hex; NaN when it is none of them. */
function part(s: string): number {
  if (/^0x[0-9a-f]*$/i.test(s)) return s.length === 2 ? 0 : Number.parseInt(s.slice(2), 16);
  if (/^0[0-7]*$/.test(s)) return Number.parseInt(s, 8);
  if (/^[1-9][0-9]*$/.test(s)) return Number.parseInt(s, 10);
  return Number.NaN;
}

/** The 32-bit value of an IPv4 address in any inet_aton spelling (`a`, `a.b`, `a.b.c`, `a.b.c.d`), or null. */
export function parseIpv4(host: string): number | null {
  const parts = host.split('.');
  if (parts.length > 4 || parts.some((p) => p === '')) return null;
  const n = parts.map(part);
  if (n.some((x) => Number.isNaN(x))) return null;
  const last = n[n.length - 1] as number;
  const head = n.slice(0, -1);
  if (head.some((x) => x > 255) || last >= 2 ** (8 * (5 - n.length))) return null;
  let v = 0;
  head.forEach((x, i) => {
    v += x * 2 ** (8 * (3 - i));
  });
  return v + last;
}

/** An IPv6 address expanded to 8 groups of 4 hex digits (an embedded IPv4 tail becomes 2 groups), or null. */
export function expandIpv6(host: string): string | null {
  let h = host.toLowerCase();
  const zone = h.indexOf('%');
  if (zone >= 0) h = h.slice(0, zone);
  const v4 = /(?:^|:)(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (v4 !== null) {
    const n = parseIpv4(v4[1] as string);
    if (n === null) return null;
    h = `${h.slice(0, h.length - (v4[1] as string).length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  if (!/^[0-9a-f:]+$/.test(h) || !h.includes(':')) return null;
  const halves = h.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const left = groups(halves[0] as string);
  const right = halves.length === 2 ? groups(halves[1] as string) : [];
  const fill = 8 - left.length - right.length;
  if ((halves.length === 1 && fill !== 0) || fill < 0) return null;
  const all = [...left, ...Array<string>(halves.length === 2 ? fill : 0).fill('0'), ...right];
  if (all.length !== 8 || all.some((g) => g.length === 0 || g.length > 4)) return null;
  return all.map((g) => g.padStart(4, '0')).join(':');
}

/** The metadata endpoint a host names (as it is usually written), or null. */
export function metadataHost(rawHost: string): string | null {
  let host = rawHost.trim().toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.') && host.length > 1) host = host.slice(0, -1);
  if (host === '') return null;
  if (NAMES.has(host)) return host;
  const v4 = parseIpv4(host);
  if (v4 !== null) return IPV4.get(v4) ?? null;
  const v6 = expandIpv6(host);
  if (v6 === null) return null;
  const named = IPV6.get(v6);
  if (named !== undefined) return named;
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible forms reach the IPv4 address
  const m = /^0000:0000:0000:0000:0000:(?:ffff|0000):([0-9a-f]{4}):([0-9a-f]{4})$/.exec(v6);
  if (m === null) return null;
  return IPV4.get(Number.parseInt(`${m[1]}${m[2]}`, 16)) ?? null;
}

/** The host of a URL-ish word (`http://u@h:80/x`, `h:80/x`, `[v6]:80`, `h`), or null when it has none. */
function hostOf(word: string, bare: boolean): string | null {
  let w = word;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(w);
  if (scheme !== null) w = w.slice(scheme[0].length);
  else if (!bare) return null;
  w = w.replace(/[/?#].*$/s, '');
  const at = w.lastIndexOf('@');
  if (at >= 0) w = w.slice(at + 1);
  if (w.startsWith('[')) {
    const end = w.indexOf(']');
    return end < 0 ? null : w.slice(0, end + 1);
  }
  const colons = w.split(':').length - 1;
  if (colons === 1) w = w.slice(0, w.indexOf(':'));
  return w;
}

const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>()]+/gi;

/**
 * The metadata endpoint a word of a network command addresses: the word as a URL or a bare host
 * (`curl 169.254.169.254/latest`, `nc 169.254.169.254 80`), or any URL inside it
 * (`python3 -c "urlopen('http://169.254.169.254/')"` with `bare` false).
 */
export function metadataEndpointIn(word: string, bare: boolean): string | null {
  if (bare) {
    const h = hostOf(word, true);
    const m = h === null ? null : metadataHost(h);
    if (m !== null && (!SHORT_NAMES.has(m) || word.includes('://'))) return m;
    // an IPv4 literal inside an option value: `--resolve x:80:169.254.169.254`, `--connect-to ::a.b.c.d:`
    if (/\d[:,=@]|[:,=@]\d/.test(word)) {
      for (const part of word.split(/[:,=@/]/)) {
        const v4 = parseIpv4(part);
        const hit = v4 === null ? undefined : IPV4.get(v4);
        if (hit !== undefined) return hit;
      }
    }
  }
  for (const url of word.matchAll(URL_IN_TEXT)) {
    const h = hostOf(url[0], false);
    const m = h === null ? null : metadataHost(h);
    if (m !== null) return m;
  }
  return null;
}
