import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, renderHook } from '@testing-library/react';
import { useSmsCountdown } from './useSmsCountdown.ts';

describe('useSmsCountdown', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('counts the resend wait down per phone, whichever form sent the code', () => {
    const a = renderHook(({ phone }) => useSmsCountdown(phone), { initialProps: { phone: '13800000001' } });
    expect(a.result.current.remaining).toBe(0);
    act(() => a.result.current.start('13800000001', 60));
    expect(a.result.current.remaining).toBe(60);

    // Another form (say 忘记密码) for the same phone sees the same wait; another phone doesn't.
    const b = renderHook(() => useSmsCountdown('13800000001'));
    expect(b.result.current.remaining).toBe(60);
    a.rerender({ phone: '13800000002' });
    expect(a.result.current.remaining).toBe(0);

    act(() => void vi.advanceTimersByTime(30_000));
    expect(b.result.current.remaining).toBe(30);
    act(() => void vi.advanceTimersByTime(30_000));
    expect(b.result.current.remaining).toBe(0);
  });

  it('survives a reload of the page within the tab', async () => {
    const first = renderHook(() => useSmsCountdown('13800000003'));
    act(() => first.result.current.start('13800000003', 60));
    vi.resetModules();
    const fresh = await import('./useSmsCountdown.ts');
    const again = renderHook(() => fresh.useSmsCountdown('13800000003'));
    expect(again.result.current.remaining).toBe(60);
  });
});
