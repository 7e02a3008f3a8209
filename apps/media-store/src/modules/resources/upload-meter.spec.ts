import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  EmptyFileError,
  ifNoneMatchHolds,
  ifRangeHolds,
  parseRange,
  TooLargeError,
  UnsupportedTypeError,
  UploadMeter,
} from './upload-meter';

// A PNG signature and IHDR chunk start: enough for file-type to say image/png.
const PNG_HEAD = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

async function meter(chunks: Buffer[], allowed: string[], limit: number) {
  const m = new UploadMeter(allowed, () => limit);
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(chunks),
    m,
    new Writable({
      write(chunk, _e, cb) {
        out.push(chunk);
        cb();
      },
    }),
  );
  return { m, out: Buffer.concat(out) };
}

describe('UploadMeter', () => {
  it('passes the bytes through unchanged with their sha256, size and sniffed type', async () => {
    const body = Buffer.concat([PNG_HEAD, Buffer.alloc(10_000, 3)]);
    const { m, out } = await meter(
      [body.subarray(0, 7), body.subarray(7, 5000), body.subarray(5000)],
      ['image/png'],
      1e6,
    );
    expect(out.equals(body)).toBe(true);
    expect(m.mime).toBe('image/png');
    expect(m.size).toBe(body.length);
    expect(m.sha256).toBe(createHash('sha256').update(body).digest('hex'));
  });

  it('sniffs HEIC from its ftyp box (brand heic, or the generic mif1 as image/heif)', async () => {
    const heif = (major: string) =>
      Buffer.concat([
        Buffer.from([0, 0, 0, 24]),
        Buffer.from(`ftyp${major}\0\0\0\0mif1heic`),
        Buffer.alloc(5000),
      ]);
    const images = ['image/jpeg', 'image/png', 'image/heic', 'image/heif', 'image/webp'];
    expect((await meter([heif('heic')], images, 1e6)).m.mime).toBe('image/heic');
    expect((await meter([heif('mif1')], images, 1e6)).m.mime).toBe('image/heif');
  });

  it('refuses a type outside the slot and unknown bytes as such, an empty body as empty (decision 0487)', async () => {
    await expect(meter([PNG_HEAD, Buffer.alloc(5000)], ['image/jpeg'], 1e6)).rejects.toBeInstanceOf(
      UnsupportedTypeError,
    );
    await expect(meter([Buffer.from('plain text')], ['image/png'], 1e6)).rejects.toBeInstanceOf(
      UnsupportedTypeError,
    );
    await expect(meter([], ['image/png'], 1e6)).rejects.toBeInstanceOf(EmptyFileError);
  });

  it('refuses as unknown the headers the sniffer throws on (cut short: PNG signature, ID3, TIFF, EBML)', async () => {
    const images = ['image/jpeg', 'image/png', 'image/heic', 'image/heif', 'image/webp'];
    for (const hex of ['89504e470d0a1a0a', '494433', '49492a0008000000', '1a45dfa30001ff']) {
      const err = await meter([Buffer.from(hex, 'hex')], [...images, 'video/webm'], 1e6).catch((e) => e);
      expect(err).toBeInstanceOf(UnsupportedTypeError);
    }
  });

  it('fails with TooLargeError once the count passes the limit of the sniffed kind', async () => {
    await expect(meter([PNG_HEAD, Buffer.alloc(3000)], ['image/png'], 1000)).rejects.toBeInstanceOf(
      TooLargeError,
    );
    await expect(
      meter([PNG_HEAD, Buffer.alloc(5000), Buffer.alloc(5000)], ['image/png'], 8000),
    ).rejects.toBeInstanceOf(TooLargeError);
  });
});

describe('parseRange', () => {
  it('reads one byte range, a suffix and an open end; clamps the end to the size', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=50-500', 100)).toEqual({ start: 50, end: 99 });
  });

  it('is unsatisfiable past the end; ignores absent, malformed and multi-range headers', () => {
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 100)).toBe('unsatisfiable');
    for (const header of [undefined, 'bytes=5-1', 'items=0-1', 'bytes=0-1,5-6', 'bytes=-']) {
      expect(parseRange(header, 100)).toBeUndefined();
    }
  });
});

describe('ifRangeHolds', () => {
  const validators = { etag: '"abc"', lastModified: 'Sat, 28 Nov 2026 13:00:00 GMT' };
  it('holds without If-Range, or when it names the ETag or the Last-Modified date exactly', () => {
    expect(ifRangeHolds(undefined, validators)).toBe(true);
    expect(ifRangeHolds('"abc"', validators)).toBe(true);
    expect(ifRangeHolds('Sat, 28 Nov 2026 13:00:00 GMT', validators)).toBe(true);
  });
  it('fails for another ETag, a weak one, or another date', () => {
    expect(ifRangeHolds('"abd"', validators)).toBe(false);
    expect(ifRangeHolds('W/"abc"', validators)).toBe(false);
    expect(ifRangeHolds('Sat, 28 Nov 2026 13:00:01 GMT', validators)).toBe(false);
  });
});

describe('ifNoneMatchHolds', () => {
  it('holds for the ETag, its weak form, a list holding it, and *', () => {
    for (const header of ['"abc"', 'W/"abc"', ' "x" , W/"abc" ', '*']) {
      expect([header, ifNoneMatchHolds(header, '"abc"')]).toEqual([header, true]);
    }
  });
  it('fails without the header and for other tags', () => {
    for (const header of [undefined, '', '"abd"', '"x", "y"', 'abc', '"abc']) {
      expect([header, ifNoneMatchHolds(header, '"abc"')]).toEqual([header, false]);
    }
  });
});
