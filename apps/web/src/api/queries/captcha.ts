import { queryOptions, useMutation } from '@tanstack/react-query';
import type { CaptchaChallenge, CaptchaCheckBody, CaptchaTicket } from '@suanli/contract/captcha';
import type { CaptchaType } from '@suanli/contract/tenant';
import { http } from '../client.ts';

export const captchaKeys = {
  all: ['captcha'] as const,
  challenge: (type: CaptchaType) => [...captchaKeys.all, 'challenge', type] as const,
};

/** GET /user/captcha/{type}: a new challenge. Silent: the captcha shows its own errors inline. */
export const fetchCaptcha = (type: CaptchaType) => http.get<CaptchaChallenge>(`/user/captcha/${type}`, undefined, { withToken: false, silent: true });

/** POST /user/captcha/check: the one check a challenge allows; resolves with the one-use ticket. */
export const checkCaptcha = (body: CaptchaCheckBody) =>
  http.post<CaptchaTicket>('/user/captcha/check', body, { withToken: false, silent: true, repeatSubmit: false });

/**
 * A challenge is single-use, so it is never shared or refreshed behind the user's back: fetched on
 * mount, dropped as soon as nothing shows it, refetched only on purpose (refresh, after a failure).
 */
export const captchaChallengeQuery = (type: CaptchaType) =>
  queryOptions({
    queryKey: captchaKeys.challenge(type),
    queryFn: () => fetchCaptcha(type),
    staleTime: Infinity,
    gcTime: 0,
    retry: false,
    refetchOnMount: 'always',
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
  });

export const useCheckCaptcha = () => useMutation({ mutationFn: checkCaptcha });
