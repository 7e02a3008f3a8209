// Shared Jest settings: swc compiles TypeScript (decorators and their metadata included) and the ESM-only packages.
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

module.exports = (overrides = {}) => ({
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest', swc] },
  transformIgnorePatterns: [
    '/node_modules/\\.pnpm/(?!(@noble|@scure|uuid|nanoid|content-disposition)[^/]*@)',
  ],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts', '<rootDir>/test/**/*.spec.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
  ...overrides,
});
