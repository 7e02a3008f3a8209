import { isCalendarDate, isPastDate } from './dates';

describe('calendar dates', () => {
  it('takes the days that exist and refuses those Date.parse rolls over', () => {
    for (const ok of ['2024-02-29', '2000-02-29', '1999-12-31', '2031-01-01'])
      expect(isCalendarDate(ok)).toBe(true);
    for (const bad of [
      '2023-02-29',
      '1900-02-29',
      '2024-02-30',
      '2024-04-31',
      '2024-13-01',
      '2024-00-10',
      '2024-1-01',
      '',
    ])
      expect(isCalendarDate(bad)).toBe(false);
  });

  it('a past date is a calendar date not after today', () => {
    expect(isPastDate('1990-02-28')).toBe(true);
    expect(isPastDate('1990-02-31')).toBe(false);
    expect(isPastDate(`${new Date().getUTCFullYear() + 1}-01-01`)).toBe(false);
  });
});
