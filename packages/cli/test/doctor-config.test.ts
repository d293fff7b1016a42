import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { tempDir } from '@finger/testkit';

import { doctorCheck } from './helpers.js';

// Issue 28 item 7: `myfinger doctor` said `config ok …/config/config.json` when that file did not
// exist. It now says the defaults are in use; with a file it names the file.

const configCheck = (home: string) => doctorCheck(home, 'config');

describe('doctor config check', () => {
  it('doctor reports config ok for a config.json that does not exist: says "no config file (defaults)"', async () => {
    await using home = await tempDir('finger-doctor-');
    expect(await configCheck(home.path)).toEqual({
      status: 'ok',
      detail: `no config file (defaults): ${join(home.path, 'config', 'config.json')} does not exist (cluster default)`,
    });
  });

  it('names the file when there is one', async () => {
    await using home = await tempDir('finger-doctor-');
    await mkdir(join(home.path, 'config'), { recursive: true });
    await writeFile(join(home.path, 'config', 'config.json'), JSON.stringify({ cluster: 'lab' }));
    expect(await configCheck(home.path)).toEqual({
      status: 'ok',
      detail: `${join(home.path, 'config', 'config.json')} (cluster lab)`,
    });
  });
});
