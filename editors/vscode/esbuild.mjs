// Bundles the extension (dist/extension.js, vscode-languageclient and markdown-it inlined) and the
// Chat view's page (dist/chat.js), or, with --tests,
// the unit tests (out/test/unit/*.test.js) so that `node --test` runs them without a TS loader.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const common = { bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' };
if (process.argv.includes('--tests')) {
  const dir = 'test/unit';
  const entryPoints = fs.readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => path.join(dir, f));
  fs.rmSync('out', { recursive: true, force: true });
  // `vscode` exists only inside VS Code: the tests get a small stand-in.
  await esbuild.build({ ...common, entryPoints, outdir: 'out/test/unit', alias: { vscode: './test/unit/vscode-stub.ts' } });
} else {
  await esbuild.build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    external: ['vscode'],
    sourcemap: process.argv.includes('--sourcemap'),
    minify: process.argv.includes('--minify'),
  });
  // The Chat view's page, for the webview (a browser, not node).
  await esbuild.build({
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    logLevel: 'warning',
    entryPoints: ['src/webview/chatPage.ts'],
    outfile: 'dist/chat.js',
    minify: process.argv.includes('--minify'),
  });
}
