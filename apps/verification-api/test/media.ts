import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  freePort,
  type MediaStoreProcess,
  startMediaStoreProcess,
  TEST_INTERNAL_SERVICE_TOKEN,
} from '@tessera/testing';
import { type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

export interface MediaHarness {
  h: Harness;
  media: MediaStoreProcess;
  close: () => Promise<void>;
}

/** verification-api in process plus the real media-store as a child process on the same database and Redis. */
export async function startMediaHarness(
  mediaEnv: Record<string, string> = {},
  apiEnv: Record<string, string> = {},
): Promise<MediaHarness> {
  const port = await freePort();
  const h = await startHarness({
    ...apiEnv,
    MEDIA_STORE_URL: `http://127.0.0.1:${port}`,
    INTERNAL_SERVICE_TOKEN: TEST_INTERNAL_SERVICE_TOKEN,
  });
  let media: MediaStoreProcess;
  try {
    media = await startMediaStoreProcess({ ...h.env.env, ...mediaEnv, PORT: String(port) });
  } catch (err) {
    await h.close();
    throw err;
  }
  return {
    h,
    media,
    close: async () => {
      await media.stop();
      await h.close();
    },
  };
}

/** A product with a level, an applicant and an open enrollment; `token` is its SDK session token. */
export async function enrolledApplicant(
  h: Harness,
  externalUserId: string,
  tenant?: Awaited<ReturnType<Harness['tenant']>>,
) {
  const { productId, key } = tenant ?? (await h.tenant());
  if (!tenant) await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
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
