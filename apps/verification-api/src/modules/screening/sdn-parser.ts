/** One party of a sanctions list, as the screening keeps it. */
export interface SanctionsEntry {
  /** The list's own id (OFAC `ent_num`). */
  id: number;
  type: 'individual' | 'entity' | 'vessel' | 'aircraft';
  /** The primary name as the list writes it (`LAST, First` for individuals). */
  name: string;
  /** `a.k.a.`, `f.k.a.` and `n.k.a.` names. */
  aliases: string[];
  /** Sanctions programmes (`SDGT`, `CUBA`, ...). */
  programs: string[];
  /**
   * Dates of birth: `YYYY-MM-DD`, `YYYY-MM`, `YYYY`, or a year range `YYYY..YYYY` (`circa` and
   * `to` forms of the list).
   */
  dobs: string[];
}

const EMPTY = '-0-';
const MONTHS: Record<string, string> = {
  jan: '01',
  feb: '02',
  mar: '03',
  apr: '04',
  may: '05',
  jun: '06',
  jul: '07',
  aug: '08',
  sep: '09',
  oct: '10',
  nov: '11',
  dec: '12',
};

/** RFC 4180 rows (quoted fields, `""` escapes, commas and line breaks inside quotes). */
export function* csvRows(text: string): Generator<string[]> {
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      field = '';
      if (row.length > 1 || row[0].trim() !== '') yield row;
      row = [];
    } else field += c;
  }
  row.push(field);
  if (row.length > 1 || row[0].trim() !== '') yield row;
}

const value = (field: string | undefined): string => {
  const v = (field ?? '').trim();
  return v === EMPTY ? '' : v;
};

const ALIAS = /\b[afn]\.k\.a\.,?\s+'([^']+)'/gi;
const DOB =
  /\bDOB\s+(circa\s+)?(?:(\d{1,2})\s+([A-Za-z]{3})\s+)?(?:([A-Za-z]{3})\s+)?(\d{4})(?:\s+to\s+(?:\d{1,2}\s+[A-Za-z]{3}\s+)?(\d{4}))?/g;

/** The dates of birth written in an OFAC `Remarks` field. */
export function parseDobs(remarks: string): string[] {
  const out: string[] = [];
  for (const m of remarks.matchAll(DOB)) {
    const [, circa, day, dayMonth, month, year, toYear] = m;
    const y = Number(year);
    if (toYear) out.push(`${year}..${toYear}`);
    else if (circa) out.push(`${y - 1}..${y + 1}`);
    else if (day && MONTHS[dayMonth.toLowerCase()])
      out.push(`${year}-${MONTHS[dayMonth.toLowerCase()]}-${day.padStart(2, '0')}`);
    else if (month && MONTHS[month.toLowerCase()]) out.push(`${year}-${MONTHS[month.toLowerCase()]}`);
    else out.push(year);
  }
  return [...new Set(out)];
}

/** The aliases written in an OFAC `Remarks` field. */
export const parseAliases = (remarks: string): string[] => [
  ...new Set([...remarks.matchAll(ALIAS)].map((m) => m[1].trim()).filter(Boolean)),
];

/**
 * Parses the OFAC SDN list in its legacy CSV form (`sdn.csv`, no header: ent_num, SDN_Name, SDN_Type,
 * Program, Title, Call_Sign, Vess_type, Tonnage, GRT, Vess_flag, Vess_owner, Remarks). When the
 * separate alias file (`alt.csv`: ent_num, alt_num, alt_type, alt_name, alt_remarks) is given, its
 * names join the aliases found in the remarks.
 */
export function parseSdnCsv(sdnCsv: string, altCsv?: string): SanctionsEntry[] {
  const entries = new Map<number, SanctionsEntry>();
  for (const row of csvRows(sdnCsv)) {
    const id = Number(value(row[0]));
    const name = value(row[1]);
    if (!Number.isInteger(id) || !name) continue;
    const type = value(row[2]).toLowerCase();
    const remarks = value(row[11]);
    entries.set(id, {
      id,
      type: type === 'individual' || type === 'vessel' || type === 'aircraft' ? type : 'entity',
      name,
      aliases: parseAliases(remarks),
      programs: value(row[3]).replace(/[[\]]/g, ' ').split(/\s+/).filter(Boolean),
      dobs: parseDobs(remarks),
    });
  }
  if (altCsv) {
    for (const row of csvRows(altCsv)) {
      const entry = entries.get(Number(value(row[0])));
      const alias = value(row[3]);
      if (entry && alias && !entry.aliases.includes(alias)) entry.aliases.push(alias);
    }
  }
  return [...entries.values()];
}
