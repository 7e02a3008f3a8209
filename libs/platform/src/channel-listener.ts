import { Logger } from '@nestjs/common';
import { Client } from 'pg';

/**
 * A Postgres LISTEN on one channel, on a connection of its own (a pool's would be held for good): `onNotify`
 * runs for each NOTIFY. A lost or failed connection is retried every second until `stop`; meanwhile the
 * caller's backstop poll does the work, so a wake is only ever a hint (decision 0403). The outbox relay, the
 * verification worker's step discovery and the custody worker's ApprovedStarts each LISTEN through one.
 */
export class ChannelListener {
  private readonly logger = new Logger(ChannelListener.name);
  private client: Client | null = null;
  private stopped = false;

  constructor(
    private readonly options: {
      databaseUrl: string;
      channel: string;
      applicationName: string;
      onNotify: () => void;
    },
  ) {}

  async start(): Promise<void> {
    const { databaseUrl, channel, applicationName, onNotify } = this.options;
    const client = new Client({ connectionString: databaseUrl, application_name: applicationName });
    client.on('notification', () => onNotify());
    client.on('error', (err: Error) => {
      this.logger.warn({ channel, err: err.message }, 'LISTEN connection lost; polling until it is back');
      this.client = null;
      client.end().catch(() => undefined);
      this.retry();
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${channel}"`);
      if (this.stopped) await client.end();
      else this.client = client;
    } catch (err) {
      this.logger.warn({ channel, err: (err as Error).message }, 'LISTEN failed; polling only');
      await client.end().catch(() => undefined);
      this.retry();
    }
  }

  private retry(): void {
    if (!this.stopped) setTimeout(() => void this.start().catch(() => undefined), 1000).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }
}
