import { nameTokens, sortedKey } from './name-normalizer';
import { SanctionsListRepository } from './sanctions-list.repository';
import { dobAgreement } from './screening-rules';
import { qualityReport } from './screening-quality';
import { ScreeningService } from './screening.service';
import { parseAliases, parseDobs, parseSdnCsv } from './sdn-parser';

describe('sdn-parser', () => {
  it('reads names, types, programmes, aliases and dates of birth of the legacy CSV', () => {
    const csv = [
      '306,"BANCO NACIONAL DE CUBA",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"a.k.a. \'BNC\'."',
      '2676,"AL ZAWAHIRI, Dr. Ayman","individual","SDGT] [IRGC","Leader",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"DOB 19 Jun 1951; alt. DOB circa 1950; a.k.a. \'AL-ZAWAHIRI, Aiman\'; f.k.a. \'THE DOCTOR\'."',
    ].join('\r\n');
    expect(parseSdnCsv(csv)).toEqual([
      {
        id: 306,
        type: 'entity',
        name: 'BANCO NACIONAL DE CUBA',
        aliases: ['BNC'],
        programs: ['CUBA'],
        dobs: [],
      },
      {
        id: 2676,
        type: 'individual',
        name: 'AL ZAWAHIRI, Dr. Ayman',
        aliases: ['AL-ZAWAHIRI, Aiman', 'THE DOCTOR'],
        programs: ['SDGT', 'IRGC'],
        dobs: ['1951-06-19', '1949..1951'],
      },
    ]);
  });

  it('reads every date form of the remarks', () => {
    expect(
      parseDobs('DOB 1960; alt. DOB Mar 1961; DOB 1962 to 1964; DOB 01 Jan 1970 to 31 Dec 1971'),
    ).toEqual(['1960', '1961-03', '1962..1964', '1970..1971']);
    expect(parseAliases("a.k.a. 'A B'; n.k.a. 'C D'")).toEqual(['A B', 'C D']);
  });
});

describe('name-normalizer', () => {
  it('turns LAST, First around and drops titles, accents, punctuation and case', () => {
    expect(nameTokens('AL ZAWAHIRI, Dr. Ayman', 'individual')).toEqual(['ayman', 'al', 'zawahiri']);
    expect(sortedKey(nameTokens('Ayman Al-Zawahiri', 'individual'))).toBe(
      sortedKey(nameTokens('AL ZAWAHIRI, Dr. Ayman', 'individual')),
    );
    expect(nameTokens('José Ñúñez-Müller', 'individual')).toEqual(['jose', 'nunez', 'muller']);
    expect(nameTokens('Banco Nacional de Cuba S.A.', 'organisation')).toEqual(['banco', 'nacional', 'cuba']);
  });
});

describe('dobAgreement', () => {
  it('compares exact dates, months, years and ranges', () => {
    expect(dobAgreement(['1951-06-19'], '1951-06-19')).toBe('agrees');
    expect(dobAgreement(['1951'], '1951-06-19')).toBe('agrees');
    expect(dobAgreement(['1949..1952'], '1951-06-19')).toBe('agrees');
    expect(dobAgreement(['1951-06-20'], '1951-06-19')).toBe('disagrees');
    expect(dobAgreement([], '1951-06-19')).toBe('unknown');
    expect(dobAgreement(['1951'], undefined)).toBe('unknown');
  });
});

describe('ScreeningService on the bundled OFAC SDN snapshot', () => {
  const screening = new ScreeningService(new SanctionsListRepository());

  it('catches the listed entity and the listed individual written the applicant way', () => {
    const bank = screening.screen({ kind: 'organisation', names: ['BANCO NACIONAL DE CUBA'] });
    expect(bank.outcome).toBe('hit');
    expect(bank.matches[0]).toMatchObject({ listId: 306, type: 'entity', programs: ['CUBA'] });
    const person = screening.screen({
      kind: 'individual',
      names: ['Ayman Al-Zawahiri'],
      dateOfBirth: '1951-06-19',
    });
    expect(person.outcome).toBe('hit');
    expect(person.matches[0]).toMatchObject({
      listId: 2676,
      listName: 'AL ZAWAHIRI, Dr. Ayman',
      dateOfBirth: 'agrees',
    });
  });

  it('sends a near miss to review, and clears ordinary names and a contradicted partial match', () => {
    expect(screening.screen({ kind: 'individual', names: ['Ayman Mohammed Al Zawahiri'] }).outcome).toBe(
      'possible_match',
    );
    expect(
      screening.screen({
        kind: 'individual',
        names: ['Ayman Mohammed Al Zawahiri'],
        dateOfBirth: '1985-02-03',
      }).outcome,
    ).toBe('clear');
    expect(screening.screen({ kind: 'individual', names: ['Emma Lindqvist'] })).toMatchObject({
      outcome: 'clear',
      matches: [],
    });
    expect(screening.screen({ kind: 'organisation', names: ['Lakeside Bakery Ltd'] }).outcome).toBe('clear');
  });

  it('meets the quality goal: at least 98 % of listed names caught, at most 1 % false positives', () => {
    const { rows } = qualityReport(screening);
    const listed = rows.find((r) => r.set === 'listed: all');
    const ordinary = rows.find((r) => r.set === 'ordinary: all');
    expect(listed?.names).toBeGreaterThanOrEqual(200);
    expect(ordinary?.names).toBeGreaterThanOrEqual(200);
    expect(listed?.rate).toBeGreaterThanOrEqual(98);
    expect(ordinary?.rate).toBeLessThanOrEqual(1);
  });
});
