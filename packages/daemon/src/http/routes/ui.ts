import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

import { ACCESS } from '../../auth/auth-hook.js';

/** Where `npm run build` puts the web console: `packages/web/dist`, from `packages/daemon/{src,dist}/http/routes/`. */
export const WEB_DIST_DIR = fileURLToPath(new URL('../../../../web/dist/', import.meta.url));

/** The headers of every `/ui` answer: no inline script or style, no framing, no referrer. */
export const UI_HEADERS = {
  'content-security-policy':
    "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
} as const;

/** A last path segment with a dot names a file (an asset); anything else is a route of the app. */
function isAsset(path: string): boolean {
  const last = path.split('/').pop() ?? '';
  return last.includes('.');
}

/**
 * The web console (public: the page holds no data, the API it calls is authenticated): `GET /ui`,
 * `/ui/` and every `/ui/<route>` answer `index.html` (the app routes itself), `/ui/<file>` the
 * file from `dir`, with the {@link UI_HEADERS}. When the app is not built (no `index.html`), 503
 * with a text saying to run `npm run build`.
 */
export async function uiRoutes(app: FastifyInstance, dir: string = WEB_DIST_DIR): Promise<void> {
  await app.register(fastifyStatic, { root: dir, serve: false, suppressWarning: true });
  const serve = async (path: string, reply: FastifyReply) => {
    reply.headers(UI_HEADERS);
    if (!existsSync(join(dir, 'index.html'))) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send(
          `finger's web console is not built: run \`npm run build\` in the finger repository (no index.html in ${dir}).\n`,
        );
    }
    if (isAsset(path)) return reply.header('cache-control', 'no-cache').sendFile(path);
    return reply.header('cache-control', 'no-store').sendFile('index.html');
  };
  const schema = { tags: ['ui'], summary: 'The web console (index.html for app routes, else the file)', hide: true };
  app.get('/ui', { config: { roles: ACCESS.public }, schema }, (_request, reply) => serve('', reply));
  app.get('/ui/*', { config: { roles: ACCESS.public }, schema }, (request, reply) =>
    serve((request.params as { '*': string })['*'], reply),
  );
}
