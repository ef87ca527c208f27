/**
 * `npm run image:build -- <recipe>`: builds a platform image (offered on every tenant) from Debian
 * packages with mmdebstrap, as root, writing progress to its row in `images` (building → ready or
 * failed). Recipes: debian12-python, pytorch-cpu. Uses DATABASE_URL, else the PGlite data in
 * DATA_DIR (stop the server first: PGlite is one process's database; or, with the server running,
 * POST /api/v1/operate/images/build as a tenant operator).
 */
import path from 'node:path';
import { imageRecipes, type ImageRecipe } from '@suanli/contract/machine';
import { loadConfig } from '../config.ts';
import { openPglite, openPostgres } from '../db/client.ts';
import { createImageService } from '../modules/image/image.service.ts';

const recipe = process.argv[2];
if (!recipe || !(imageRecipes as readonly string[]).includes(recipe)) {
  console.error(`usage: npm run image:build -- <recipe>   (recipes: ${imageRecipes.join(', ')})`);
  process.exit(2);
}
if (process.getuid?.() !== 0) {
  console.error('image:build needs root (mmdebstrap --mode=root). Run: sudo npm run image:build -- ' + recipe);
  process.exit(2);
}
const config = loadConfig();
const database = config.DATABASE_URL ? await openPostgres(config.DATABASE_URL, { max: 2 }) : await openPglite(path.join(config.dataDir, 'db'));
const log = {
  info: (o: object, m?: string) => console.log(`[image:build] ${m ?? ''} ${JSON.stringify(o)}`),
  warn: (o: object, m?: string) => console.error(`[image:build] ${m ?? ''} ${JSON.stringify(o)}`),
};
try {
  const started = Date.now();
  console.log(`[image:build] building ${recipe} into ${path.join(config.dataDir, 'images', recipe)} (progress in the images row; this downloads Debian packages)`);
  const row = await createImageService({ db: database.db, dataDir: config.dataDir, log }).buildPlatformImage(recipe as ImageRecipe);
  const secs = ((Date.now() - started) / 1000).toFixed(0);
  if (row.status === 'ready') console.log(`[image:build] ${row.name} ready in ${secs} s: ${row.contents.join(', ')} (${(row.sizeBytes / 2 ** 20).toFixed(0)} MiB)`);
  else {
    console.error(`[image:build] FAILED after ${secs} s: ${row.error}`);
    process.exitCode = 1;
  }
} finally {
  await database.close();
}
