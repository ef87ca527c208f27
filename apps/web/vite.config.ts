import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  server: {
    port: 5173,
    proxy: Object.fromEntries(['/api', '/user', '/ucenter', '/dev'].map((p) => [p, { target: 'http://localhost:8080', changeOrigin: false }])),
  },
  build: {
    target: 'es2022',
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      // @rc-component/form declares no `sideEffects`, so every antd input that reads the form's
      // context (antd/es/form/context.js imports its FormProvider) dragged the whole form library
      // and its validator into pages without a form, /login among them. Its modules are pure.
      treeshake: {
        moduleSideEffects: (id) => (/node_modules[\\/]@rc-component[\\/](form|async-validator)[\\/]/.test(id) ? false : undefined),
      },
      output: {
        manualChunks(id) {
          if (id.includes('node_modules/react') || id.includes('node_modules/react-dom') || id.includes('node_modules/scheduler')) return 'react';
          if (id.includes('node_modules/react-router')) return 'router';
          return undefined;
        },
      },
    },
  },
});
