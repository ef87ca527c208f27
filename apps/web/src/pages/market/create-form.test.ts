import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, renderHook } from '@testing-library/react';
import type { ImageItem, MachineItem } from '@suanli/contract/machine';
import { pricePreviewBody, createPaygOrderBody, createPrepayOrderBody } from '@suanli/contract/order';
import { diskBounds, formProblem, initialForm, maxGpus, orderInput, previewBody, useDebounced, PREVIEW_DEBOUNCE_MS, type CreateForm } from './create-form.ts';

const machine = (over: Partial<MachineItem> = {}): MachineItem => ({
  id: 7,
  datacenterId: 1,
  datacenterName: '华东一区',
  hostName: 'gpu-07',
  gpuType: { id: 2, name: 'RTX 4090', memoryGb: 24, vendor: 'NVIDIA' },
  gpuTotal: 8,
  gpuFree: 3,
  cpuPerGpu: 8,
  memoryGbPerGpu: 32,
  systemDiskGb: 30,
  dataDiskFreeGb: 50,
  dataDiskMaxGb: 500,
  dataDiskPricePerGbDay: 100,
  prices: { hour: 36_000, day: 800_000, week: 5_000_000, month: 19_000_000, year: 200_000_000 },
  tags: [],
  online: true,
  demo: true,
  rentable: true,
  ...over,
});
const image = (id: number, status: ImageItem['status'] = 'ready'): ImageItem => ({ id, name: `img${id}`, description: '', os: 'Debian 12', contents: [], status, progress: status === 'ready' ? 100 : 40, sizeBytes: 1, createdAt: '2026-01-01T00:00:00Z' });
const images = [image(1, 'building'), image(2), image(3, 'failed')];
const form = (over: Partial<CreateForm> = {}): CreateForm => ({ ...initialForm(machine(), images), ...over });

describe('create form', () => {
  it('starts with one GPU, pay-as-you-go, the first ready image (not a building one) and the free disk size', () => {
    expect(initialForm(machine(), images)).toEqual({ gpuCount: 1, charge: 'payg', quantity: 1, imageId: 2, dataDiskGb: 50, name: '' });
  });

  it('offers 1..min(8, free) GPUs', () => {
    expect(maxGpus(machine({ gpuFree: 3 }))).toBe(3);
    expect(maxGpus(machine({ gpuFree: 12 }))).toBe(8);
    expect(maxGpus(machine({ gpuFree: 0 }))).toBe(0);
    expect(formProblem(form({ gpuCount: 4 }), machine(), images)).toBe('gpu');
    expect(formProblem(form({ gpuCount: 0 }), machine(), images)).toBe('gpu');
    expect(formProblem(form({ gpuCount: 3 }), machine(), images)).toBeNull();
  });

  it('asks no price for a sold-out machine, a building or failed image, a bad disk or quantity', () => {
    expect(previewBody(form(), machine({ gpuFree: 0, rentable: false }), images)).toBeNull();
    expect(previewBody(form({ imageId: 1 }), machine(), images)).toBeNull();
    expect(previewBody(form({ imageId: 3 }), machine(), images)).toBeNull();
    expect(previewBody(form({ imageId: null }), machine(), images)).toBeNull();
    expect(formProblem(form({ dataDiskGb: 501 }), machine(), images)).toBe('disk');
    const disk = { systemDiskGb: 30, dataDiskFreeGb: 50, dataDiskMaxGb: 500, stepGb: 10, pricePerGbDay: 100 };
    expect(diskBounds(machine(), disk)).toEqual({ min: 10, max: 500, step: 10, free: 50 });
    expect(formProblem(form({ dataDiskGb: 55 }), machine(), images, disk)).toBe('diskStep');
    expect(formProblem(form({ charge: 'month', quantity: 13 }), machine(), images)).toBe('quantity');
    expect(formProblem(form({ charge: 'year', quantity: 3 }), machine(), images)).toBeNull();
    expect(formProblem(form({ name: 'x'.repeat(33) }), machine(), images)).toBe('name');
  });

  it('builds preview and order bodies the contract accepts', () => {
    const payg = previewBody(form({ gpuCount: 2 }), machine(), images);
    expect(payg).toEqual({ machineId: 7, gpuCount: 2, imageId: 2, dataDiskGb: 50, chargeType: 'payg' });
    expect(pricePreviewBody.safeParse(payg).success).toBe(true);
    const monthly = previewBody(form({ charge: 'month', quantity: 2 }), machine(), images);
    expect(monthly).toEqual({ machineId: 7, gpuCount: 1, imageId: 2, dataDiskGb: 50, chargeType: 'prepaid', period: 'month', quantity: 2 });
    expect(pricePreviewBody.safeParse(monthly).success).toBe(true);

    const a = orderInput(form({ name: '  训练机  ' }), machine(), images);
    expect(a).toEqual({ kind: 'payg', body: { machineId: 7, gpuCount: 1, imageId: 2, dataDiskGb: 50, name: '训练机' } });
    expect(createPaygOrderBody.safeParse(a?.body).success).toBe(true);
    const b = orderInput(form({ charge: 'week', quantity: 3 }), machine(), images);
    expect(b).toEqual({ kind: 'prepay', body: { machineId: 7, gpuCount: 1, imageId: 2, dataDiskGb: 50, period: 'week', quantity: 3 } });
    expect(createPrepayOrderBody.safeParse(b?.body).success).toBe(true);
    expect(orderInput(form({ imageId: 1 }), machine(), images)).toBeNull();
  });

  describe('debounced price', () => {
    afterEach(() => vi.useRealTimers());
    it('asks once the form has stopped changing, and not again for an equal new object', () => {
      vi.useFakeTimers();
      const { result, rerender } = renderHook(({ v }) => useDebounced(v), { initialProps: { v: { gpuCount: 1 } } });
      const first = result.current;
      rerender({ v: { gpuCount: 2 } });
      act(() => vi.advanceTimersByTime(PREVIEW_DEBOUNCE_MS - 50));
      rerender({ v: { gpuCount: 3 } });
      act(() => vi.advanceTimersByTime(PREVIEW_DEBOUNCE_MS - 50));
      expect(result.current).toBe(first);
      act(() => vi.advanceTimersByTime(60));
      expect(result.current).toEqual({ gpuCount: 3 });
      const settled = result.current;
      rerender({ v: { gpuCount: 3 } });
      act(() => vi.advanceTimersByTime(PREVIEW_DEBOUNCE_MS * 2));
      expect(result.current).toBe(settled);
    });
  });
});
