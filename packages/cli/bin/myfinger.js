#!/usr/bin/env node
// The `myfinger` command: a committed shim that loads the compiled CLI from ../dist.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('myfinger is not built; run npm install (or npm run build) in the repo\n');
  process.exit(1);
}
const { run } = await import(entry.href);
process.exitCode = await run(process.argv.slice(2));
