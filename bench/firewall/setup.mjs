// What the firewall bench's processes share: the agent principal, the admin policy of 200 rules
// and the clock that keeps the loop detector quiet (see README.md).

export const AGENT = Object.freeze({ kind: 'agent', id: 'bench-agent', roles: ['agent:executor'] });

/** An admin policy of 200 rules of the shapes an admin writes, spread over shell, fs, web and MCP tools. */
export function policy200() {
  const rules = [];
  const deny = [
    'rm -rf *',
    'git push --force *',
    'git reset --hard *',
    'chmod -R 777 *',
    'chown -R *',
    'dd of=/dev/* *',
    'mkfs*',
    'docker rm -f *',
    'docker system prune *',
    'kubectl delete *',
    'terraform destroy *',
    'npm publish *',
    'curl -o /etc/* *',
    'shutdown *',
    'reboot *',
    'iptables *',
    'crontab -r *',
    'git clean -fdx *',
    'truncate *',
    'shred *',
  ];
  deny.forEach((c, i) => rules.push({ id: `deny-${i}`, tool: 'shell.exec', match: { command: c }, level: 'DENY' }));
  for (let i = 0; rules.length < 80; i++)
    rules.push({
      id: `hold-${i}`,
      tool: 'shell.exec',
      match: { command: `tool${i} --flag${i} *` },
      level: i % 2 ? 'CONFIRM' : 'APPROVE',
    });
  const allow = [
    'npm test',
    'npm run lint',
    'npm run build',
    'make check',
    'pytest -q',
    'cargo test',
    'go test ./...',
    'tsc -b',
    'prettier --check .',
    'eslint .',
  ];
  for (let i = 0; rules.length < 100; i++)
    rules.push({
      id: `allow-${i}`,
      tool: 'shell.exec',
      match: { command: i < allow.length ? allow[i] : `task${i} run` },
      level: 'AUTO',
    });
  const paths = [
    '~/.ssh/**',
    '~/.aws/**',
    '~/.gnupg/**',
    '/etc/**',
    '**/.env',
    '**/*.pem',
    '~/.bashrc',
    '/usr/**',
    '/var/**',
    '**/.git/hooks/**',
  ];
  paths.forEach((p, i) => rules.push({ id: `path-${i}`, tool: 'fs.*', match: { path: p }, level: 'DENY' }));
  for (let i = 0; rules.length < 160; i++)
    rules.push({ id: `data-${i}`, tool: 'fs.*', match: { path: `/srv/data${i}/**` }, level: 'CONFIRM' });
  for (let i = 0; rules.length < 180; i++)
    rules.push({
      id: `web-${i}`,
      tool: 'web.fetch',
      match: { url: `https://*.internal${i}.corp/*` },
      level: 'CONFIRM',
    });
  for (let i = 0; rules.length < 200; i++) rules.push({ id: `mcp-${i}`, tool: `mcp.server${i}.*`, level: 'APPROVE' });
  return { version: 1, rules };
}

/**
 * A clock that moves past the behaviour window on every read: the bench measures the AUTO path,
 * not the loop detector tripping on its own repetition. The time is a field of the clock object
 * (a double kept in place) rather than a closure variable (a new heap number and a write barrier
 * per read): the daemon's engine reads no clock at all on this path (`time_from_call`), so the
 * stand-in should cost as little as it can.
 */
export function advancingClock() {
  return {
    t: Date.now(),
    now() {
      return (this.t += 61_000);
    },
  };
}

/**
 * The hub of the isolated rows in `home`: MessageHub + the echo module with no interceptor
 * (`off`), a no-op one (`noop`) or the firewall interceptor under the 200-rule admin policy (`on`).
 * `fw`, `hubPkg`: the built packages (importBuilt).
 */
export async function isolatedHub(mode, home, fw, hubPkg, repoRoot) {
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  mkdirSync(join(home, 'config'));
  writeFileSync(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy200()));
  const hub = new hubPkg.MessageHub({
    events: new hubPkg.LocalEventBus({ store: new hubPkg.FileEventStore({ dir: join(home, 'events') }) }),
  });
  await hub.registry.loadFile(join(repoRoot, 'modules', 'echo', 'module.json'));
  if (mode === 'noop') hub.use((_call, next) => next());
  if (mode === 'on') {
    const assessor = await fw.RiskAssessor.create();
    const store = fw.PolicyStore.load({ home, homeDir: home, assessor });
    if (store.current().admin.rules.length !== 200) throw new Error('the policy does not hold 200 rules');
    const engine = new fw.FirewallEngine({
      policy: store,
      risk: assessor,
      sandbox: new fw.PathSandbox({ workspaceRoots: [home], home, homeDir: home }),
      clock: advancingClock(),
    });
    hub.use(
      fw.createFirewallInterceptor({ engine, tools: { get: (id) => hub.tools.metadata(id) }, events: hub.events }),
    );
  }
  return hub;
}
