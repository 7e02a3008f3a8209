import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read configuration through the env schema (src/config/env.ts), not process.env.',
        },
      ],
    },
  },
  {
    files: [
      '**/config/env.ts',
      '**/test/**',
      '**/chaos/**',
      '**/*.spec.ts',
      '**/*.e2e-spec.ts',
      'scripts/**',
      'bench/**',
      '**/testing/src/**',
      '**/jest.*',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // The bench harness (plain Node ESM/CJS scripts): Node's own globals.
    files: ['bench/**/*.mjs', 'bench/**/*.cjs'],
    languageOptions: {
      globals: {
        fetch: 'readonly',
        performance: 'readonly',
        URL: 'readonly',
        crypto: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
  },
);
