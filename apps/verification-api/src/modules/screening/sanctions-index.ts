import { ratio, token_set_ratio } from 'fuzzball';
import { nameTokens, type PartyKind, sortedKey } from './name-normalizer';
import type { SanctionsEntry } from './sdn-parser';

/** One listed name (a primary name or an alias) in normalised form. */
interface IndexedName {
  entry: number;
  /** The name as the list writes it. */
  written: string;
  tokens: string[];
  key: string;
}

export interface NameMatch {
  entry: SanctionsEntry;
  /** The listed name (primary or alias) that matched. */
  matchedName: string;
  /** 0–100: the fuzzy similarity of the screened name and the listed one. */
  nameScore: number;
  /** Whether the whole name matched (word order free) or only a subset of its words. */
  basis: 'full_name' | 'partial_name';
}

const FOLLOW_ONLY_UNDER = 2000;
const CANDIDATES = 40;
const FUZZY = { full_process: false } as const;

/** A token's variants with one character deleted (tokens of 4+ characters): the SymSpell edit-1 keys. */
function deletions(token: string): string[] {
  if (token.length < 4) return [];
  const out = new Set<string>();
  for (let i = 0; i < token.length; i++) out.add(token.slice(0, i) + token.slice(i + 1));
  return [...out];
}

/**
 * Whether every word of the shorter name (two words at least) is in the longer one, one typo allowed
 * per word: the only case where a name with words more or fewer may still name the same party.
 */
function contains(a: readonly string[], b: readonly string[]): boolean {
  const [shorter, longer] = a.length <= b.length ? [a, b] : [b, a];
  if (shorter.length < 2) return false;
  return shorter.every((word) =>
    longer.some((other) => other === word || (word.length >= 4 && ratio(word, other, FUZZY) >= 85)),
  );
}

/**
 * An in-memory index of a sanctions list so that a screening compares a name with a few dozen listed
 * names, not all of them (docs/decisions/0130):
 * - every listed name (primary and aliases) is normalised (name-normalizer) once at load;
 * - blocking: an inverted index from each word to the names that hold it, plus a one-deletion index of
 *   the words (SymSpell) so that a word with one typo still finds its names;
 * - candidates are ranked by the rarity (IDF) of the words they share with the screened name; words held
 *   by more than FOLLOW_ONLY_UNDER names (`mohammad`, `al`) do not select candidates on their own;
 * - the best CANDIDATES are scored with fuzzball: the order-free ratio of the whole names, and the token
 *   set ratio when one name holds every word of the other (a middle name more or fewer).
 */
export class SanctionsIndex {
  private readonly names: IndexedName[] = [];
  private readonly tokenIds = new Map<string, number>();
  private readonly postings: number[][] = [];
  private readonly deletionIndex = new Map<string, number[]>();
  private readonly byKind: Record<PartyKind, Set<SanctionsEntry['type']>> = {
    individual: new Set(['individual']),
    organisation: new Set(['entity', 'vessel', 'aircraft']),
  };

  constructor(readonly entries: readonly SanctionsEntry[]) {
    entries.forEach((entry, index) => {
      const kind: PartyKind = entry.type === 'individual' ? 'individual' : 'organisation';
      const seen = new Set<string>();
      for (const written of [entry.name, ...entry.aliases]) {
        // Aliases of individuals are mostly written `First LAST`; the comma rule applies to both.
        const tokens = nameTokens(written, kind);
        const key = sortedKey(tokens);
        if (!key || seen.has(key)) continue;
        seen.add(key);
        this.add({ entry: index, written, tokens, key });
      }
    });
  }

  get size(): number {
    return this.names.length;
  }

  private add(name: IndexedName): void {
    const id = this.names.push(name) - 1;
    for (const token of new Set(name.tokens)) {
      let tokenId = this.tokenIds.get(token);
      if (tokenId === undefined) {
        tokenId = this.postings.push([]) - 1;
        this.tokenIds.set(token, tokenId);
        for (const variant of [token, ...deletions(token)]) {
          const list = this.deletionIndex.get(variant);
          if (list) list.push(tokenId);
          else this.deletionIndex.set(variant, [tokenId]);
        }
      }
      this.postings[tokenId].push(id);
    }
  }

  /** Listed words equal to `token` or one edit away from it (and their match weight). */
  private similarTokens(token: string): Map<number, number> {
    const found = new Map<number, number>();
    const exact = this.tokenIds.get(token);
    if (exact !== undefined) found.set(exact, 1);
    for (const variant of [token, ...deletions(token)]) {
      for (const tokenId of this.deletionIndex.get(variant) ?? []) {
        if (!found.has(tokenId)) found.set(tokenId, 0.8);
      }
    }
    return found;
  }

  /** The best match per listed party for a name, strongest first (at most `limit`). */
  search(name: string, kind: PartyKind, limit = 5): NameMatch[] {
    const tokens = nameTokens(name, kind);
    if (tokens.length === 0) return [];
    const key = sortedKey(tokens);
    const weights = new Map<number, number>();
    const total = this.names.length;
    for (const token of new Set(tokens)) {
      const perName = new Map<number, number>();
      for (const [tokenId, similarity] of this.similarTokens(token)) {
        const posting = this.postings[tokenId];
        if (posting.length > FOLLOW_ONLY_UNDER) continue;
        const weight = similarity * Math.log(total / posting.length);
        for (const id of posting) if ((perName.get(id) ?? 0) < weight) perName.set(id, weight);
      }
      for (const [id, weight] of perName) weights.set(id, (weights.get(id) ?? 0) + weight);
    }
    const ranked = [...weights.entries()]
      .filter(([id]) => this.byKind[kind].has(this.entries[this.names[id].entry].type))
      .sort((a, b) => b[1] - a[1])
      .slice(0, CANDIDATES);
    const best = new Map<number, NameMatch>();
    for (const [id] of ranked) {
      const listed = this.names[id];
      const full = ratio(key, listed.key, FUZZY);
      const partial = contains(tokens, listed.tokens) ? token_set_ratio(key, listed.key, FUZZY) : 0;
      const match: NameMatch =
        partial > full
          ? {
              entry: this.entries[listed.entry],
              matchedName: listed.written,
              nameScore: partial,
              basis: 'partial_name',
            }
          : {
              entry: this.entries[listed.entry],
              matchedName: listed.written,
              nameScore: full,
              basis: 'full_name',
            };
      const current = best.get(listed.entry);
      if (!current || match.nameScore > current.nameScore) best.set(listed.entry, match);
    }
    return [...best.values()].sort((a, b) => b.nameScore - a.nameScore).slice(0, limit);
  }
}
