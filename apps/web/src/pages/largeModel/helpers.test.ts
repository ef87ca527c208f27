import { describe, expect, it } from 'vitest';
import type { ModelItem, UsageRow } from '@suanli/contract/llm';
import { curlExample, daysBetween, filterModels, formatContext, ipLines, limitRuleOf, limitText, pythonExample, quotaUnits, tagsOf, titleFrom, usageBy, usageByDay } from './helpers.ts';

const model = (id: string, tags: string[], extra: Partial<ModelItem> = {}): ModelItem => ({
  id,
  name: id.toUpperCase(),
  provider: 'HF',
  description: '',
  tags,
  contextLength: 2048,
  inputPrice: 1,
  outputPrice: 2,
  ...extra,
});

describe('model square helpers', () => {
  const list = [model('smollm2', ['对话', '小模型']), model('qwen', ['对话', '中文'], { description: '通义千问' }), model('coder', ['代码'])];
  it('filters by keyword over name, id, provider, description, and by tag', () => {
    expect(filterModels(list, '', null).map((m) => m.id)).toEqual(['smollm2', 'qwen', 'coder']);
    expect(filterModels(list, 'QWEN', null).map((m) => m.id)).toEqual(['qwen']);
    expect(filterModels(list, '千问', null).map((m) => m.id)).toEqual(['qwen']);
    expect(filterModels(list, '', '对话').map((m) => m.id)).toEqual(['smollm2', 'qwen']);
    expect(filterModels(list, 'coder', '对话')).toEqual([]);
    expect(tagsOf(list)).toEqual(['对话', '小模型', '中文', '代码']);
  });
  it('formats context lengths', () => {
    expect(formatContext(8192)).toBe('8K');
    expect(formatContext(128_000)).toBe('128K');
    expect(formatContext(1_000_000)).toBe('1M');
    expect(formatContext(300)).toBe('300');
    expect(formatContext(32_769)).toBe('33K');
  });
  it('builds examples for the model against the origin', () => {
    expect(curlExample('http://a.test:8080/', 'm-1')).toContain('curl http://a.test:8080/v1/chat/completions');
    expect(curlExample('http://a.test', 'm-1')).toContain('"model":"m-1"');
    expect(pythonExample('http://a.test', 'm-1')).toContain('base_url="http://a.test/v1"');
  });
  it('titles a conversation from its first line', () => {
    expect(titleFrom('  hello\nworld ')).toBe('hello world');
    expect(titleFrom('一'.repeat(30))).toBe(`${'一'.repeat(24)}…`);
  });
});

describe('API key form helpers', () => {
  it('converts a yuan quota to integer units exactly', () => {
    expect(quotaUnits('')).toBeNull();
    expect(quotaUnits(null)).toBeNull();
    expect(quotaUnits('10')).toBe(100_000);
    expect(quotaUnits('0.0001')).toBe(1);
    expect(quotaUnits(19.99)).toBe(199_900);
    expect(quotaUnits('0.00001')).toBe('invalid');
    expect(quotaUnits('0')).toBe('invalid');
    expect(quotaUnits('-1')).toBe('invalid');
    expect(quotaUnits('abc')).toBe('invalid');
  });
  it('reads the IP allow-list one per line', () => {
    expect(ipLines(' 1.2.3.4 \n\n10.0.0.0/8\r\n1.2.3.4\n')).toEqual(['1.2.3.4', '10.0.0.0/8']);
    expect(ipLines('')).toEqual([]);
  });
  it('turns limit rows into rules and rules into text', () => {
    expect(limitRuleOf({ window: 'day', unit: 'money', amount: '1.5' })).toEqual({ window: 'day', unit: 'money', limit: 15_000 });
    expect(limitRuleOf({ window: '5h', unit: 'tokens', amount: 1000 })).toEqual({ window: '5h', unit: 'tokens', limit: 1000 });
    expect(limitRuleOf({ window: '5h', unit: 'tokens', amount: '1.5' })).toBeNull();
    expect(limitRuleOf({ window: '5h', unit: 'tokens', amount: '' })).toBeNull();
    expect(limitRuleOf({ unit: 'tokens', amount: 5 })).toBeNull();
    const label = (w: string) => ({ '5h': '5 小时', day: '每天', week: '每周', month: '每月' })[w] ?? w;
    expect(limitText({ window: 'day', unit: 'money', limit: 15_000 }, label, 'tokens')).toBe('每天 ≤ ¥1.50');
    expect(limitText({ window: '5h', unit: 'tokens', limit: 100_000 }, label, 'tokens')).toBe('5 小时 ≤ 100,000 tokens');
  });
});

describe('usage grouping', () => {
  const row = (day: string, model: string, keyId: string | null, cost: number, requests = 1): UsageRow => ({
    day,
    model,
    keyId,
    keyName: keyId ? `key-${keyId}` : null,
    requests,
    errors: 0,
    promptTokens: 10 * requests,
    completionTokens: 20 * requests,
    cost,
  });
  const rows = [row('2026-11-20', 'a', 'k1', 5), row('2026-11-20', 'b', null, 7, 2), row('2026-11-22', 'a', 'k1', 1)];
  it('lists every day of the range', () => {
    expect(daysBetween('2026-11-28', '2026-12-02')).toEqual(['2026-11-28', '2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02']);
    expect(daysBetween('2026-11-28', '2026-11-28')).toEqual(['2026-11-28']);
  });
  it('sums per day with zeros for quiet days', () => {
    const byDay = usageByDay(rows, daysBetween('2026-11-20', '2026-11-22'));
    expect(byDay.map((d) => [d.key, d.requests, d.cost, d.promptTokens])).toEqual([
      ['2026-11-20', 3, 12, 30],
      ['2026-11-21', 0, 0, 0],
      ['2026-11-22', 1, 1, 10],
    ]);
  });
  it('sums per model and per key, the chat under its own label, most costly first', () => {
    expect(usageBy(rows, 'model', '对话').map((g) => [g.label, g.cost, g.requests])).toEqual([
      ['b', 7, 2],
      ['a', 6, 2],
    ]);
    expect(usageBy(rows, 'key', '对话').map((g) => [g.label, g.cost])).toEqual([
      ['对话', 7],
      ['key-k1', 6],
    ]);
  });
});
