// Prints the written-out BLAKE2s compression function of src/transport/nats-blake2s.ts (RFC 7693:
// ten rounds of eight G steps, columns then diagonals, message words in the order σ of each round).
// Usage: node packages/hub/scripts/gen-blake2s.mjs > /tmp/compress.ts, then paste over `compress`.
const SIGMA = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];
const G = [
  [0, 4, 8, 12],
  [1, 5, 9, 13],
  [2, 6, 10, 14],
  [3, 7, 11, 15],
  [0, 5, 10, 15],
  [1, 6, 11, 12],
  [2, 7, 8, 13],
  [3, 4, 9, 14],
];
const L = ['function compress(h: Int32Array, buf: Uint8Array, at: number, t: number, last: boolean): void {'];
for (let i = 0; i < 16; i++)
  L.push(
    `  const m${i} = buf[at + ${4 * i}]! | (buf[at + ${4 * i + 1}]! << 8) | (buf[at + ${4 * i + 2}]! << 16) | (buf[at + ${4 * i + 3}]! << 24);`,
  );
for (let i = 0; i < 8; i++) L.push(`  let v${i} = h[${i}]!;`);
L.push('  let v8 = IV0;', '  let v9 = IV1;', '  let v10 = IV2;', '  let v11 = IV3;', '  let v12 = IV4 ^ t;');
L.push('  let v13 = IV5;', '  let v14 = last ? ~IV6 : IV6;', '  let v15 = IV7;');
SIGMA.forEach((s, r) => {
  L.push(`  // round ${r + 1}`);
  G.forEach(([a, b, c, d], g) => {
    for (const [w, r1, r2] of [
      [s[2 * g], 16, 12],
      [s[2 * g + 1], 8, 7],
    ]) {
      L.push(`  v${a} = (v${a} + v${b} + m${w}) | 0;`, `  v${d} ^= v${a};`);
      L.push(`  v${d} = (v${d} >>> ${r1}) | (v${d} << ${32 - r1});`, `  v${c} = (v${c} + v${d}) | 0;`);
      L.push(`  v${b} ^= v${c};`, `  v${b} = (v${b} >>> ${r2}) | (v${b} << ${32 - r2});`);
    }
  });
});
for (let i = 0; i < 8; i++) L.push(`  h[${i}] = h[${i}]! ^ v${i} ^ v${i + 8};`);
L.push('}');
process.stdout.write(`${L.join('\n')}\n`);
