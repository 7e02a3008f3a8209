import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import {
  MEDIA_RPC,
  type MediaListRequest,
  mediaListReplySchema,
  type MediaResource,
  mediaResourceSchema,
  type MediaSlot,
  SDK_ERROR_CODES,
  type UploadLabels,
} from '@tessera/contracts';
import { APP_CONFIG, AppException, RpcClient } from '@tessera/platform';
import { Agent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { Env } from '../../config/env';

export interface MediaKey {
  productId: string;
  applicantId: string;
  enrollmentId: string;
  slot: MediaSlot;
  seq: number;
}

export interface MediaTarget {
  productId: string;
  applicantId: string;
  enrollmentId: string;
  slot: MediaSlot;
  labels: UploadLabels;
}

const mediaTimeout = () => new AppException(504, 'Media storage did not answer in time');

/**
 * A staged upload that expired before it was recorded (decisions 0460, 0464): nothing is recorded, and the same
 * file can be sent again at once. Named `upload_expired` in `X-Error-Code`, with `Retry-After: 0`, so a client
 * tells it from any other 503 (decision 0469).
 */
const uploadExpired = () =>
  new AppException(
    503,
    'The upload expired before it was recorded: send the file again',
    undefined,
    SDK_ERROR_CODES.uploadExpired,
    0,
  );

/** Headers of a bytes answer that are relayed to the partner unchanged. */
const RELAYED = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'];

/** An upload media-store holds the bytes of but has not recorded yet (decision 0457): commit or discard it. */
export interface StagedUpload {
  target: MediaTarget;
  ticket: string;
}

const stagedReplySchema = z.object({ ticket: z.string() });

/**
 * The partner's `Range`, `If-Range` and `If-None-Match`, passed through to media-store, which serves the range
 * only while `If-Range` (when sent) names the upload's ETag or Last-Modified (RFC 9110 §13.1.5; decision 0479),
 * and answers 304 when `If-None-Match` names its ETag (§13.1.2; decision 0487).
 */
export const CONDITIONAL_HEADERS = ['range', 'if-range', 'if-none-match'] as const;
export type ConditionalHeaders = Partial<Record<(typeof CONDITIONAL_HEADERS)[number], string>>;

export interface MediaBytes {
  status: number;
  headers: Record<string, string>;
  /** The body (absent for HEAD, 304 and 416); the caller must consume or destroy it. */
  body?: IncomingMessage;
}

/**
 * The only code that talks to media-store: metadata over Redis RPC (`media.resources.list.v1`), bytes over
 * its internal HTTP API with INTERNAL_SERVICE_TOKEN. Bodies are streamed both ways, never buffered whole.
 */
@Injectable()
export class ResourcesRepository implements OnModuleDestroy {
  private readonly base: URL;
  private readonly agent: Agent;

  constructor(
    private readonly rpc: RpcClient,
    @Inject(APP_CONFIG) private readonly env: Env,
  ) {
    this.base = new URL(env.MEDIA_STORE_URL.replace(/\/+$/, '') + '/');
    this.agent =
      this.base.protocol === 'https:'
        ? new HttpsAgent({ keepAlive: true, maxSockets: env.MEDIA_STORE_MAX_SOCKETS })
        : new Agent({ keepAlive: true, maxSockets: env.MEDIA_STORE_MAX_SOCKETS });
  }

  onModuleDestroy(): void {
    this.agent.destroy();
  }

  async list(request: MediaListRequest): Promise<MediaResource[]> {
    return (await this.rpc.send(MEDIA_RPC.LIST, request, mediaListReplySchema)).items;
  }

  /** GET or HEAD of one upload's bytes, with the partner's conditional headers passed through. */
  async open(
    key: MediaKey,
    method: 'GET' | 'HEAD',
    conditional: ConditionalHeaders = {},
  ): Promise<MediaBytes> {
    const url = this.url(`${key.enrollmentId}/${key.slot}/${key.seq}`, {
      productId: key.productId,
      applicantId: key.applicantId,
    });
    // If-Range means nothing without a Range.
    const { 'if-range': ifRange, ...headers } = conditional;
    const sent = conditional.range && ifRange ? { ...headers, 'if-range': ifRange } : headers;
    const response = await this.send(url, method, sent);
    const relayed: Record<string, string> = {};
    for (const name of RELAYED) {
      const value = response.headers[name];
      if (typeof value === 'string') relayed[name] = value;
    }
    const status = response.statusCode ?? 502;
    if ([200, 206, 304, 416].includes(status)) {
      if (method === 'HEAD' || status === 304 || status === 416) {
        response.resume();
        return { status, headers: relayed };
      }
      return { status, headers: relayed, body: response };
    }
    throw await this.failure(response);
  }

  /**
   * Streams `body` into media-store as a staged upload (decision 0457). The PUT ends when `done` resolves
   * (media-store then keeps the bytes, unrecorded, and answers their ticket) and is destroyed when `done` rejects
   * or `body` fails (media-store stores nothing). media-store's 415/413/409/400 come back as the same status
   * and message.
   */
  stage(target: MediaTarget, body: Readable, done: Promise<void>): Promise<StagedUpload> {
    const query: Record<string, string> = { productId: target.productId, applicantId: target.applicantId };
    for (const [name, value] of Object.entries(target.labels)) if (value !== undefined) query[name] = value;
    const url = this.url(`${target.enrollmentId}/${target.slot}/staged`, query);
    return new Promise<StagedUpload>((resolve, reject) => {
      // Idle while we wait for media-store (it stopped reading, or has the whole body): its fault; otherwise
      // the client's bytes stopped coming.
      const request = this.request(url, 'PUT', { 'content-type': 'application/octet-stream' }, () =>
        request.writableEnded || request.writableNeedDrain
          ? mediaTimeout()
          : new AppException(408, 'The upload stalled'),
      );
      let answered = false;
      request.once('response', (response) => {
        answered = true;
        // media-store may answer 415/413 before it has read everything: stop sending, keep the answer.
        body.unpipe(request);
        if (response.statusCode === 201) {
          this.json(response).then(
            (raw) => resolve({ target, ticket: stagedReplySchema.parse(raw).ticket }),
            reject,
          );
        } else {
          // The rest of the body will never be sent: the request must not keep its socket waiting for it.
          this.failure(response)
            .then(reject, reject)
            .finally(() => request.destroy());
        }
      });
      request.on('error', (err) => {
        if (!answered) reject(err);
      });
      body.once('error', (err) => request.destroy(err));
      body.pipe(request, { end: false });
      done.then(
        () => request.end(),
        (err: Error) => request.destroy(err),
      );
    });
  }

  /**
   * Records a staged upload as its slot's active one: a short call (media-store checks the slot's quota again
   * under the slot's lock). A full slot comes back as 409, and media-store has then removed the bytes. 503 when
   * media-store swept the staged bytes before the commit came (MEDIA_STAGED_TTL_SECONDS, decision 0460): nothing
   * is recorded, and the end user sends the file again.
   */
  async commit(staged: StagedUpload): Promise<MediaResource> {
    const response = await this.post(staged, 'commits');
    if (response.statusCode === 201) return mediaResourceSchema.parse(await this.json(response));
    throw await this.failure(response);
  }

  /** Removes a staged upload's bytes (never those of one committed meanwhile); best effort. */
  async discard(staged: StagedUpload): Promise<void> {
    const response = await this.post(staged, 'discards');
    response.resume();
    if (response.statusCode !== 204)
      throw new Error(`media-store answered ${response.statusCode} to a discard`);
  }

  private post(staged: StagedUpload, action: 'commits' | 'discards'): Promise<IncomingMessage> {
    const { target, ticket } = staged;
    const url = this.url(`${target.enrollmentId}/${target.slot}/${action}`, {
      productId: target.productId,
      applicantId: target.applicantId,
    });
    return this.send(url, 'POST', { 'content-type': 'application/json' }, JSON.stringify({ ticket }));
  }

  private url(path: string, query: Record<string, string>): URL {
    const url = new URL(`internal/v1/resources/${path}`, this.base);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    return url;
  }

  /** A call to media-store; when no bytes move either way for MEDIA_STORE_TIMEOUT_MS it fails with `idle()`. */
  private request(url: URL, method: string, headers: Record<string, string>, idle: () => Error) {
    if (!this.env.INTERNAL_SERVICE_TOKEN) {
      throw new AppException(503, 'Media storage is not configured');
    }
    const make = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = make(url, {
      method,
      agent: this.agent,
      timeout: this.env.MEDIA_STORE_TIMEOUT_MS,
      headers: { ...headers, authorization: `Bearer ${this.env.INTERNAL_SERVICE_TOKEN}` },
    });
    request.on('timeout', () => request.destroy(idle()));
    return request;
  }

  private send(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const request = this.request(url, method, headers, mediaTimeout);
      request.once('response', resolve);
      request.on('error', reject);
      request.end(body);
    });
  }

  private async json(response: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  }

  /**
   * A media-store error answer as the same client error, and its 503 (storage away) as a 503 with
   * `Retry-After: 1`; anything else is a 502 without internals. A staged
   * upload that expired (410 `staged_upload_expired`: swept before its commit, or its body outlasted
   * MEDIA_STAGED_TTL_SECONDS; decisions 0460, 0464) is a 503 `upload_expired`: nothing is recorded, and the file
   * is sent again.
   */
  private async failure(response: IncomingMessage): Promise<AppException> {
    const status = response.statusCode ?? 502;
    if (status === 410 && response.headers['x-error-code'] === 'staged_upload_expired') {
      response.resume();
      return uploadExpired();
    }
    if (status === 503) {
      // media-store's storage is away (decision 0493): the client retries after the second it names.
      response.resume();
      return new AppException(503, 'Media storage temporarily unavailable; retry with back-off');
    }
    const body = (await this.json(response).catch(() => ({}))) as { message?: unknown };
    if ([400, 404, 409, 413, 415, 416].includes(status)) {
      // media-store's reason (the slot's quota: `upload_limit`) goes on to the client with its status.
      const code = response.headers['x-error-code'];
      return new AppException(
        status,
        typeof body.message === 'string' ? body.message : 'Media request refused',
        undefined,
        typeof code === 'string' ? code : undefined,
      );
    }
    return new AppException(502, 'Media storage is unavailable');
  }
}
