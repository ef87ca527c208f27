import { z } from 'zod';

export const balanceData = z.object({ balance: z.number().int(), frozenBalance: z.number().int() });
