import type { PartyKind } from './name-normalizer';
import type { ScreeningService } from './screening.service';
import type { SanctionsEntry } from './sdn-parser';

/**
 * The screening quality set (docs/aml-screening.md): names built from the list, which should be caught,
 * and ordinary names built from name parts written here, which should pass. Deterministic: the same list
 * gives the same set.
 */

export type VariantKind = 'exact' | 'reordered' | 'accented' | 'typo' | 'alias';

export interface QualityCase {
  variant: VariantKind | 'ordinary';
  kind: PartyKind;
  name: string;
  dateOfBirth?: string;
  /** The list entry the name was built from (listed names only). */
  listId?: number;
}

/** Small deterministic PRNG (mulberry32), so the set is stable across runs and machines. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ACCENTS: Record<string, string> = { a: 'á', e: 'é', i: 'í', o: 'ö', u: 'ü', n: 'ñ', c: 'ç' };

/** `LAST, First Middle` -> `First Middle LAST`. */
const firstLast = (name: string) => {
  const comma = name.indexOf(',');
  return comma > 0 ? `${name.slice(comma + 1).trim()} ${name.slice(0, comma).trim()}` : name;
};

const words = (name: string) => name.split(/\s+/).filter(Boolean);
const letters = (name: string) => name.replace(/[^A-Za-z]/g, '').length;

function reorder(entry: SanctionsEntry): string {
  if (entry.type === 'individual') return firstLast(entry.name);
  return words(entry.name).reverse().join(' ');
}

function accent(name: string): string {
  return name
    .toLowerCase()
    .replace(/[aeioun c]/g, (c) => ACCENTS[c] ?? c)
    .replace(/(^|\s)(\S)/g, (_m, space: string, c: string) => space + c.toUpperCase());
}

function typo(name: string, next: () => number): string {
  const parts = words(name);
  let longest = 0;
  parts.forEach((w, i) => {
    if (w.length > parts[longest].length) longest = i;
  });
  const w = parts[longest];
  const at = 1 + Math.floor(next() * (w.length - 1));
  const alphabet = 'abcdefghijklmnopqrstuvwxyz';
  let replacement = alphabet[Math.floor(next() * 26)];
  if (replacement === w[at].toLowerCase()) replacement = alphabet[(alphabet.indexOf(replacement) + 1) % 26];
  parts[longest] =
    w.slice(0, at) +
    (w[at] === w[at].toUpperCase() ? replacement.toUpperCase() : replacement) +
    w.slice(at + 1);
  return parts.join(' ');
}

const exactDob = (entry: SanctionsEntry) => entry.dobs.find((d) => /^\d{4}-\d{2}-\d{2}$/.test(d));

/** Names built from the list: `perVariant` of each variant kind, half individuals, half entities. */
export function listedCases(entries: readonly SanctionsEntry[], perVariant = 50, seed = 11): QualityCase[] {
  const next = random(seed);
  const pick = (pool: SanctionsEntry[], n: number) => {
    const copy = [...pool];
    const out: SanctionsEntry[] = [];
    while (out.length < n && copy.length > 0) out.push(copy.splice(Math.floor(next() * copy.length), 1)[0]);
    return out;
  };
  // Names of two words or more and eight letters or more: a lone short word (`BNC`) is a weak
  // identifier that no screening matches on alone.
  const usable = (name: string) => words(name).length >= 2 && letters(name) >= 8;
  const individuals = entries.filter((e) => e.type === 'individual' && usable(firstLast(e.name)));
  const entities = entries.filter((e) => e.type === 'entity' && usable(e.name));
  const cases: QualityCase[] = [];
  const kindOf = (e: SanctionsEntry): PartyKind => (e.type === 'individual' ? 'individual' : 'organisation');
  const add = (variant: VariantKind, entry: SanctionsEntry, name: string) =>
    cases.push({
      variant,
      kind: kindOf(entry),
      name,
      listId: entry.id,
      ...(entry.type === 'individual' && next() < 0.5 && exactDob(entry)
        ? { dateOfBirth: exactDob(entry) }
        : {}),
    });
  const half = Math.ceil(perVariant / 2);
  for (const entry of [...pick(individuals, half), ...pick(entities, perVariant - half)])
    add('exact', entry, entry.name);
  for (const entry of [...pick(individuals, half), ...pick(entities, perVariant - half)])
    add('reordered', entry, reorder(entry));
  for (const entry of [...pick(individuals, half), ...pick(entities, perVariant - half)])
    add('accented', entry, accent(reorder(entry)));
  for (const entry of [...pick(individuals, half), ...pick(entities, perVariant - half)])
    add('typo', entry, typo(reorder(entry), next));
  const withAliases = (pool: SanctionsEntry[]) => pool.filter((e) => e.aliases.some(usable));
  for (const entry of [
    ...pick(withAliases(individuals), half),
    ...pick(withAliases(entities), perVariant - half),
  ]) {
    const aliases = entry.aliases.filter(usable);
    add('alias', entry, aliases[Math.floor(next() * aliases.length)]);
  }
  return cases;
}

// Name parts for ordinary applicants, written for this set (not taken from the list).
const GIVEN = [
  'Emma',
  'Oliver',
  'Sophie',
  'Lucas',
  'Hannah',
  'Mateo',
  'Chloe',
  'Noah',
  'Ingrid',
  'Pieter',
  'Aoife',
  'Giulia',
  'Marco',
  'Camille',
  'Julien',
  'Katarzyna',
  'Tomasz',
  'Yuki',
  'Haruto',
  'Mei',
  'Wei',
  'Priya',
  'Arjun',
  'Ananya',
  'Rahul',
  'Fatima',
  'Omar',
  'Leila',
  'Karim',
  'Amara',
  'Chidi',
  'Ngozi',
  'Kwame',
  'Thandiwe',
  'Sipho',
  'Lucia',
  'Diego',
  'Valentina',
  'Santiago',
  'Isabela',
  'Joao',
  'Freya',
  'Lars',
  'Astrid',
  'Mikko',
  'Aino',
  'Dmitri',
  'Olga',
  'Svetlana',
  'Nikos',
  'Eleni',
  'Emre',
  'Zeynep',
  'Hyun',
  'Jiwoo',
  'Minh',
  'Linh',
  'Siddharth',
  'Grace',
  'Patrick',
];
const FAMILY = [
  'Thompson',
  'Whitfield',
  'Brennan',
  'Okafor',
  'Lindqvist',
  'Van der Berg',
  'Moreau',
  'Rossi',
  'Bianchi',
  'Kowalczyk',
  'Nowakowski',
  'Tanaka',
  'Nakamura',
  'Chen',
  'Zhang',
  'Sharma',
  'Iyer',
  'Patel',
  'Kapoor',
  'El Amrani',
  'Benali',
  'Haddad',
  'Mensah',
  'Adeyemi',
  'Nkosi',
  'Dlamini',
  'Garcia Marquez',
  'Fernandez',
  'Oliveira',
  'Santos',
  'Hansen',
  'Johansson',
  'Virtanen',
  'Korhonen',
  'Ivanova',
  'Sokolov',
  'Papadopoulos',
  'Yilmaz',
  'Demir',
  'Kim',
  'Park',
  'Nguyen',
  'Tran',
  'Schneider',
  'Hoffmann',
  'Murphy',
  'OSullivan',
  'Fitzgerald',
  'Kristensen',
  'Novak',
  'Horvath',
  'Silva',
  'Costa',
  'Dubois',
  'Lefevre',
  'MacLeod',
  'Campbell',
  'Andersson',
  'Berg',
  'Wagner',
];
const TRADES = [
  'Bakery',
  'Logistics',
  'Software',
  'Dental Studio',
  'Architecture',
  'Garden Supplies',
  'Consulting',
  'Print Works',
  'Bicycle Repair',
  'Catering',
  'Translation Services',
  'Veterinary Clinic',
  'Interiors',
  'Solar Installations',
  'Bookshop',
  'Coffee Roasters',
  'Tailoring',
  'Carpentry',
  'Analytics',
  'Pottery',
];
const PLACES = [
  'Northbridge',
  'Lakeside',
  'Greenfield',
  'Harbourview',
  'Oakridge',
  'Riverbend',
  'Maplewood',
  'Stonegate',
  'Brightwater',
  'Hillcrest',
  'Elmstead',
];
const FORMS = ['Ltd', 'GmbH', 'LLC', 'B.V.', 'S.A.S.', 'Oy', 'AB'];

/** Ordinary names: `individuals` people (with a date of birth) and `organisations` small companies. */
export function ordinaryCases(individuals = 200, organisations = 50, seed = 7): QualityCase[] {
  const next = random(seed);
  const one = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  const cases: QualityCase[] = [];
  const seen = new Set<string>();
  while (cases.length < individuals) {
    const name = next() < 0.2 ? `${one(GIVEN)} ${one(GIVEN)} ${one(FAMILY)}` : `${one(GIVEN)} ${one(FAMILY)}`;
    if (seen.has(name)) continue;
    seen.add(name);
    const year = 1950 + Math.floor(next() * 55);
    const month = String(1 + Math.floor(next() * 12)).padStart(2, '0');
    const day = String(1 + Math.floor(next() * 28)).padStart(2, '0');
    cases.push({ variant: 'ordinary', kind: 'individual', name, dateOfBirth: `${year}-${month}-${day}` });
  }
  while (cases.length < individuals + organisations) {
    const name = `${one(PLACES)} ${one(TRADES)} ${one(FORMS)}`;
    if (seen.has(name)) continue;
    seen.add(name);
    cases.push({ variant: 'ordinary', kind: 'organisation', name });
  }
  return cases;
}

export interface QualityRow {
  set: string;
  names: number;
  hit: number;
  possibleMatch: number;
  clear: number;
  /** Listed names: the share caught (hit or possible match). Ordinary names: the share not clear. */
  rate: number;
}

/** Screens the quality set and tabulates it (`pnpm --filter @tessera/verification-api cli screening-quality`). */
export function qualityReport(screening: ScreeningService) {
  const listed = listedCases(screening.entries());
  const ordinary = ordinaryCases();
  const results = [...listed, ...ordinary].map((c) => ({
    case: c,
    result: screening.screen({ kind: c.kind, names: [c.name], dateOfBirth: c.dateOfBirth }),
  }));
  const row = (set: string, filter: (c: QualityCase) => boolean): QualityRow => {
    const rows = results.filter((r) => filter(r.case));
    // A listed name counts as caught only when the entry it was built from is among the matches.
    const caught = (r: (typeof results)[number]) =>
      r.case.listId === undefined || r.result.matches.some((m) => m.listId === r.case.listId);
    const count = (o: string) => rows.filter((r) => r.result.outcome === o && caught(r)).length;
    const hit = count('hit');
    const possibleMatch = count('possible_match');
    return {
      set,
      names: rows.length,
      hit,
      possibleMatch,
      clear: rows.length - hit - possibleMatch,
      rate: rows.length ? Math.round((10000 * (hit + possibleMatch)) / rows.length) / 100 : 0,
    };
  };
  const variants: VariantKind[] = ['exact', 'reordered', 'accented', 'typo', 'alias'];
  const missed = results
    .filter((r) => r.case.variant !== 'ordinary')
    .filter((r) => r.result.outcome === 'clear' || !r.result.matches.some((m) => m.listId === r.case.listId))
    .map((r) => ({
      variant: r.case.variant,
      name: r.case.name,
      listId: r.case.listId,
      top: r.result.matches[0],
    }));
  const falsePositives = results
    .filter((r) => r.case.variant === 'ordinary' && r.result.outcome !== 'clear')
    .map((r) => ({ name: r.case.name, outcome: r.result.outcome, top: r.result.matches[0] }));
  return {
    rows: [
      ...variants.map((v) => row(`listed: ${v}`, (c) => c.variant === v)),
      row('listed: all', (c) => c.variant !== 'ordinary'),
      row('ordinary: individuals', (c) => c.variant === 'ordinary' && c.kind === 'individual'),
      row('ordinary: organisations', (c) => c.variant === 'ordinary' && c.kind === 'organisation'),
      row('ordinary: all', (c) => c.variant === 'ordinary'),
    ],
    missedListed: missed.map((m) => ({
      variant: m.variant,
      name: m.name,
      listId: m.listId,
      matched: m.top ? `${m.top.listName} (${m.top.score})` : null,
    })),
    falsePositives: falsePositives.map((f) => ({
      name: f.name,
      outcome: f.outcome,
      matched: f.top ? `${f.top.listName} (${f.top.score})` : null,
    })),
  };
}
