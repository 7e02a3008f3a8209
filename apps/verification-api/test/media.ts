import { readdirSync, statSync } from 'node:fs';
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import {
  freePort,
  type MediaStoreProcess,
  startMediaStoreProcess,
  startTcpProxy,
  type TcpProxy,
  TEST_INTERNAL_SERVICE_TOKEN,
} from '@tessera/testing';
import { type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

export interface MediaHarness {
  h: Harness;
  media: MediaStoreProcess;
  /** With `proxied`: the proxy every call of verification-api to media-store goes through. */
  proxy?: TcpProxy;
  close: () => Promise<void>;
}

/**
 * verification-api in process plus the real media-store as a child process on the same database and Redis;
 * `proxied` puts a TCP proxy between them, so a test can stall media-store.
 */
export async function startMediaHarness(
  mediaEnv: Record<string, string> = {},
  apiEnv: Record<string, string> = {},
  opts: { proxied?: boolean } = {},
): Promise<MediaHarness> {
  const port = await freePort();
  const proxy = opts.proxied ? await startTcpProxy('127.0.0.1', port) : undefined;
  const h = await startHarness({
    ...apiEnv,
    MEDIA_STORE_URL: proxy ? proxy.url('http') : `http://127.0.0.1:${port}`,
    INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN,
  });
  let media: MediaStoreProcess;
  try {
    media = await startMediaStoreProcess({ ...h.env.env, ...mediaEnv, PORT: String(port) });
  } catch (err) {
    await h.close();
    await proxy?.close();
    throw err;
  }
  return {
    h,
    media,
    proxy,
    close: async () => {
      await media.stop();
      await h.close();
      await proxy?.close();
    },
  };
}

/**
 * The default level of `enrolledApplicant`'s product: BASIC_KYC plus a step for each other upload slot
 * (liveness_video, additional, company_doc), since an upload to a slot no step of the level uses is refused
 * (decision 0483).
 */
export const MEDIA_LEVEL = {
  ...INDIVIDUAL_LEVEL,
  name: 'MEDIA_KYC',
  steps: [...INDIVIDUAL_LEVEL.steps, { kind: 'liveness' }, { kind: 'poa' }, { kind: 'company_docs' }],
};

/** A product with a level, an applicant and an open enrollment; `token` is its SDK session token. */
export async function enrolledApplicant(
  h: Harness,
  externalUserId: string,
  tenant?: Awaited<ReturnType<Harness['tenant']>>,
) {
  const { productId, key } = tenant ?? (await h.tenant());
  if (!tenant) await h.admin('post', `/products/${productId}/levels`, MEDIA_LEVEL);
  await h.http().post('/v1/applicants').set(h.auth(key)).send({ externalUserId });
  const applicant = await h.http().get(`/v1/applicants/${externalUserId}`).set(h.auth(key)).expect(200);
  const session = await h
    .http()
    .post(`/v1/applicants/${externalUserId}/verifications`)
    .set(h.auth(key))
    .expect(202);
  const link = await h.http().get(`/api/v1/sdk/links/${session.body.shortCode}`).expect(200);
  return {
    productId,
    key,
    externalUserId,
    applicantId: applicant.body.id as string,
    enrollmentId: session.body.enrollmentId as string,
    token: link.body.token as string,
  };
}

/** Every file under `root`, temporary ones included. */
export function filesUnder(root: string): string[] {
  let out: string[] = [];
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    out = statSync(path).isDirectory() ? out.concat(filesUnder(path)) : out.concat(path);
  }
  return out;
}

/** An answer of the API to a hand-written upload. */
export interface UploadAnswer {
  status: number;
  body: unknown;
}

/**
 * An SDK upload written by hand on its own connection (chunked), part by part, so a test can pause in the
 * middle of the file, stall, send what a browser never would, or end the body without its final boundary.
 */
export function handUpload(port: number, token: string, slot: string) {
  const boundary = 'tessera-hand-upload';
  const request = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: `/api/v1/sdk/uploads/${slot}`,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
    },
  });
  let inPart = false;
  let answerHeaders: IncomingHttpHeaders | undefined;
  const open = (disposition: string, type?: string) => {
    request.write(
      `${inPart ? '\r\n' : ''}--${boundary}\r\nContent-Disposition: form-data; ${disposition}\r\n` +
        (type ? `Content-Type: ${type}\r\n` : '') +
        '\r\n',
    );
    inPart = true;
  };
  const answer = new Promise<UploadAnswer>((resolve, reject) => {
    request.on('error', reject);
    request.on('response', (response) => {
      answerHeaders = response.headers;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: kept as text
        }
        resolve({ status: response.statusCode ?? 0, body });
      });
    });
  });
  // A test that destroys the connection reads no answer.
  answer.catch(() => undefined);
  return {
    field(name: string, value: string, type?: string) {
      open(`name="${name}"`, type);
      request.write(value);
      return this;
    },
    file(bytes: Buffer, name = 'file') {
      open(`name="${name}"; filename="upload.bin"`, 'application/octet-stream');
      request.write(bytes);
      return this;
    },
    /** More bytes of the part that is open. */
    write(bytes: Buffer | string) {
      request.write(bytes);
      return this;
    },
    /** Ends the body, with its final boundary unless `finalBoundary` is false. */
    end(finalBoundary = true) {
      request.end(finalBoundary ? `${inPart ? '\r\n' : ''}--${boundary}--\r\n` : undefined);
      return answer;
    },
    /** Closes the connection mid-body. */
    destroy() {
      request.destroy();
    },
    answer,
    /** The answer's headers, once it came (`X-Error-Code`, `Retry-After`). */
    async headers(): Promise<IncomingHttpHeaders> {
      await answer;
      return answerHeaders ?? {};
    },
  };
}

/** Waits `ms` milliseconds. */
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
