/**
 * Issue #9 (upstream): the embedded model on this machine's CPU — load time, time to first token
 * and tokens/s of one stream, and the total tokens/s of `maxConcurrency` streams at once (one
 * context, batched). The bundled SmolLM2-135M-Instruct unless LLM_MODEL_PATH names another GGUF;
 * LLM_THREADS as the server would use it.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmbeddedUpstream } from '../apps/server/src/adapters/llm/embedded.ts';
import { embeddedSettings } from '../apps/server/src/adapters/llm/registry.ts';
import { ensureBundledWeights } from '../apps/server/src/adapters/llm/weights.ts';
import type { ChatMessage, UpstreamRequest } from '../apps/server/src/adapters/llm/port.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

type Run = { ttftMs: number; tokens: number; tokPerS: number };

async function timed(up: ReturnType<typeof createEmbeddedUpstream>, req: UpstreamRequest): Promise<Run> {
  const started = performance.now();
  let first = 0;
  let tokens = 0;
  for await (const ev of up.stream(req, new AbortController().signal)) {
    if (ev.type === 'delta' && !first) first = performance.now();
    if (ev.type === 'usage') tokens = ev.completionTokens;
  }
  const ended = performance.now();
  return { ttftMs: first - started, tokens, tokPerS: ((tokens - 1) * 1000) / (ended - first) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchEmbedded(): Promise<string[]> {
  const dataDir = path.resolve(process.env.DATA_DIR ?? path.join(root, 'data'));
  const settings = embeddedSettings({ dataDir, LLM_MODEL_PATH: process.env.LLM_MODEL_PATH, LLM_THREADS: process.env.LLM_THREADS ? Number(process.env.LLM_THREADS) : undefined });
  if (!process.env.LLM_MODEL_PATH) await ensureBundledWeights({ dataDir });
  const concurrency = 2;
  const up = createEmbeddedUpstream(
    { id: 0, kind: 'embedded', baseUrl: '', apiKey: null, modelPath: '', timeoutMs: 120_000, maxConcurrency: concurrency, version: 'bench' },
    settings,
  );
  const lines: string[] = [];
  try {
    const loadStart = performance.now();
    const health = await up.health();
    if (!health.ok) throw new Error(`embedded model not loaded: ${health.error}`);
    const loadMs = performance.now() - loadStart;
    const messages: ChatMessage[] = [{ role: 'user', content: 'Explain in a few sentences why the sky is blue.' }];
    const req: UpstreamRequest = { model: '', messages, maxTokens: 64, temperature: 0 };
    await timed(up, { ...req, maxTokens: 4 }); // warm-up
    const runs: Run[] = [];
    for (let i = 0; i < 3; i++) runs.push(await timed(up, req));
    const name = health.models[0] ?? path.basename(settings.defaultModelPath);
    lines.push(`[bench] embedded model ${name} (${settings.threads} thread(s)): loaded in ${loadMs.toFixed(0)} ms; one stream of ${runs[0]!.tokens} tokens: time to first token ${median(runs.map((r) => r.ttftMs)).toFixed(0)} ms, ${median(runs.map((r) => r.tokPerS)).toFixed(1)} tokens/s (median of 3)`);
    const started = performance.now();
    const together = await Promise.all(Array.from({ length: concurrency }, () => timed(up, req)));
    const seconds = (performance.now() - started) / 1000;
    const total = together.reduce((n, r) => n + r.tokens, 0);
    lines.push(`[bench] embedded model, ${concurrency} streams at once (one context, batched): ${(total / seconds).toFixed(1)} tokens/s in total, time to first token ${median(together.map((r) => r.ttftMs)).toFixed(0)} ms`);
  } finally {
    await up.close();
  }
  return lines;
}
