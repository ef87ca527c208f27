import type { ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { App as AntApp } from 'antd';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { CaptchaChallenge } from '@suanli/contract/captcha';
import type { CaptchaType } from '@suanli/contract/tenant';
import { ApiError } from '../../api/errors.ts';
import { CaptchaModal } from './CaptchaModal.tsx';
import { CaptchaButton } from './CaptchaButton.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../api/client.ts', () => ({ http }));

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
let serial = 0;
function challenge(type: CaptchaType, over: Partial<CaptchaChallenge> = {}): CaptchaChallenge {
  serial += 1;
  const base = { key: `00000000-0000-4000-8000-${String(serial).padStart(12, '0')}`, type, image: PNG, thumb: PNG, angle: 0, expiresAt: '2030-01-01T00:02:00Z' };
  if (type === 'click') return { ...base, thumbX: 0, thumbY: 0, thumbWidth: 150, thumbHeight: 40, width: 300, height: 220, words: ['天', '地', '人'], ...over };
  if (type === 'rotate') return { ...base, thumbX: 40, thumbY: 40, thumbWidth: 140, thumbHeight: 140, width: 220, height: 220, ...over };
  return { ...base, thumbX: type === 'slide' ? 0 : 200, thumbY: 80, thumbWidth: 60, thumbHeight: 60, width: 300, height: 220, ...over };
}

function wrap(node: ReactNode) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <AntApp>{node}</AntApp>
    </QueryClientProvider>,
  );
}

function renderModal(type: CaptchaType) {
  const onSuccess = vi.fn();
  const onCancel = vi.fn();
  wrap(<CaptchaModal open type={type} onSuccess={onSuccess} onCancel={onCancel} />);
  return { onSuccess, onCancel };
}

/** A pointer drag on `el` by (dx, dy) CSS pixels: mouse, touch and pen all arrive as these. */
function dragBy(el: Element, dx: number, dy = 0) {
  fireEvent.pointerDown(el, { pointerId: 1, clientX: 10, clientY: 10, pointerType: 'touch' });
  fireEvent.pointerMove(el, { pointerId: 1, clientX: 10 + dx / 2, clientY: 10 + dy / 2, pointerType: 'touch' });
  fireEvent.pointerMove(el, { pointerId: 1, clientX: 10 + dx, clientY: 10 + dy, pointerType: 'touch' });
  fireEvent.pointerUp(el, { pointerId: 1, clientX: 10 + dx, clientY: 10 + dy, pointerType: 'touch' });
}

const checkCalls = () => http.post.mock.calls.filter(([url]) => url === '/user/captcha/check');

describe('CaptchaModal', () => {
  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    http.get.mockReset();
    http.post.mockReset();
  });
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  it('slide: the slider moves the piece along its row, and a right answer hands over the ticket', async () => {
    const c = challenge('slide');
    http.get.mockResolvedValue(c);
    http.post.mockResolvedValue({ ticket: 'tk-1' });
    const { onSuccess } = renderModal('slide');

    const slider = await screen.findByTestId('captcha-slider');
    expect(http.get).toHaveBeenCalledWith('/user/captcha/slide', undefined, expect.objectContaining({ silent: true }));
    expect(screen.getByText('请拖动滑块完成拼图')).toBeTruthy();
    expect(screen.getByTestId('captcha-image').getAttribute('src')).toBe(PNG);
    // jsdom lays nothing out: the slider falls back to the nominal 300 px track, 260 px of travel.
    dragBy(slider, 130);
    await waitFor(() => expect(checkCalls()).toHaveLength(1));
    expect(checkCalls()[0]?.[1]).toEqual({ key: c.key, answer: { x: 120, y: 80 }, track: expect.any(Array) });
    // The slider's record goes along: from the piece's start, along its row, ending at the answer.
    const track = (checkCalls()[0]?.[1] as { track: [number, number, number][] }).track;
    expect(track[0]?.slice(1)).toEqual([0, 80]);
    expect(track.at(-1)?.slice(1)).toEqual([120, 80]);
    expect(track.every(([, , y]) => y === 80)).toBe(true);
    expect(track.map(([t]) => t)).toEqual([...track.map(([t]) => t)].sort((a, b) => a - b));
    expect(screen.getByTestId('captcha-piece').style.left).toBe('40%');

    await waitFor(() => expect(screen.getByTestId('captcha-result').dataset.status).toBe('success'));
    expect(onSuccess).not.toHaveBeenCalled();
    await act(() => vi.advanceTimersByTimeAsync(700));
    expect(onSuccess).toHaveBeenCalledWith('tk-1');
  });

  it('a press without a move sends nothing; a wrong answer shows why, then a new challenge comes', async () => {
    const first = challenge('slide');
    const second = challenge('slide');
    http.get.mockResolvedValueOnce(first).mockResolvedValueOnce(second);
    http.post.mockRejectedValue(new ApiError(400, '验证失败，请重试'));
    const { onSuccess } = renderModal('slide');

    const slider = await screen.findByTestId('captcha-slider');
    dragBy(slider, 0);
    expect(checkCalls()).toHaveLength(0);

    dragBy(slider, 50);
    await waitFor(() => expect(screen.getByTestId('captcha-result').textContent).toContain('验证失败，请重试'));
    await act(() => vi.advanceTimersByTimeAsync(1100));
    await waitFor(() => expect(http.get).toHaveBeenCalledTimes(2));
    await waitFor(() => expect(screen.getByTestId('captcha-modal').dataset.status).toBe('idle'));
    // The new challenge starts with the slider back at the left.
    await waitFor(() => expect(screen.getByTestId('captcha-slider').getAttribute('aria-valuenow')).toBe('0'));
    dragBy(screen.getByTestId('captcha-slider'), 26);
    await waitFor(() => expect(checkCalls()).toHaveLength(2));
    expect((checkCalls()[1]?.[1] as { key: string }).key).toBe(second.key);
    expect(onSuccess).not.toHaveBeenCalled();
  });

  it('click: numbered clicks, undo by clicking a number, sent in order once every word has one', async () => {
    const c = challenge('click');
    http.get.mockResolvedValue(c);
    http.post.mockResolvedValue({ ticket: 'tk-2' });
    renderModal('click');

    const image = await screen.findByTestId('captcha-image');
    expect(screen.getByText('请在下图依次点击')).toBeTruthy();
    expect(screen.getByTestId('captcha-words').dataset.words).toBe('天 地 人');
    const stage = image.parentElement as HTMLElement;
    fireEvent.click(stage, { clientX: 50, clientY: 60 });
    fireEvent.click(stage, { clientX: 999, clientY: 999 });
    expect(screen.getAllByTestId('captcha-marker')).toHaveLength(2);
    fireEvent.click(screen.getAllByTestId('captcha-marker')[1] as HTMLElement);
    expect(screen.getAllByTestId('captcha-marker')).toHaveLength(1);
    fireEvent.click(stage, { clientX: 150, clientY: 100 });
    expect(checkCalls()).toHaveLength(0);
    fireEvent.click(stage, { clientX: 250, clientY: 180 });
    await waitFor(() => expect(checkCalls()).toHaveLength(1));
    expect(checkCalls()[0]?.[1]).toEqual({
      key: c.key,
      answer: { points: [{ index: 0, x: 50, y: 60 }, { index: 1, x: 150, y: 100 }, { index: 2, x: 250, y: 180 }] },
      track: [
        [expect.any(Number), 50, 60],
        [expect.any(Number), 150, 100],
        [expect.any(Number), 250, 180],
      ],
    });
  });

  it('drag: the piece moves in two dimensions, kept inside the image', async () => {
    const c = challenge('drag');
    http.get.mockResolvedValue(c);
    http.post.mockResolvedValue({ ticket: 'tk-3' });
    renderModal('drag');

    const piece = await screen.findByTestId('captcha-piece');
    expect(screen.getByText('请拖动拼图块完成拼图')).toBeTruthy();
    dragBy(piece, -150, 500);
    await waitFor(() => expect(checkCalls()).toHaveLength(1));
    expect(checkCalls()[0]?.[1]).toEqual({ key: c.key, answer: { x: 50, y: 160 }, track: expect.any(Array) });
    const track = (checkCalls()[0]?.[1] as { track: [number, number, number][] }).track;
    expect(track[0]?.slice(1)).toEqual([200, 80]);
    expect(track.at(-1)?.slice(1)).toEqual([50, 160]);
  });

  it('rotate: the slider turns the round image, and the turn is sent in degrees', async () => {
    const c = challenge('rotate');
    http.get.mockResolvedValue(c);
    http.post.mockResolvedValue({ ticket: 'tk-4' });
    renderModal('rotate');

    const slider = await screen.findByTestId('captcha-slider');
    expect(screen.getByText('请拖动滑块将图片旋转至正确角度')).toBeTruthy();
    dragBy(slider, 65);
    expect(screen.getByTestId('captcha-piece').style.transform).toBe('rotate(90deg)');
    await waitFor(() => expect(checkCalls()).toHaveLength(1));
    expect(checkCalls()[0]?.[1]).toEqual({ key: c.key, answer: { angle: 90 }, track: expect.any(Array) });
    const track = (checkCalls()[0]?.[1] as { track: [number, number, number][] }).track;
    expect([track[0]?.[1], track.at(-1)?.[1]]).toEqual([0, 90]);
  });

  it('refresh asks for a new challenge', async () => {
    http.get.mockResolvedValueOnce(challenge('slide')).mockResolvedValueOnce(challenge('slide'));
    renderModal('slide');
    fireEvent.click(await screen.findByTestId('captcha-refresh'));
    await waitFor(() => expect(http.get).toHaveBeenCalledTimes(2));
  });
});

describe('CaptchaButton', () => {
  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    http.get.mockReset();
    http.post.mockReset();
  });
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  it('opens the captcha, shows 验证成功 with the ticket, and forgets it when it expires', async () => {
    http.get.mockResolvedValue(challenge('slide'));
    http.post.mockResolvedValue({ ticket: 'tk-5' });
    const onTicket = vi.fn();
    wrap(<CaptchaButton type="slide" onTicket={onTicket} />);

    const button = screen.getByTestId('captcha-button');
    expect(button.textContent).toContain('点击按钮进行验证');
    fireEvent.click(button);
    dragBy(await screen.findByTestId('captcha-slider'), 100);
    await waitFor(() => expect(http.post).toHaveBeenCalled());
    await act(() => vi.advanceTimersByTimeAsync(700));
    await waitFor(() => expect(onTicket).toHaveBeenLastCalledWith('tk-5'));
    expect(screen.getByTestId('captcha-button').textContent).toContain('验证成功');

    await act(() => vi.advanceTimersByTimeAsync(120_000));
    expect(onTicket).toHaveBeenLastCalledWith(null);
    expect(screen.getByTestId('captcha-button').textContent).toContain('点击按钮进行验证');
  });
});
