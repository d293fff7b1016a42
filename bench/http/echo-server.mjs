// The bare peer of bench/http: fastify 5 with one route, `POST /echo`, answering the parsed JSON
// body as it came (no auth, no schema, no logging). Listens on 127.0.0.1 on a free port and
// prints `{"url": …}` on stdout; SIGTERM closes it.

import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/echo', async (req) => req.body);
await app.listen({ host: '127.0.0.1', port: 0 });
const { port } = app.server.address();
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
