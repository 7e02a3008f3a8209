import { defineConfig } from 'vite';

// The page lives at {PUBLIC_BASE_URL}/sdk/{shortCode}; verification-api serves dist/index.html there and
// dist/assets/* under /sdk/assets/. Nothing inline (the CSP has no 'unsafe-inline'), no external URL.
export default defineConfig({
  root: 'src',
  base: '/sdk/',
  publicDir: false,
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2020',
    sourcemap: false,
  },
});
