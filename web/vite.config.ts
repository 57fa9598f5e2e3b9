import { defineConfig } from 'vite';

// Static assets only: no CDN, no external fonts; hashed names under assets/.
export default defineConfig({
  base: '/',
  build: {
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
