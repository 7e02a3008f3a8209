// node --test scripts/openapi.test.mjs (`pnpm test:openapi`; needs a built libs/contracts).
// The drift check passes on the committed documents and fails, naming the difference, when a zod schema
// changes without regeneration or when a committed document is edited by hand.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const script = join(root, 'scripts/openapi.mjs');
const contracts = join(root, 'libs/contracts/dist');

const run = (...args) =>
  spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });

test('the committed documents match the schemas', () => {
  const result = run('check');
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /2 committed documents match/);
});

test('a schema changed without regeneration fails the check with the changed field', (t) => {
  // A copy of the built contracts beside the real one (so `zod` resolves), with one schema changed:
  // POST /vaults externalId now allows 100 characters instead of 200.
  const copy = join(root, 'libs/contracts', `.openapi-drift-${process.pid}`);
  t.after(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(contracts, copy, { recursive: true });
  const file = join(copy, 'custody-api.js');
  const source = readFileSync(file, 'utf8');
  const original = 'externalId: zod_1.z.string().trim().min(1).max(200)';
  assert.ok(source.includes(original), 'the compiled createVaultSchema changed shape: update this test');
  writeFileSync(file, source.replace(original, 'externalId: zod_1.z.string().trim().min(1).max(100)'));

  const result = run('check', '--contracts', copy);
  assert.equal(result.status, 1);
  assert.match(result.stderr, /docs\/openapi\/custody-api\.json differs from the generated document/);
  assert.match(
    result.stderr,
    /\/components\/schemas\/VaultCreate\/properties\/externalId\/maxLength: committed 200 ≠ generated 100/,
  );
  assert.match(result.stderr, /Run `pnpm openapi:generate`/);
  assert.doesNotMatch(result.stderr, /verification-api\.json differs/);
});

test('a hand-edited committed document fails the check', (t) => {
  const docs = mkdtempSync(join(tmpdir(), 'tessera-openapi-docs-'));
  t.after(() => rmSync(docs, { recursive: true, force: true }));
  cpSync(join(root, 'docs/openapi'), docs, { recursive: true });
  const path = join(docs, 'verification-api.json');
  const document = JSON.parse(readFileSync(path, 'utf8'));
  document.paths['/v1/applicants'].post.summary = 'edited';
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);

  const result = run('check', '--docs', docs);
  assert.equal(result.status, 1);
  assert.match(result.stderr, /verification-api\.json differs/);
  assert.match(result.stderr, /\/paths\/~1v1~1applicants\/post\/summary: committed "edited"/);
});

test('a reformatted committed document fails the check (the files are byte-for-byte generated)', (t) => {
  const docs = mkdtempSync(join(tmpdir(), 'tessera-openapi-docs-'));
  t.after(() => rmSync(docs, { recursive: true, force: true }));
  cpSync(join(root, 'docs/openapi'), docs, { recursive: true });
  const path = join(docs, 'custody-api.json');
  writeFileSync(path, JSON.stringify(JSON.parse(readFileSync(path, 'utf8'))));

  const result = run('check', '--docs', docs);
  assert.equal(result.status, 1);
  assert.match(result.stderr, /custody-api\.json differs[\s\S]*formatting differs/);
});

test('generation is deterministic', (t) => {
  const out = mkdtempSync(join(tmpdir(), 'tessera-openapi-out-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  assert.equal(run('generate', '--docs', out).status, 0);
  const first = readFileSync(join(out, 'verification-api.json'), 'utf8');
  assert.equal(run('generate', '--docs', out).status, 0);
  assert.equal(readFileSync(join(out, 'verification-api.json'), 'utf8'), first);
});
