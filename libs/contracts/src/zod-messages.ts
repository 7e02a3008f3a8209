import { z } from 'zod';

type Issue = z.core.$ZodRawIssue;

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  record: 'an object',
  date: 'a date',
};

const SIZE_UNITS: Record<string, string> = { string: 'characters', array: 'items', set: 'items' };

const listed = (values: readonly unknown[]) => values.map((v) => String(v)).join(', ');

function bound(issue: Issue & { code: 'too_small' | 'too_big' }): string {
  const small = issue.code === 'too_small';
  const limit = String(small ? issue.minimum : issue.maximum);
  const unit = SIZE_UNITS[issue.origin ?? ''];
  if (unit && small && issue.inclusive && limit === '1') return 'must not be empty';
  const relation = issue.exact
    ? 'exactly'
    : small
      ? issue.inclusive
        ? 'at least'
        : 'more than'
      : issue.inclusive
        ? 'at most'
        : 'less than';
  if (!unit) return `must be ${relation} ${limit}`;
  return `must ${issue.origin === 'string' ? 'be' : 'hold'} ${relation} ${limit} ${unit}`;
}

/**
 * The house wording of zod's issues, for every schema that names no message of its own: `must be a string`,
 * `is required`, `must be one of a, b`, `must be at most 200 characters` (decision 0483). The exception filters
 * put the field's path in front (`ubos[0].fullName: must be a string`). A schema's own message always wins
 * (zod asks this map only when the schema has none); an issue this map does not word keeps zod's.
 */
export function houseMessage(issue: Issue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${String(issue.values[0])}`
        : `must be one of ${listed(issue.values)}`;
    case 'too_small':
    case 'too_big':
      return bound(issue);
    case 'invalid_format':
      if (issue.format === 'email') return 'must be an email address';
      if (issue.format === 'regex' && 'pattern' in issue) return `must match ${String(issue.pattern)}`;
      return `must be a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    default:
      return undefined;
  }
}

z.config({ customError: houseMessage });
