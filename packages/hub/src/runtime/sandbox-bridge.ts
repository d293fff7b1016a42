/**
 * The bridge the workspace-write sandbox starts before a command that may use the package
 * registries (run as `process.execPath -e SANDBOX_BRIDGE_CODE <socket> <command…>` inside
 * bubblewrap). The sandbox has its own network namespace with only loopback; the bridge listens
 * on 127.0.0.1 there (a port the kernel picks), forwards every connection to the daemon's
 * filtering proxy through the Unix socket bound in at `<socket>`, sets HTTP_PROXY, HTTPS_PROXY,
 * http_proxy, https_proxy, npm_config_proxy and npm_config_https_proxy to it (NO_PROXY and its
 * kin removed) and runs the command with them, exiting as the command did. Bounded: at most 64
 * connections, each closed after 120 s without traffic. Plain CommonJS for `node -e`: no file of
 * finger's needs to be visible inside the sandbox.
 */
export const SANDBOX_BRIDGE_CODE = `'use strict';
const net = require('node:net');
const os = require('node:os');
const { spawn } = require('node:child_process');
const [sock, file, ...args] = process.argv.slice(1);
const fail = (code, why) => { process.stderr.write('finger sandbox: ' + why + '\\n'); process.exit(code); };
if (!sock || !file) fail(125, 'the registry proxy bridge needs a socket and a command');
const server = net.createServer((c) => {
  const u = net.connect(sock);
  const end = () => { c.destroy(); u.destroy(); };
  c.setTimeout(120000, end);
  u.setTimeout(120000, end);
  c.on('error', end); u.on('error', end); c.on('close', end); u.on('close', end);
  c.pipe(u); u.pipe(c);
});
server.maxConnections = 64;
server.on('error', (e) => fail(125, 'the registry proxy bridge cannot listen: ' + e.message));
server.listen(0, '127.0.0.1', () => {
  const url = 'http://127.0.0.1:' + server.address().port;
  const env = { ...process.env };
  for (const k of ['NO_PROXY', 'no_proxy', 'npm_config_noproxy', 'NPM_CONFIG_NOPROXY', 'ALL_PROXY', 'all_proxy']) delete env[k];
  for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'npm_config_proxy', 'npm_config_https_proxy']) env[k] = url;
  const child = spawn(file, args, { stdio: 'inherit', env });
  const forward = (s) => () => { try { child.kill(s); } catch {} };
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, forward(s));
  child.on('error', (e) => fail(e.code === 'ENOENT' ? 127 : 126, 'cannot start ' + JSON.stringify(file) + ': ' + e.message));
  child.on('exit', (code, signal) => {
    server.close();
    if (signal) process.exit(128 + (os.constants.signals[signal] || 0));
    process.exit(code === null ? 1 : code);
  });
});
`;

/** Where the proxy's socket is bound inside the sandbox (/run is a private tmpfs there; /tmp where /run does not exist). */
export function bridgeSocketInside(privateDirs: readonly string[]): string {
  return privateDirs.includes('/run') ? '/run/finger-proxy.sock' : '/tmp/.finger-proxy.sock';
}
