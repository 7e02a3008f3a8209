import helmet from '@fastify/helmet';
import Fastify, { type FastifyInstance } from 'fastify';
import { addSecurityHeaders, securityHeaders, securityHeaderValues } from './security-headers';

/** The headers one GET answers (over a real socket), without those that differ per response anyway. */
async function headersOf(setup: (app: FastifyInstance) => Promise<void> | void, path: string) {
  const app = Fastify();
  await setup(app);
  app.get('/json', (_request, reply) => reply.send({ ok: true }));
  app.get('/own-csp', (_request, reply) =>
    reply.header('content-security-policy', "default-src 'self'").send(''),
  );
  app.get('/raw-csp', (_request, reply) => {
    reply.raw.setHeader('content-security-policy', "default-src 'self'");
    return reply.send('');
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const res = await fetch(`${url}${path}`);
    await res.arrayBuffer();
    const headers = Object.fromEntries(res.headers);
    for (const name of ['date', 'connection', 'keep-alive', 'content-length']) delete headers[name];
    return { status: res.status, headers };
  } finally {
    await app.close();
  }
}

describe('security headers computed once (decision 0106)', () => {
  const plugin = async (app: FastifyInstance) => {
    await app.register(helmet as never, securityHeaders as never);
  };
  const once = (app: FastifyInstance) => addSecurityHeaders(app, securityHeaderValues());

  it('answers exactly what @fastify/helmet answers: a route, a 404, routes that set their own CSP', async () => {
    for (const path of ['/json', '/missing', '/own-csp', '/raw-csp']) {
      const mine = await headersOf(once, path);
      expect(mine).toEqual(await headersOf(plugin, path));
      expect(Object.keys(mine.headers).length).toBeGreaterThan(8);
    }
  });

  it('holds the CSP, HSTS, framing, sniffing and referrer headers of decision 0012', () => {
    const headers = Object.fromEntries(securityHeaderValues());
    expect(headers['content-security-policy']).toContain("default-src 'none'");
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect(headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['cross-origin-embedder-policy']).toBeUndefined();
  });

  it('a route that sets one of them itself keeps its own value', async () => {
    for (const path of ['/own-csp', '/raw-csp']) {
      expect((await headersOf(once, path)).headers['content-security-policy']).toBe("default-src 'self'");
    }
  });
});
