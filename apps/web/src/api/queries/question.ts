import { useMutation } from '@tanstack/react-query';
import type { z } from 'zod';
import type { questionBody } from '@suanli/contract/question';
import { http } from '../client.ts';

export type QuestionInput = z.input<typeof questionBody>;

/**
 * POST /api/v1/questions/ (the contact-sales form). Silent: the form shows the error inline,
 * so there is no second toast.
 */
export const useSubmitQuestion = () =>
  useMutation({
    mutationFn: (body: QuestionInput) => http.post<{ id: string }>('/api/v1/questions/', body, { silent: true }),
  });
