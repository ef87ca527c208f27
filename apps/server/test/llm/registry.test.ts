import { describe, expect, it } from 'vitest';
import type { UpstreamConfig } from '../../src/adapters/llm/port.ts';
import { createUpstreamRegistry, embeddedSettings, ensureEmbeddedWeights } from '../../src/adapters/llm/registry.ts';

const embedded = (over: Partial<UpstreamConfig> = {}): UpstreamConfig => ({
  id: 1,
  kind: 'embedded',
  baseUrl: '',
  apiKey: null,
  modelPath: '/nonexistent/a.gguf',
  timeoutMs: 1_000,
  maxConcurrency: 1,
  version: 'v1',
  ...over,
});

describe('upstream registry', () => {
  it('builds by kind, caches by id, rebuilds and closes the old one when the version changes', async () => {
    const calls: string[] = [];
    const fetchStub: typeof fetch = (input) => {
      calls.push(String(input));
      return Promise.resolve(Response.json({ data: [{ id: 'm' }] }));
    };
    const registry = createUpstreamRegistry({ defaultModelPath: '/unused.gguf', threads: 1, fetch: fetchStub });
    const a = registry.get(embedded());
    expect(a.kind).toBe('embedded');
    expect(registry.get(embedded())).toBe(a);
    const b = registry.get(embedded({ version: 'v2' }));
    expect(b).not.toBe(a);
    expect(registry.get(embedded({ version: 'v2' }))).toBe(b);
    await new Promise((r) => setTimeout(r, 0));
    // the old adapter was closed: it refuses calls as closed; the new one only lacks its file
    await expect(a.countPromptTokens('x', [])).rejects.toMatchObject({ failure: 'unavailable', message: expect.stringMatching(/closed/) });
    await expect(b.countPromptTokens('x', [])).rejects.toMatchObject({ failure: 'unavailable', message: expect.stringMatching(/not found: \/nonexistent\/a\.gguf/) });

    const o = registry.get({ ...embedded({ id: 2, kind: 'openai', baseUrl: 'http://upstream.test/v1/' }) });
    expect(o.kind).toBe('openai');
    expect(await o.health()).toMatchObject({ ok: true, models: ['m'] });
    expect(calls).toEqual(['http://upstream.test/v1/models']);

    await registry.forget(1);
    await expect(b.countPromptTokens('x', [])).rejects.toMatchObject({ message: expect.stringMatching(/closed/) });
    const c = registry.get(embedded({ version: 'v2' }));
    expect(c).not.toBe(b);
    await registry.closeAll();
    await expect(c.countPromptTokens('x', [])).rejects.toMatchObject({ message: expect.stringMatching(/closed/) });
    expect(registry.get({ ...embedded({ id: 2, kind: 'openai', baseUrl: 'http://upstream.test/v1' }) })).not.toBe(o);
  });

  it('an embedded upstream with modelPath "" uses the default model path', async () => {
    const registry = createUpstreamRegistry({ defaultModelPath: '/default/model.gguf', threads: 1 });
    const up = registry.get(embedded({ modelPath: '' }));
    expect((await up.health()).error).toMatch(/\/default\/model\.gguf/);
  });
});

describe('embedded settings at start-up', () => {
  const recorder = () => {
    const warnings: string[] = [];
    return { warnings, log: { info: () => {}, warn: (_o: object, msg: string) => warnings.push(msg) } };
  };

  it('LLM_MODEL_PATH wins over the bundled model; LLM_THREADS is passed on', () => {
    expect(embeddedSettings({ dataDir: '/srv/data', LLM_MODEL_PATH: '/models/qwen.gguf', LLM_THREADS: 3 })).toEqual({ defaultModelPath: '/models/qwen.gguf', threads: 3 });
    expect(embeddedSettings({ dataDir: '/srv/data' }).defaultModelPath).toBe('/srv/data/models/SmolLM2-135M-Instruct.Q4_1.gguf');
    expect(embeddedSettings({ dataDir: '/srv/data' }).threads).toBeGreaterThanOrEqual(1);
  });

  it('a missing LLM_MODEL_PATH or a failed fetch is a warning naming the cause, not a crash', async () => {
    const a = recorder();
    expect(await ensureEmbeddedWeights({ dataDir: '/tmp', LLM_MODEL_PATH: '/nonexistent/qwen.gguf' }, a.log)).toBe(false);
    expect(a.warnings.join()).toMatch(/LLM_MODEL_PATH \/nonexistent\/qwen\.gguf does not exist/);
    const b = recorder();
    expect(await ensureEmbeddedWeights({ dataDir: '/dev/null/data' }, b.log)).toBe(false);
    expect(b.warnings.join()).toMatch(/bundled weights could not be fetched \(.*ENOTDIR.*\).*starts without the embedded model/);
  });
});
