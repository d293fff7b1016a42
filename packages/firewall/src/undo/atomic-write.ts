// Atomic writes live in `@finger/workspace` (issue 26 item 3); this name stays for the firewall's
// files that import it here (gate/abandoned-holds.ts).

export { atomicWriteFile } from '@finger/workspace';
