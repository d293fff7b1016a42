// The hard-link snapshots of deleting commands live in `@finger/workspace` (issue 26 item 3); this
// name stays for the firewall's files that import them here (engine/firewall-engine.ts).

export type { LinkBounds, SnapshotWord } from '@finger/workspace';
export { LINK_DEFAULTS, planLinkSnapshot } from '@finger/workspace';
