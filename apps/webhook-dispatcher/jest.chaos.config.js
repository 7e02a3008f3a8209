// The chaos suite (issue 15): `pnpm test:chaos`. Each file bounds its own time and stops what it started.
module.exports = require('../../jest.base.js')({
  testMatch: ['<rootDir>/chaos/**/*.chaos-spec.ts'],
  maxWorkers: 1,
  testTimeout: 420000,
});
