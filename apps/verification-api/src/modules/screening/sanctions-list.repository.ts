import { Injectable } from '@nestjs/common';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { SanctionsEntry } from './sdn-parser';

/** The sanctions list as shipped in `apps/verification-api/data/sanctions/` and written by the import. */
export interface SanctionsList {
  source: string;
  /** When the list was imported into this form (ISO 8601). */
  importedAt: string;
  entries: SanctionsEntry[];
}

/** The bundled OFAC SDN snapshot (docs/decisions/0130); `SANCTIONS_LIST_FILE` points elsewhere. */
export const BUNDLED_SANCTIONS_LIST = join(
  __dirname,
  '..',
  '..',
  '..',
  'data',
  'sanctions',
  'ofac-sdn.json.gz',
);

const TYPES = ['individual', 'entity', 'vessel', 'aircraft'] as const;

type Row = [number, number, string, string[], string[], string[]];

/**
 * Reads and writes the compact list file: gzip of `{source, importedAt, entries: [[id, typeIndex, name,
 * aliases, programs, dobs]]}` — about a tenth of the CSV it comes from.
 */
@Injectable()
export class SanctionsListRepository {
  load(path: string = BUNDLED_SANCTIONS_LIST): SanctionsList {
    const parsed = JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')) as {
      source: string;
      importedAt: string;
      entries: Row[];
    };
    return {
      source: parsed.source,
      importedAt: parsed.importedAt,
      entries: parsed.entries.map(([id, type, name, aliases, programs, dobs]) => ({
        id,
        type: TYPES[type] ?? 'entity',
        name,
        aliases,
        programs,
        dobs,
      })),
    };
  }

  /** Writes atomically (temporary file, then rename), so a running worker never reads half a list. */
  save(path: string, list: SanctionsList): void {
    const rows: Row[] = list.entries.map((e) => [
      e.id,
      TYPES.indexOf(e.type),
      e.name,
      e.aliases,
      e.programs,
      e.dobs,
    ]);
    const body = gzipSync(
      JSON.stringify({ source: list.source, importedAt: list.importedAt, entries: rows }),
      { level: 9 },
    );
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, body);
    renameSync(temporary, path);
  }

  readText(path: string): string {
    return readFileSync(path, 'latin1');
  }
}
