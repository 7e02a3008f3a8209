// scripts/lib/test-summary.mjs: the closing lines of `pnpm test`, which are all a truncated CI log keeps.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { format, summarize } from './lib/test-summary.mjs';

// Two packages' Jest output interleaved as turbo prints it, and node --test's TAP.
const LOG = `@tessera/verification-api:test: FAIL test/uploads.e2e-spec.ts (16.3 s)
@tessera/verification-api:test:   ● connections › an upload that stalls is cut
@tessera/custody-api:test: PASS test/custody.e2e-spec.ts
@tessera/verification-api:test:
@tessera/verification-api:test:     expect(received).toEqual(expected) // deep equality
@tessera/custody-api:test: PASS test/policies.e2e-spec.ts
@tessera/verification-api:test:     -   "status": 408,
@tessera/verification-api:test:     +   "status": 504,
@tessera/verification-api:test:       104 |     await read(stored.body.id).expect(200);
@tessera/verification-api:test:     > 106 |       expect(await upload.end()).toEqual({ status: 408 });
@tessera/verification-api:test:           |                                  ^
@tessera/verification-api:test:       at Object.<anonymous> (test/uploads.e2e-spec.ts:106:34)
@tessera/verification-api:test:
@tessera/verification-api:test:   ● connections › a read answers at once
@tessera/verification-api:test:
@tessera/verification-api:test:     thrown: "Exceeded timeout of 10000 ms for a test."
@tessera/verification-api:test: Tests:       2 failed, 9 passed, 11 total
@tessera/custody-api:test: Tests:       71 passed, 71 total
not ok 3 - a bad command line gets its reason
# pass 34
# fail 1
`;

test('counts every runner together', () => {
  const { passed, failed } = summarize(LOG);
  assert.deepEqual({ passed, failed }, { passed: 114, failed: 3 });
});

test("each failure once, with its reason from its own package's lines, without the source excerpt", () => {
  assert.deepEqual(summarize(LOG).failures, [
    { name: 'FAIL test/uploads.e2e-spec.ts (16.3 s)', reason: [] },
    {
      name: '● connections › an upload that stalls is cut',
      reason: [
        '    expect(received).toEqual(expected) // deep equality',
        '    -   "status": 408,',
        '    +   "status": 504,',
        '      at Object.<anonymous> (test/uploads.e2e-spec.ts:106:34)',
      ],
    },
    {
      name: '● connections › a read answers at once',
      reason: ['    thrown: "Exceeded timeout of 10000 ms for a test."'],
    },
    { name: 'not ok 3 - a bad command line gets its reason', reason: [] },
  ]);
});

test('the printed summary ends with the failures and their reasons', () => {
  const lines = format(summarize(LOG)).split('\n');
  assert.equal(lines[1], 'tests: 114 passed, 3 failed');
  assert.ok(lines.includes('  failed: ● connections › a read answers at once'));
  assert.ok(lines.includes('          thrown: "Exceeded timeout of 10000 ms for a test."'));
});
