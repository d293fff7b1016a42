// `@finger/net-address`: the one classification of network addresses (loopback, private, link-local,
// cloud metadata…) and the operator's AddressPolicy, shared by the firewall (a URL argument that
// reaches a non-global address is held) and the `web` module's SSRF gate (it refuses to connect to
// one). Pure logic: no I/O, no state, no other workspace package.

export type { AddressClass, AddressKind, AddressPolicyOptions, AddressVerdict } from './address-class.js';
export { addressClass, AddressPolicy, canonicalAddress, classifyAddress, parseAddress } from './address-class.js';
export { expandIpv6, metadataEndpointIn, metadataHost, parseIpv4 } from './cloud-metadata.js';
