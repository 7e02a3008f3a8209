import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { APP_CONFIG } from '@tessera/platform';
import type { Env } from '../../config/env';
import type { PartyKind } from './name-normalizer';
import { SanctionsIndex } from './sanctions-index';
import { BUNDLED_SANCTIONS_LIST, SanctionsListRepository } from './sanctions-list.repository';
import { outcomeOf, type ScoredMatch, scoreMatch, type ScreeningOutcome } from './screening-rules';
import { parseSdnCsv } from './sdn-parser';

export interface ScreeningSubject {
  kind: PartyKind;
  /** The names to screen: the legal name first, then aliases (a maiden name, a trading name...). */
  names: string[];
  /** `YYYY-MM-DD` when known (individuals). */
  dateOfBirth?: string;
}

/** What the operator sees of a listed party a screening matched. */
export interface ScreeningMatchView {
  listId: number;
  listName: string;
  matchedName: string;
  screenedName: string;
  type: string;
  programs: string[];
  listedDatesOfBirth: string[];
  aliases: string[];
  score: number;
  nameScore: number;
  basis: 'full_name' | 'partial_name';
  dateOfBirth: 'agrees' | 'disagrees' | 'unknown';
}

export interface ScreeningResult {
  outcome: ScreeningOutcome;
  /** The strongest matches at or above the review threshold, strongest first. */
  matches: ScreeningMatchView[];
  list: { source: string; importedAt: string; entries: number };
}

const toView = (screenedName: string, m: ScoredMatch): ScreeningMatchView => ({
  listId: m.entry.id,
  listName: m.entry.name,
  matchedName: m.matchedName,
  screenedName,
  type: m.entry.type,
  programs: m.entry.programs,
  listedDatesOfBirth: m.entry.dobs,
  aliases: m.entry.aliases,
  score: m.score,
  nameScore: m.nameScore,
  basis: m.basis,
  dateOfBirth: m.dob,
});

/** Fuzzy screening of names against the sanctions list (docs/decisions/0130). */
@Injectable()
export class ScreeningService {
  private readonly logger = new Logger(ScreeningService.name);
  private loaded: { index: SanctionsIndex; source: string; importedAt: string } | null = null;
  private readonly path: string;

  constructor(
    private readonly lists: SanctionsListRepository,
    @Optional() @Inject(APP_CONFIG) env?: Pick<Env, 'SANCTIONS_LIST_FILE'>,
  ) {
    this.path = env?.SANCTIONS_LIST_FILE ?? BUNDLED_SANCTIONS_LIST;
  }

  /** The index, built on first use (about a second) and kept for the life of the process. */
  private index() {
    if (!this.loaded) {
      const started = Date.now();
      const list = this.lists.load(this.path);
      this.loaded = {
        index: new SanctionsIndex(list.entries),
        source: list.source,
        importedAt: list.importedAt,
      };
      this.logger.log(
        { entries: list.entries.length, names: this.loaded.index.size, ms: Date.now() - started },
        'sanctions list loaded',
      );
    }
    return this.loaded;
  }

  /** Builds the index now (worker start-up) rather than on the first screening. */
  warmUp(): void {
    this.index();
  }

  screen(subject: ScreeningSubject): ScreeningResult {
    const { index, source, importedAt } = this.index();
    const best = new Map<number, ScreeningMatchView>();
    for (const name of subject.names.map((n) => n.trim()).filter(Boolean)) {
      for (const match of index.search(name, subject.kind)) {
        const scored = scoreMatch(match, subject.dateOfBirth);
        if (outcomeOf(scored.score) === 'clear') continue;
        const current = best.get(scored.entry.id);
        if (!current || scored.score > current.score) best.set(scored.entry.id, toView(name, scored));
      }
    }
    const matches = [...best.values()].sort((a, b) => b.score - a.score).slice(0, 5);
    return {
      outcome: matches.length > 0 ? outcomeOf(matches[0].score) : 'clear',
      matches,
      list: { source, importedAt, entries: index.entries.length },
    };
  }

  /**
   * The import command: parses a fresh OFAC list (legacy `sdn.csv`, optionally `alt.csv` for aliases)
   * and writes it as the compact list file the screening reads.
   */
  importList(input: { sdnCsv: string; altCsv?: string; out?: string; source?: string }) {
    const entries = parseSdnCsv(
      this.lists.readText(input.sdnCsv),
      input.altCsv ? this.lists.readText(input.altCsv) : undefined,
    );
    if (entries.length === 0) throw new Error(`${input.sdnCsv} holds no list entries`);
    const out = input.out ?? this.path;
    const importedAt = new Date().toISOString();
    const source = input.source ?? 'OFAC SDN (legacy CSV)';
    this.lists.save(out, { source, importedAt, entries });
    this.loaded = null;
    const count = (type: string) => entries.filter((e) => e.type === type).length;
    return {
      file: out,
      source,
      importedAt,
      entries: entries.length,
      individuals: count('individual'),
      entities: count('entity'),
      vessels: count('vessel'),
      aircraft: count('aircraft'),
      aliases: entries.reduce((n, e) => n + e.aliases.length, 0),
      datesOfBirth: entries.reduce((n, e) => n + e.dobs.length, 0),
    };
  }

  /** The list's entries, for the quality report. */
  entries() {
    return this.index().index.entries;
  }
}
