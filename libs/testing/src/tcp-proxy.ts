import { createServer, connect, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  url: (scheme: string) => string;
  /** Cuts every open connection and refuses new ones: the dependency becomes unreachable. */
  cut: () => void;
  /** Accepts connections again. */
  restore: () => void;
  /**
   * Stops forwarding what clients send (connections stay open, their bytes wait in the proxy): the dependency
   * is alive but takes nothing in, as a stalled one does.
   */
  hold: () => void;
  /** Forwards what clients sent meanwhile, and from then on. */
  release: () => void;
  close: () => Promise<void>;
}

/** A loopback proxy in front of a real service, so a test can make that service unreachable and bring it back. */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Map<Socket, Socket>();
  let open = true;
  let held = false;
  const server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    pairs.set(client, upstream);
    client.on('close', () => pairs.delete(client));
    upstream.pipe(client);
    if (held) client.pause();
    else client.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const cut = () => {
    open = false;
    for (const s of sockets) s.destroy();
  };
  return {
    port,
    url: (scheme) => `${scheme}://127.0.0.1:${port}`,
    cut,
    restore: () => {
      open = true;
    },
    hold: () => {
      held = true;
      for (const client of pairs.keys()) {
        client.unpipe();
        client.pause();
      }
    },
    release: () => {
      if (!held) return;
      held = false;
      for (const [client, upstream] of pairs) client.pipe(upstream);
    },
    close: async () => {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A loopback server that accepts connections and never answers (decision 0478): a Redis that is hung, or a port
 * where something else listens, as opposed to one where nothing does.
 */
export async function startSilentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
