#!/usr/bin/env node
// The OpenAPI documents of both partner APIs, generated from the zod schemas of libs/contracts
// (docs/openapi.md, docs/decisions/0020).
//
//   node scripts/openapi.mjs generate            writes docs/openapi/verification-api.json and custody-api.json
//   node scripts/openapi.mjs check               regenerates into a temp dir; exit 1 with a diff when a
//                                                committed document differs
//   options: --contracts <dir>  the built libs/contracts to load (default libs/contracts/dist)
//            --docs <dir>       where the committed documents live (default docs/openapi)
//
// Needs a built libs/contracts: `pnpm openapi:generate` and `pnpm openapi:check` build it first.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const DOCUMENTS = [
  { file: 'verification-api.json', build: 'buildVerificationApiDocument' },
  { file: 'custody-api.json', build: 'buildCustodyApiDocument' },
];

function option(args, name, fallback) {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] ? resolve(args[at + 1]) : fallback;
}

/** Writes every document into `outDir`; returns the paths written. */
export function generate(contractsDir, outDir) {
  const entry = join(contractsDir, 'index.js');
  if (!existsSync(entry)) {
    throw new Error(
      `${relative(root, entry)} is missing: build libs/contracts first (pnpm openapi:generate does)`,
    );
  }
  const contracts = createRequire(entry)(entry);
  mkdirSync(outDir, { recursive: true });
  return DOCUMENTS.map(({ file, build }) => {
    const path = join(outDir, file);
    writeFileSync(path, contracts.serializeOpenApi(contracts[build]()));
    return path;
  });
}

/** JSON pointers where two JSON values differ (at most `limit`). */
export function differences(a, b, path = '', out = [], limit = 25) {
  if (out.length >= limit) return out;
  if (a === b) return out;
  const objects =
    a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b);
  if (!objects) {
    out.push(
      `${path || '/'}: committed ${JSON.stringify(a)?.slice(0, 80)} ≠ generated ${JSON.stringify(b)?.slice(0, 80)}`,
    );
    return out;
  }
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  for (const key of keys) {
    const at = `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (!(key in a)) out.push(`${at}: only in the generated document`);
    else if (!(key in b)) out.push(`${at}: only in the committed document`);
    else differences(a[key], b[key], at, out, limit);
    if (out.length >= limit) break;
  }
  if (out.length === 0 && JSON.stringify(Object.keys(a)) !== JSON.stringify(Object.keys(b))) {
    out.push(`${path || '/'}: same keys in another order`);
  }
  return out;
}

/** Compares the committed documents with freshly generated ones; returns the problems found. */
export function check(contractsDir, docsDir) {
  const temp = mkdtempSync(join(tmpdir(), 'tessera-openapi-'));
  try {
    generate(contractsDir, temp);
    const problems = [];
    for (const { file } of DOCUMENTS) {
      const committedPath = join(docsDir, file);
      const generated = readFileSync(join(temp, file), 'utf8');
      if (!existsSync(committedPath)) {
        problems.push(`${relative(root, committedPath)} is missing`);
        continue;
      }
      const committed = readFileSync(committedPath, 'utf8');
      if (committed === generated) continue;
      let diff;
      try {
        diff = differences(JSON.parse(committed), JSON.parse(generated));
      } catch {
        diff = ['the committed file is not valid JSON'];
      }
      if (diff.length === 0) diff = ['formatting differs (whitespace or final newline)'];
      problems.push(
        `${relative(root, committedPath)} differs from the generated document:\n  ${diff.join('\n  ')}`,
      );
    }
    return problems;
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

function main() {
  const [command, ...args] = process.argv.slice(2);
  const contractsDir = option(args, '--contracts', join(root, 'libs/contracts/dist'));
  const docsDir = option(args, '--docs', join(root, 'docs/openapi'));
  if (command === 'generate') {
    for (const path of generate(contractsDir, docsDir)) console.log(`openapi: wrote ${relative(root, path)}`);
    return;
  }
  if (command === 'check') {
    console.log(
      `openapi: regenerating from ${relative(root, contractsDir)} and comparing with ${relative(root, docsDir)}`,
    );
    const problems = check(contractsDir, docsDir);
    if (problems.length === 0) {
      console.log(`openapi: ${DOCUMENTS.length} committed documents match the zod schemas`);
      return;
    }
    console.error(`openapi: the committed OpenAPI documents are stale.\n${problems.join('\n')}`);
    console.error('Run `pnpm openapi:generate` and commit docs/openapi/.');
    process.exitCode = 1;
    return;
  }
  console.error('usage: node scripts/openapi.mjs generate|check [--contracts <dir>] [--docs <dir>]');
  process.exitCode = 2;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (error) {
    console.error(`openapi: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}
