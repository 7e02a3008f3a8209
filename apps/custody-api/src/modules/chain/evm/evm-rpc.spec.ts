import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EvmRpc, loggableRpcUrl } from './evm-rpc';

describe('the EVM node URL in errors', () => {
  it('keeps scheme and host, hides a path, a query or credentials', () => {
    expect(loggableRpcUrl('https://mainnet.example.io/v3/0123abcd')).toBe(
      'https://mainnet.example.io/[REDACTED]',
    );
    expect(loggableRpcUrl('https://node.example?apikey=k')).toBe('https://node.example/[REDACTED]');
    expect(loggableRpcUrl('http://user:pw@127.0.0.1:8545')).toBe('http://127.0.0.1:8545/[REDACTED]');
    expect(loggableRpcUrl('http://127.0.0.1:8545')).toBe('http://127.0.0.1:8545');
    expect(loggableRpcUrl('not a url')).toBe('[REDACTED]');
  });

  let server: Server | undefined;
  afterEach(async () => {
    if (server) await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  });

  it('a failed call against a node whose URL carries a key never puts the key in the error', async () => {
    // A real HTTP node stand-in on loopback that answers every request with a 500.
    const node = createServer((_req, res) => res.writeHead(500).end('boom'));
    server = node;
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    const { port } = node.address() as AddressInfo;
    const rpc = new EvmRpc(`http://127.0.0.1:${port}/v3/secret-project-key`);
    const err = (await rpc.head().catch((e: unknown) => e)) as Error & { shortMessage?: string };
    expect(err).toBeInstanceOf(Error);
    const text = `${err.message} ${err.shortMessage ?? ''} ${String((err as { cause?: unknown }).cause ?? '')}`;
    expect(text).not.toContain('secret-project-key');
    expect(err.message).toContain(`http://127.0.0.1:${port}/[REDACTED]`);
  });
});
