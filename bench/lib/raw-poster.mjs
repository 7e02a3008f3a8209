// The webhook-delivery baseline, as its own process like the dispatcher: raw undici HTTPS POSTs of a
// webhook-sized JSON body to the same receiver, `connections` at a time over keep-alive, no database, no
// signing, no queue. Driven over IPC: {type:'post', url, count, connections, caFile} → {type:'posted', seconds}.
// The agent of a connection count is kept from one call to the next, as the dispatcher keeps its connections:
// the TLS handshakes are paid by the warm-up call, not by every measured slice.
import { readFileSync } from 'node:fs';
import { requireFrom } from './proc.mjs';

const { Agent, request } = requireFrom('apps/webhook-dispatcher')('undici');

let agent = null;
let agentFor = '';

process.on('message', async (msg) => {
  if (msg?.type !== 'post') return;
  if (agentFor !== `${msg.url} ${msg.connections}`) {
    await agent?.close();
    agent = new Agent({ connect: { ca: readFileSync(msg.caFile) }, connections: msg.connections });
    agentFor = `${msg.url} ${msg.connections}`;
  }
  const body = JSON.stringify({
    type: 'balance.updated',
    timestamp: new Date().toISOString(),
    data: {
      vaultAccountId: crypto.randomUUID(),
      assetId: crypto.randomUUID(),
      entityId: crypto.randomUUID(),
    },
  });
  let next = 0;
  let failed = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < msg.count) {
      const i = next++;
      const res = await request(msg.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', 'webhook-id': `raw-${i}` },
        body,
      });
      await res.body.dump();
      if (res.statusCode !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: msg.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  process.send({ type: 'posted', seconds, failed });
});
// The IPC channel is this process's only work: keep it referenced (cpu-probe.cjs unrefs it).
process.channel?.ref();
process.send({ url: 'ipc' });
process.on('SIGTERM', () => process.exit(0));
