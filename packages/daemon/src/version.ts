import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    // src/ and dist/ both sit one level below the package root.
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Version of the daemon package (reported by /v1/health and daemon.json). */
export const VERSION: string = readVersion();
