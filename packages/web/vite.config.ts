// Vite 8 builds the console with its own Oxc JSX transform set to Preact's automatic runtime (no
// @preact/preset-vite: it would pull Babel). `base: '/ui/'` because the daemon serves the app
// there; no module-preload polyfill so the built index.html holds no inline script (the /ui CSP
// allows scripts and styles from 'self' only).
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/ui/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
