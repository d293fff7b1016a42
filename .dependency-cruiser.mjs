// Layering of the finger monorepo (docs/architecture.md "Packages"; issue 26 item 4), checked by
// dependency-cruiser 17 in `npm run lint` (`npm run lint:deps`). The arrows below are the only
// package-to-package imports allowed; every other one, a runtime import cycle inside a package, a
// module importing the firewall or a package's internals, fails the lint. Type-only imports count
// for layering (the package must still be a dependency) but not for cycles (they vanish at run time).
// The CLI's offline admin tools are the one named exception (CLI_OFFLINE_TOOLS below). A violation
// that must be tolerated while an item of issue 26 removes it would be listed in
// .dependency-cruiser-known-violations.json (`--ignore-known`; empty since issue 26 item 3) and
// docs/architecture.md "Layering rules"; any other fails.
/**
 * Which workspace packages each package may import (its own files always). Deny by default: a
 * package missing here may import no other package. `name/entry` allows one entry point only
 * (the CLI starts the daemon through `@finger/daemon/main` and imports nothing else of it).
 * `modules` is every tool module under modules/*: it may not import another module either.
 */
export const LAYERS = {
  protocol: [],
  // the address classification of the firewall and the web module's SSRF gate: pure, no I/O
  'net-address': [],
  // atomic writes, workspace paths, undo: what the fs module and the firewall both use
  workspace: ['protocol'],
  'module-sdk': ['protocol'],
  // the shell risk assessor; the cloud metadata endpoints it knows are the web module's too (net-address)
  'shell-risk': ['protocol', 'net-address'],
  firewall: ['protocol', 'net-address', 'workspace', 'shell-risk'],
  hub: ['protocol', 'module-sdk'],
  agents: ['protocol', 'hub', 'firewall'],
  daemon: ['protocol', 'module-sdk', 'shell-risk', 'hub', 'firewall', 'agents'],
  // a client of the daemon's HTTP/WebSocket API; its offline admin tools may import more (CLI_OFFLINE_TOOLS)
  cli: ['protocol', 'daemon/main'],
  // test fixtures (a daemon on a temp home, clients): anything below the CLI
  testkit: ['protocol', 'module-sdk', 'hub', 'firewall', 'agents', 'daemon'],
  // the browser app declares the wire types it needs; it imports no server package
  web: [],
  // a module's types (tool call context, factory options, manifest, stdio lines) come from the
  // module SDK; `hub` stays for the runtime helpers a process-running module needs from its public
  // index (modules/shell: Sandbox, sandboxInit, killSandbox, findProgram…), never its internals
  modules: ['protocol', 'module-sdk', 'net-address', 'workspace', 'hub'],
};

/**
 * The CLI's offline admin tools: the commands that do their work without a running daemon — on a
 * policy file, the audit log's files, the configuration and the NATS/Redis it names, a model's
 * answer — or that are a process of their own (a module's NATS serve host). Each imports the
 * package that owns what it reads rather than asking a daemon that may not run (or that it must
 * not trust: `audit verify` checks the daemon's own log). Exactly these files (under
 * packages/cli/src/), each with what it may import beyond LAYERS.cli, and only lazily — an
 * `await import(…)` in the action, or `import type` — so no other command, nor its `--help`, loads
 * them. Every other CLI command is a client of the daemon's HTTP/WebSocket API.
 */
export const CLI_OFFLINE_TOOLS = {
  // policy check: evaluates the policy files as the daemon would (show/set/reset speak HTTP)
  'commands/policy.ts': ['firewall'],
  // audit verify / archive / acknowledge: the audit log's hash chain, on its files
  'commands/audit.ts': ['firewall'],
  // audit heads: the chain heads kept in Redis (the daemon's config names it)
  'commands/audit-heads.ts': ['firewall', 'daemon', 'hub/redis'],
  // doctor: the configuration, NATS and Redis, checked the way the daemon would reach them
  'commands/doctor.ts': ['daemon', 'hub'],
  // module serve: a module's NATS serve host, a process of its own
  'commands/module-serve.ts': ['hub'],
  // router parse: the agents' JSON guardrail over a model's answer
  'commands/router.ts': ['agents'],
};

const alt = (names) => `(${names.join('|')})`;
const ENTRY = '\\.(ts|js|d\\.ts)$';
/** The path patterns of what `allowed` (a LAYERS list) lets a package import. */
const allowedPaths = (allowed) =>
  allowed.map((a) => {
    const [name, entry] = a.split('/');
    return entry ? `^packages/${name}/(src|dist)/${entry}${ENTRY}` : `^packages/${name}/`;
  });
const describe = (allowed) =>
  allowed.length === 0 ? 'no other workspace package' : allowed.map((a) => `@finger/${a}`).join(', ');

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const OFFLINE_FILES = Object.keys(CLI_OFFLINE_TOOLS).map((f) => `^packages/cli/src/${escape(f)}$`);

/** Each offline admin tool imports what LAYERS.cli and its own entry allow, and that lazily. */
const offlineRules = Object.entries(CLI_OFFLINE_TOOLS).flatMap(([file, extra]) => [
  {
    name: 'cli-offline-tool',
    comment: `packages/cli/src/${file}, an offline admin tool, may import ${describe([...LAYERS.cli, ...extra])} (CLI_OFFLINE_TOOLS)`,
    severity: 'error',
    from: { path: `^packages/cli/src/${escape(file)}$` },
    to: {
      path: '^(packages|modules)/[^/]+/',
      pathNot: ['^packages/cli/', ...allowedPaths([...LAYERS.cli, ...extra])],
    },
  },
  {
    name: 'cli-offline-lazy',
    comment: `packages/cli/src/${file} loads ${describe(extra)} lazily (await import, or import type): other commands never load them`,
    severity: 'error',
    from: { path: `^packages/cli/src/${escape(file)}$` },
    to: { path: allowedPaths(extra), dependencyTypesNot: ['dynamic-import', 'type-only'] },
  },
]);

const layerRules = Object.entries(LAYERS).map(([name, allowed]) => {
  const modules = name === 'modules';
  return {
    name: `layer-${name}`,
    comment: modules
      ? `a module (modules/*) may import ${describe(allowed)} only — not @finger/firewall, the daemon or another module`
      : `packages/${name} may import ${describe(allowed)} (docs/architecture.md "Packages")`,
    severity: 'error',
    from:
      name === 'cli'
        ? { path: '^packages/cli/', pathNot: OFFLINE_FILES }
        : { path: modules ? '^modules/([^/]+)/' : `^packages/${name}/` },
    to: {
      path: '^(packages|modules)/[^/]+/',
      pathNot: [modules ? '^modules/$1/' : `^packages/${name}/`, ...allowedPaths(allowed)],
    },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    ...layerRules,
    ...offlineRules,
    {
      name: 'layer-unlisted',
      comment: 'a package not in LAYERS of .dependency-cruiser.mjs may import no other package (deny by default)',
      severity: 'error',
      from: { path: `^packages/(?!${alt(Object.keys(LAYERS))}/)([^/]+)/` },
      to: { path: '^(packages|modules)/[^/]+/', pathNot: '^packages/$2/' },
    },
    {
      name: 'no-internals',
      comment:
        "another package is imported through its entry points (package.json exports: src/index.ts, the hub's " +
        'nats/redis, the daemon main, the testkit core), never by a path into its files',
      severity: 'error',
      from: { path: '^(packages|modules)/([^/]+)/' },
      to: {
        path: '^(packages|modules)/[^/]+/',
        pathNot: [
          '^$1/$2/',
          '^packages/[^/]+/(src|dist)/index\\.(ts|js|d\\.ts)$',
          '^packages/hub/(src|dist)/(nats|redis)\\.(ts|js|d\\.ts)$',
          '^packages/daemon/(src|dist)/main\\.(ts|js|d\\.ts)$',
          '^packages/testkit/(src|dist)/core\\.(ts|js|d\\.ts)$',
        ],
      },
    },
    {
      name: 'no-runtime-cycle',
      comment: 'a runtime import cycle inside a package (type-only imports do not count)',
      severity: 'error',
      from: { path: '^(packages|modules)/[^/]+/src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that does not resolve (a typo, or a package that is not installed)',
      severity: 'error',
      from: { path: '^(packages|modules)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // packages/*/src and modules/*/src only (tests are exempt; a package resolved through
    // node_modules to its dist/ still counts as that package); @finger/* that do not resolve stay in
    // the graph so not-to-unresolvable reports them
    includeOnly: '^(packages|modules)/[^/]+/(src|dist)/|^@finger/',
    exclude: { path: '(^|/)(node_modules|test)/' },
    doNotFollow: { path: ['node_modules', '/dist/'] },
    tsPreCompilationDeps: true,
    // @finger/* resolve to their src/ as in vitest and the test typecheck; one not mapped there
    // resolves through node_modules to packages/<name>/dist/, which the rules match as well
    tsConfig: { fileName: 'tsconfig.test.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: {
      archi: { collapsePattern: '^(packages|modules)/[^/]+' },
      text: { highlightFocused: true },
    },
  },
};
