/**
 * Name normalisation shared by the list index and the screened names, so both meet in one form:
 * - `LAST, First` (how the list writes individuals) becomes `First LAST`;
 * - accents are removed (NFKD, combining marks dropped) and a few letters with no decomposition are
 *   spelled out (ß, æ, ø, ł, đ, ı);
 * - lower case; punctuation and hyphens become spaces; apostrophes and the dots of initials vanish
 *   (`O'Neil` = `ONeil`, `S.A.` = `SA`);
 * - honorifics (Dr., Mr., Sheikh, ...) and, for organisations, legal forms (Ltd, S.A., LLC, ...) are
 *   dropped: they say nothing about who is named;
 * - the remaining words, sorted, give the order-free key compared by the matcher.
 */

const TITLES = new Set([
  'dr',
  'mr',
  'mrs',
  'ms',
  'miss',
  'mx',
  'prof',
  'professor',
  'sir',
  'dame',
  'lord',
  'lady',
  'sheikh',
  'shaykh',
  'sheik',
  'haji',
  'hajji',
  'imam',
  'mullah',
  'maulana',
  'general',
  'gen',
  'col',
  'colonel',
  'capt',
  'captain',
  'major',
  'lt',
  'rev',
  'father',
  'jr',
  'sr',
  'ii',
  'iii',
]);

const ORGANISATION_NOISE = new Set([
  'ltd',
  'limited',
  'llc',
  'inc',
  'incorporated',
  'corp',
  'corporation',
  'co',
  'company',
  'sa',
  'de',
  'cv',
  'srl',
  'sarl',
  'gmbh',
  'ag',
  'bv',
  'nv',
  'plc',
  'lp',
  'llp',
  'pte',
  'pvt',
  'jsc',
  'ojsc',
  'cjsc',
  'pjsc',
  'ooo',
  'zao',
  'oao',
  'fze',
  'fzco',
  'fzc',
  'sal',
  'spa',
  'sas',
  'the',
  'and',
  'of',
]);

const SPELLED: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
};

export type PartyKind = 'individual' | 'organisation';

/** Lower case, no accents, no punctuation: the bare letters and digits of `text`, space-separated. */
export function fold(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .replace(/[ßæœøłđðþı]/g, (c) => SPELLED[c] ?? c)
      // `S.A.` -> `sa`, `O'Neil` -> `oneil`; a dot between words (`J.Smith`) still separates them.
      .replace(/\.(?=\p{L}\.|\s|$)|['’`´]/gu, '')
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim()
  );
}

/** The words that identify a party, in the written order (`LAST, First` turned to `First LAST`). */
export function nameTokens(name: string, kind: PartyKind): string[] {
  let text = name;
  if (kind === 'individual') {
    const comma = text.indexOf(',');
    if (comma > 0) text = `${text.slice(comma + 1)} ${text.slice(0, comma)}`;
  }
  const words = fold(text).split(' ').filter(Boolean);
  const noise = kind === 'individual' ? TITLES : ORGANISATION_NOISE;
  const kept = words.filter((word) => !noise.has(word));
  return kept.length > 0 ? kept : words;
}

/** The order-free key of a name: its tokens sorted and joined by one space. */
export const sortedKey = (tokens: readonly string[]): string => [...tokens].sort().join(' ');
