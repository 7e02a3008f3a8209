import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DependencyUnavailableError } from '@tessera/platform';
import { asStorageError, BlobNotFoundError, BlobRepository, type ByteRange } from './blob.repository';

/** No file there: gone (ENOENT), or a path through something that is not a directory (ENOTDIR). */
const absent = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/** Local-disk blobs under MEDIA_FS_ROOT; an upload is written to `.tmp/` and renamed into place when complete. */
export class FsBlobRepository extends BlobRepository {
  private readonly root: string;

  constructor(root: string) {
    super();
    this.root = resolve(root);
  }

  /** Folder of in-flight uploads (empty when none is running). */
  get tempDir(): string {
    return join(this.root, '.tmp');
  }

  /**
   * Boot check (decision 0494): the folder of in-flight uploads can be made and a file written in it. A root the
   * service cannot write (not a directory, no permission, a read-only mount) is a deployment mistake no retry
   * mends, so the boot stops with one line naming it. A full disk does not stop it: reads, metadata and sweeps
   * still work, and each write the disk refuses answers 503, as S3 away does (decision 0493).
   */
  async requireWritable(): Promise<void> {
    const probe = join(this.tempDir, `boot-${randomUUID()}`);
    try {
      await mkdir(this.tempDir, { recursive: true });
      await writeFile(probe, '', { flag: 'wx' });
      await rm(probe);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      if (code === 'ENOSPC' || code === 'EDQUOT') return;
      throw new DependencyUnavailableError(
        `MEDIA_FS_ROOT ${this.root} is not a writable directory (${code}). Mount a volume the service's user can write there, or set MEDIA_STORAGE=s3.`,
      );
    }
  }

  private pathOf(key: string): string {
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep) || key.startsWith('.tmp'))
      throw new Error(`Invalid blob key ${key}`);
    return path;
  }

  async put(key: string, body: Readable, _contentType?: string): Promise<void> {
    const target = this.pathOf(key);
    const temp = join(this.tempDir, randomUUID());
    try {
      await mkdir(this.tempDir, { recursive: true });
      await pipeline(body, createWriteStream(temp, { flags: 'wx' }));
      await mkdir(dirname(target), { recursive: true });
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw asStorageError(err);
    }
  }

  /** The file, once opened: a file that cannot be opened is missing (404) or a disk that refuses (503, 0494). */
  async read(key: string, range?: ByteRange): Promise<Readable> {
    const path = this.pathOf(key);
    if (!(await this.exists(key))) throw new BlobNotFoundError(key);
    const file = createReadStream(path, range ? { start: range.start, end: range.end } : {});
    try {
      await once(file, 'ready');
    } catch (err) {
      file.destroy();
      throw absent(err) ? new BlobNotFoundError(key) : asStorageError(err);
    }
    return file;
  }

  async exists(key: string): Promise<boolean> {
    return stat(this.pathOf(key)).then(
      (s) => s.isFile(),
      (err: unknown) => {
        if (absent(err)) return false;
        throw asStorageError(err);
      },
    );
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /**
   * The files in `.tmp/` not written to since `before`: uploads whose process died before its rename or its
   * clean-up (decision 0498). An upload in flight writes as its bytes arrive, so its file stays.
   */
  override async sweepLeftovers(before: Date): Promise<number> {
    const names = await readdir(this.tempDir).catch((err: unknown) => {
      if (absent(err)) return [];
      throw asStorageError(err);
    });
    let removed = 0;
    for (const name of names) {
      const path = join(this.tempDir, name);
      const file = await stat(path).catch((err: unknown) => {
        if (absent(err)) return undefined; // finished or cleaned up meanwhile
        throw asStorageError(err);
      });
      if (!file || file.mtimeMs >= before.getTime()) continue;
      await rm(path, { force: true, recursive: true });
      removed++;
    }
    return removed;
  }
}
