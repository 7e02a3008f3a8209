import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A name's records, or NXDOMAIN, or no answer at all (a DNS server that hangs). */
export type Zone = Record<
  string,
  { a?: string[]; aaaa?: string[]; delayMs?: number } | 'nxdomain' | 'silent'
>;

const TYPE_A = 1;
const TYPE_AAAA = 28;

/**
 * A DNS server on a loopback UDP port answering A and AAAA queries from a fixed zone (unknown names:
 * NXDOMAIN), so the resolver's real network path runs without any network beyond this machine.
 */
export class TestDnsServer {
  private socket!: Socket;
  /** Every question asked, as `name type`. */
  readonly queries: string[] = [];

  constructor(private readonly zone: Zone) {}

  async start(): Promise<void> {
    this.socket = createSocket('udp4');
    this.socket.on('message', (msg, peer) => this.answer(msg, peer.address, peer.port));
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
  }

  /** host:port, for `dnsResolver({ servers })`. */
  get server(): string {
    return `127.0.0.1:${(this.socket.address() as AddressInfo).port}`;
  }

  private answer(msg: Buffer, host: string, port: number): void {
    let at = 12;
    const labels: string[] = [];
    while (msg[at] !== 0) {
      labels.push(msg.subarray(at + 1, at + 1 + msg[at]!).toString('ascii'));
      at += 1 + msg[at]!;
    }
    const type = msg.readUInt16BE(at + 1);
    const question = msg.subarray(12, at + 5);
    const name = labels.join('.').toLowerCase();
    this.queries.push(`${name} ${type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : type}`);
    const entry = this.zone[name];
    if (entry === 'silent') return;
    const found = entry !== undefined && entry !== 'nxdomain';
    const addresses = !found
      ? []
      : ((type === TYPE_A ? entry.a : type === TYPE_AAAA ? entry.aaaa : []) ?? []);
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0); // the query's id
    header.writeUInt16BE(0x8180 | (found ? 0 : 3), 2); // a response, recursion available; NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const records = addresses.map((address) => {
      const data = Buffer.from(ipaddr.parse(address).toByteArray());
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the question's name
      record.writeUInt16BE(type, 2);
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    const reply = Buffer.concat([header, question, ...records]);
    const delayMs = found ? (entry.delayMs ?? 0) : 0;
    // A slow server's late answer; dropped when the server has stopped meanwhile.
    if (delayMs > 0) setTimeout(() => this.socket.send(reply, port, host, () => undefined), delayMs).unref();
    else this.socket.send(reply, port, host);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}
