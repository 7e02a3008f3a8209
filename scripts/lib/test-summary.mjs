// The closing lines of `scripts/test.sh`: one count for every runner together (Jest and node --test), then each
// failure by name with the first lines of its reason, last, where a truncated CI log still shows them.
import { readFileSync } from 'node:fs';

/** Lines of a failure's reason kept in the summary. */
const REASON_LINES = 14;
/** Jest's excerpt of the source around the failing line: the stack line after it says where. */
const CODE_FRAME = /^\s*(>\s*)?\d*\s*\|/;
/** turbo's `<package>:<task>: ` prefix, when the line has one. */
const PREFIX = /^(\S+:\S+: )?/;

/** Counts and failures of one combined test log. */
export function summarize(text) {
  let passed = 0;
  let failed = 0;
  for (const m of text.matchAll(
    /Tests:\s+(?:(\d+) failed, )?(?:\d+ skipped, )?(?:(\d+) passed, )?\d+ total/g,
  )) {
    failed += Number(m[1] ?? 0);
    passed += Number(m[2] ?? 0);
  }
  for (const m of text.matchAll(/^# pass (\d+)$/gm)) passed += Number(m[1]);
  for (const m of text.matchAll(/^# fail (\d+)$/gm)) failed += Number(m[1]);
  // Jest colours its source excerpt: without the colour codes it is recognised and dropped.
  // eslint-disable-next-line no-control-regex -- the escape character is what is removed
  return { passed, failed, failures: failures(text.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) };
}

/**
 * Each failing test or file once, in order: `name` as Jest or node --test prints it, and `reason`, the lines
 * after a Jest `●` heading from the same package (turbo interleaves two packages' output), blank lines and
 * the source excerpt dropped, up to the next test or summary line.
 */
function failures(lines) {
  const found = new Map();
  lines.forEach((line, i) => {
    const prefix = line.match(PREFIX)[0];
    const name = line
      .slice(prefix.length)
      .trim()
      .match(/^(● .+ › .+|FAIL .+|not ok \d+ - .+)$/)?.[1];
    if (!name || found.has(name)) return;
    const reason = [];
    if (name.startsWith('●')) {
      for (let j = i + 1; j < lines.length && reason.length < REASON_LINES; j++) {
        if (!lines[j].startsWith(prefix)) continue;
        const rest = lines[j].slice(prefix.length);
        if (/^\s*(●|Tests:|Test Suites:|PASS |FAIL )/.test(rest)) break;
        if (rest.trim() && !CODE_FRAME.test(rest)) reason.push(rest.trimEnd());
      }
    }
    found.set(name, reason);
  });
  return [...found].map(([name, reason]) => ({ name, reason }));
}

/** The summary as printed. */
export function format({ passed, failed, failures: list }) {
  const out = [`\ntests: ${passed} passed, ${failed} failed`];
  for (const { name, reason } of list) {
    out.push(`  failed: ${name}`);
    for (const line of reason) out.push(`      ${line}`);
  }
  return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(format(summarize(readFileSync(process.argv[2], 'utf8'))));
}
