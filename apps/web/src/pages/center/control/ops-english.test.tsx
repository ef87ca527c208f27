import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen } from '@testing-library/react';
import { setLanguage } from '../../../locales/i18n.ts';
import { ChangeContractPage } from './ChangeContractPage.tsx';
import { ChangeContractPreviewPage } from './ChangeContractPreviewPage.tsx';
import { ChangeOrderDetailPage } from './ChangeOrderDetailPage.tsx';
import { ExpandPage } from './ExpandPage.tsx';
import { RenewalPage } from './RenewalPage.tsx';
import { SystemDiskPage } from '../system/SystemDiskPage.tsx';
import { INST_ID, ORDER_ID, inst, listAnswer, order, prepaidInst, preview, renderAt } from './ops-test-utils.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

const CJK = /[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]/;

/** The page's text without what the server wrote (marked lang="zh-CN"): the console's own must be English. */
function consoleText(): string {
  const copy = document.body.cloneNode(true) as HTMLElement;
  copy.querySelectorAll('[lang="zh-CN"]').forEach((e) => e.remove());
  return copy.textContent ?? '';
}

function serve(instance = inst()) {
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/instance/list') return listAnswer([instance]);
    if (url === '/api/v1/instance/available_expand_disk') return { instanceId: INST_ID, chargeType: instance.chargeType, status: instance.status, currentGb: 50, usedBytes: 1024 ** 3, minGb: 50, maxGb: 500, freeGb: 50, pricePerGbDay: 100, canShrink: true };
    if (url === '/api/v1/instance/disk_usage') return { list: [{ instanceId: INST_ID, name: 'train-1', status: 'running', systemDiskGb: 30, systemUsedBytes: 29 * 1024 ** 3, dataDiskGb: 50, dataUsedBytes: 1024 ** 3, dataTotalBytes: 50 * 1024 ** 3, warn: true }] };
    if (url === `/api/v1/order/${ORDER_ID}`) return order();
    if (url === '/api/v1/account/balance') return { balance: 100, frozenBalance: 0 };
    throw new Error(`unexpected GET ${url}`);
  });
}

describe('issue #10 pages in English', { timeout: 30_000 }, () => {
  beforeAll(async () => {
    await setLanguage('en-US');
  });
  afterAll(async () => {
    await setLanguage('zh-CN');
  });
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('switch to prepaid', async () => {
    serve();
    http.post.mockResolvedValue(preview());
    renderAt(`/center/control/changeContract?instanceId=${INST_ID}`, '/center/control/changeContract', <ChangeContractPage />);
    await screen.findByTestId('change-contract-total');
    expect(consoleText()).not.toMatch(CJK);
  });

  it('renewal', async () => {
    serve(prepaidInst());
    http.post.mockResolvedValue(preview({ expiresAt: '2026-12-30T00:00:00Z' }));
    renderAt(`/center/control/renewal?instanceId=${INST_ID}`, '/center/control/renewal', <RenewalPage />);
    await screen.findByTestId('renewal-total');
    expect(consoleText()).not.toMatch(CJK);
  });

  it('switch to pay-as-you-go, with its dialog', async () => {
    serve(prepaidInst());
    http.post.mockResolvedValue(preview({ amount: -10_000, hourly: 36_000, remainingSeconds: 90_061 }));
    renderAt(`/center/control/changeContractPreview?instanceId=${INST_ID}`, '/center/control/changeContractPreview', <ChangeContractPreviewPage />);
    expect((await screen.findByTestId('payg-preview-remaining')).textContent).toBe('1d 1h 1m 1s');
    fireEvent.click(screen.getByTestId('payg-confirm'));
    await screen.findByRole('dialog');
    expect(consoleText()).not.toMatch(CJK);
  });

  it('change order check, short of balance', async () => {
    serve();
    renderAt(`/center/control/changeOrderdetail?id=${ORDER_ID}`, '/center/control/changeOrderdetail', <ChangeOrderDetailPage />);
    await screen.findByTestId('change-check-short');
    expect(consoleText()).not.toMatch(CJK);
  });

  it('change spec, both tabs', async () => {
    serve(inst({ status: 'stopped' }));
    http.post.mockResolvedValue(preview({ amount: 0, hourly: 72_000 }));
    renderAt(`/center/control/expand/control?instanceId=${INST_ID}&tab=disk`, '/center/control/expand/control', <ExpandPage />);
    fireEvent.change(await screen.findByTestId('expand-disk-input'), { target: { value: '80' } });
    await screen.findByTestId('expand-disk-price-amount');
    fireEvent.click(screen.getByTestId('expand-tab-gpu'));
    await screen.findByTestId('expand-gpu-count');
    expect(consoleText()).not.toMatch(CJK);
  });

  it('disks', async () => {
    serve();
    renderAt('/center/system', '/center/system', <SystemDiskPage />);
    await screen.findByTestId('system-disk-warning');
    expect(consoleText()).not.toMatch(CJK);
  });
});
