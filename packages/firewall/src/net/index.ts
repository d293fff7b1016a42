// `@finger/firewall/net`: the address classification without the rest of the firewall (no shell
// parser, no tree-sitter), for the `web` module's SSRF gate — one classification for both.

export type { AddressClass, AddressKind, AddressPolicyOptions, AddressVerdict } from './address-class.js';
export { addressClass, AddressPolicy, canonicalAddress, classifyAddress, parseAddress } from './address-class.js';
