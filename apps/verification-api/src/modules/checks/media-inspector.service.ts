import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import sharp from 'sharp';
import type { Env } from '../../config/env';

/** What decoding an image found: its pixel size, or why it could not be read. */
export type ImageInspection =
  { ok: true; format: string; width: number; height: number } | { ok: false; error: string };

/** What probing a clip's container found: its duration in seconds, or why it could not be read. */
export type VideoInspection = { ok: true; durationSeconds: number } | { ok: false; error: string };

/** Images are capped at 20 MB by media-store; a little headroom, and never more than this in memory. */
const IMAGE_BUFFER_LIMIT = 32 * 1024 * 1024;
const FFPROBE_TIMEOUT_MS = 30_000;

/** ffprobe could not run: the job fails and is retried; the clip is not judged. */
export class ProbeUnavailableError extends Error {}

const toReadable = (stream: NodeJS.ReadableStream): Readable =>
  stream instanceof Readable ? stream : Readable.from(stream);

/**
 * Reads media bytes for the step checks (decision 0133): images are buffered (they are small) and fully
 * decoded with sharp (libvips) so a truncated or corrupt file fails here, not in the operator's viewer;
 * clips are streamed to a temporary file and their duration is read from the container by ffprobe.
 */
@Injectable()
export class MediaInspectorService {
  constructor(@Inject(APP_CONFIG) private readonly env: Env) {}

  async image(stream: NodeJS.ReadableStream): Promise<ImageInspection> {
    // A failing read (media-store gone) throws: the job is retried, the applicant is not blamed.
    const bytes = await collect(toReadable(stream), IMAGE_BUFFER_LIMIT);
    if (!bytes) return { ok: false, error: `larger than ${IMAGE_BUFFER_LIMIT} bytes` };
    try {
      const image = sharp(bytes, { failOn: 'error', autoOrient: true });
      const meta = await image.metadata();
      // A full decode (through a small resize, so the output is tiny) proves every scan line is readable.
      await image.resize(64, 64, { fit: 'inside' }).raw().toBuffer();
      const width = meta.autoOrient?.width ?? meta.width;
      const height = meta.autoOrient?.height ?? meta.height;
      if (!width || !height) return { ok: false, error: 'no pixel size' };
      return { ok: true, format: meta.format, width, height };
    } catch (err) {
      return { ok: false, error: (err as Error).message.split('\n')[0] };
    }
  }

  async video(stream: NodeJS.ReadableStream): Promise<VideoInspection> {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-clip-'));
    const file = join(dir, 'clip');
    try {
      await pipeline(toReadable(stream), createWriteStream(file));
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    try {
      const format = await this.ffprobe(['-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
      let seconds = Number.parseFloat(format.trim());
      if (!Number.isFinite(seconds)) {
        // Browser MediaRecorder WebM has no duration in its header: take the end of the last packet.
        const packets = await this.ffprobe([
          '-show_entries',
          'packet=pts_time,duration_time',
          '-of',
          'csv=p=0',
          file,
        ]);
        seconds = packets
          .split('\n')
          .map((line) => line.split(',').map(Number.parseFloat))
          .filter(([pts]) => Number.isFinite(pts))
          .reduce((end, [pts, dur]) => Math.max(end, pts + (Number.isFinite(dur) ? dur : 0)), NaN);
      }
      if (!Number.isFinite(seconds)) return { ok: false, error: 'no duration in the container' };
      return { ok: true, durationSeconds: Math.round(seconds * 1000) / 1000 };
    } catch (err) {
      // A missing or timed-out ffprobe is the deployment's fault: throw so the job is retried.
      if (err instanceof ProbeUnavailableError) throw err;
      return { ok: false, error: (err as Error).message.split('\n')[0] };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private ffprobe(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        this.env.FFPROBE_PATH,
        ['-v', 'error', ...args],
        { timeout: FFPROBE_TIMEOUT_MS, maxBuffer: 8 * 1024 * 1024 },
        (err, stdout, stderr) => {
          // No binary, or killed at the timeout (a loaded machine): the deployment's problem, retried.
          if (err && ((err as { code?: unknown }).code === 'ENOENT' || err.killed)) {
            reject(new ProbeUnavailableError(`ffprobe unavailable: ${err.message}`));
          } else if (err) reject(new Error(String(stderr).trim() || err.message));
          else resolve(stdout);
        },
      );
    });
  }
}

/** The whole stream, or undefined (and the stream destroyed) once it passes `limit` bytes. */
async function collect(stream: Readable, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      stream.destroy();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
