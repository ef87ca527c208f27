import { useEffect, useState } from 'react';
import type { DiskOptions, ImageItem, MachineItem } from '@suanli/contract/machine';
import type { PrepaidPeriod, PricePreviewBody } from '@suanli/contract/order';
import type { CreateOrderInput } from '../../api/queries/compute.ts';

/** The create page's form (POST /api/v1/order/price/preview, /payg, /prepay). */

/** Most GPUs one instance may take (contract: MAX_GPUS_PER_INSTANCE). */
export const MAX_GPUS = 8;
/** Most periods one prepaid order buys (contract: MAX_PREPAID_QUANTITY). */
export const MAX_QUANTITY: Record<PrepaidPeriod, number> = { day: 30, week: 8, month: 12, year: 3 };
/** How long the form waits after the last change before asking the price. */
export const PREVIEW_DEBOUNCE_MS = 300;
export const NAME_MAX = 32;

export type Charge = 'payg' | PrepaidPeriod;
export const CHARGES: Charge[] = ['payg', 'day', 'week', 'month', 'year'];

export type CreateForm = {
  gpuCount: number;
  charge: Charge;
  quantity: number;
  imageId: number | null;
  dataDiskGb: number | null;
  name: string;
};

/** GPUs one instance on this machine may take: 1..min(8, free); 0 when none is free. */
export function maxGpus(machine: Pick<MachineItem, 'gpuFree'>): number {
  return Math.max(0, Math.min(MAX_GPUS, machine.gpuFree));
}

/** The data disk sizes allowed: from one step to the machine's largest, in whole steps. */
export function diskBounds(machine: Pick<MachineItem, 'dataDiskFreeGb' | 'dataDiskMaxGb'>, disk?: DiskOptions): { min: number; max: number; step: number; free: number } {
  const step = Math.max(1, disk?.stepGb ?? 1);
  const max = Math.min(disk?.dataDiskMaxGb ?? machine.dataDiskMaxGb, machine.dataDiskMaxGb);
  return { min: step, max, step, free: disk?.dataDiskFreeGb ?? machine.dataDiskFreeGb };
}

/** Why the form can't be priced or sent yet (a message key), or null. */
export function formProblem(form: CreateForm, machine: MachineItem, images: ImageItem[], disk?: DiskOptions): 'notRentable' | 'gpu' | 'image' | 'disk' | 'diskStep' | 'quantity' | 'name' | null {
  if (!machine.rentable || maxGpus(machine) === 0) return 'notRentable';
  if (!Number.isInteger(form.gpuCount) || form.gpuCount < 1 || form.gpuCount > maxGpus(machine)) return 'gpu';
  const image = images.find((i) => i.id === form.imageId);
  if (!image || image.status !== 'ready') return 'image';
  if (form.dataDiskGb !== null) {
    const b = diskBounds(machine, disk);
    if (!Number.isInteger(form.dataDiskGb) || form.dataDiskGb < b.min || form.dataDiskGb > b.max) return 'disk';
    if (form.dataDiskGb % b.step !== 0) return 'diskStep';
  }
  if (form.charge !== 'payg' && (!Number.isInteger(form.quantity) || form.quantity < 1 || form.quantity > MAX_QUANTITY[form.charge])) return 'quantity';
  if (form.name.trim().length > NAME_MAX) return 'name';
  return null;
}

/** The price preview's body, or null while the form can't be priced. */
export function previewBody(form: CreateForm, machine: MachineItem, images: ImageItem[], disk?: DiskOptions): PricePreviewBody | null {
  if (formProblem(form, machine, images, disk) !== null || form.imageId === null) return null;
  const base = { machineId: machine.id, gpuCount: form.gpuCount, imageId: form.imageId, ...(form.dataDiskGb !== null ? { dataDiskGb: form.dataDiskGb } : {}) };
  return form.charge === 'payg' ? { ...base, chargeType: 'payg' } : { ...base, chargeType: 'prepaid', period: form.charge, quantity: form.quantity };
}

/** The order call for a valid form: pay-as-you-go or prepaid. */
export function orderInput(form: CreateForm, machine: MachineItem, images: ImageItem[], disk?: DiskOptions): CreateOrderInput | null {
  if (formProblem(form, machine, images, disk) !== null || form.imageId === null) return null;
  const name = form.name.trim();
  const base = { machineId: machine.id, gpuCount: form.gpuCount, imageId: form.imageId, ...(form.dataDiskGb !== null ? { dataDiskGb: form.dataDiskGb } : {}), ...(name ? { name } : {}) };
  return form.charge === 'payg' ? { kind: 'payg', body: base } : { kind: 'prepay', body: { ...base, period: form.charge, quantity: form.quantity } };
}

/**
 * The form's starting values: one GPU, pay-as-you-go, the first ready image, the free disk size.
 * Issue #10 (images): with `preferredImageId` (the page's `?imageId=`), that image when it is
 * listed and ready; none yet when it is not listed (the page looks it up in the community).
 */
export function initialForm(machine: MachineItem | null | undefined, images: ImageItem[] | undefined, preferredImageId: number | null = null): CreateForm {
  const preferred = preferredImageId === null ? undefined : images?.find((i) => i.id === preferredImageId);
  const firstReady = images?.find((i) => i.status === 'ready')?.id ?? null;
  return {
    gpuCount: 1,
    charge: 'payg',
    quantity: 1,
    imageId: preferredImageId === null ? firstReady : preferred ? (preferred.status === 'ready' ? preferred.id : firstReady) : null,
    dataDiskGb: machine ? machine.dataDiskFreeGb : null,
    name: '',
  };
}

/** `value`, once it has stopped changing for `ms`; compared by JSON so a new equal object doesn't restart the wait. */
export function useDebounced<T>(value: T, ms = PREVIEW_DEBOUNCE_MS): T {
  const [settled, setSettled] = useState(value);
  const key = JSON.stringify(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- keyed by content, not identity
  }, [key, ms]);
  return settled;
}

/** Issue #10 (images): the `?imageId=` of the market and create pages, or null. */
export function imageIdParam(params: URLSearchParams): number | null {
  const id = Number(params.get('imageId'));
  return Number.isInteger(id) && id > 0 && id <= 2_147_483_647 ? id : null;
}

/** Issue #10 (images): the image list with an image looked up elsewhere (a community or own private image) first. */
export function withExtraImage(images: ImageItem[], extra: ImageItem | null | undefined): ImageItem[] {
  if (!extra || images.some((i) => i.id === extra.id)) return images;
  return [extra, ...images];
}
