import type { ModuleManifest } from '@finger/protocol';

/** A module a heartbeat could not carry, with the bytes of its manifest's JSON. */
export interface LeftOut {
  id: string;
  bytes: number;
}

/**
 * The JSON of a heartbeat `{node, modules}` of at most `maxBytes` UTF-8 bytes. When all the
 * manifests do not fit (NATS refuses a message over the server's `max_payload`, and a heartbeat
 * that never leaves makes every module of the node vanish from the cluster), the largest are
 * left out — as many modules as fit stay announced, in their order — and named in `leftOut`.
 */
export function fitHeartbeat(
  node: string,
  modules: readonly ModuleManifest[],
  maxBytes: number,
  /** The sender's heartbeat period, announced so that others judge its silence by it. */
  hb_ms?: number,
  /** The message's sequence number (cluster-registry.ts, RegistryMessage). */
  seq?: number,
): { json: string; leftOut: LeftOut[] } {
  const json = JSON.stringify({ node, hb_ms, seq, modules });
  if (Buffer.byteLength(json, 'utf8') <= maxBytes) return { json, leftOut: [] };
  const sized = modules.map((m) => ({ m, bytes: Buffer.byteLength(JSON.stringify(m), 'utf8') }));
  const bySize = [...sized].sort((a, b) => a.bytes - b.bytes);
  let total = Buffer.byteLength(JSON.stringify({ node, hb_ms, seq, modules: [] }), 'utf8');
  const kept = new Set<ModuleManifest>();
  const leftOut: LeftOut[] = [];
  for (const s of bySize) {
    const add = s.bytes + (kept.size > 0 ? 1 : 0); // the comma between two manifests
    if (total + add <= maxBytes) {
      kept.add(s.m);
      total += add;
    } else leftOut.push({ id: s.m.id, bytes: s.bytes });
  }
  leftOut.sort((a, b) => b.bytes - a.bytes);
  return { json: JSON.stringify({ node, hb_ms, seq, modules: modules.filter((m) => kept.has(m)) }), leftOut };
}
