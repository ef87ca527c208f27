import { z } from 'zod';
import { DATAHUB_NAME_MAX, datahubStatus, type DatahubStatus } from '@suanli/domain/datahub';
import { plainText } from './validation.ts';

// Constants live in the domain package so the web can use them without loading zod.
export { DATAHUB_NAME_MAX, datahubStatus, type DatahubStatus };

/** Datacenter ids are PostgreSQL `integer`s: a larger number can't name one, and must not reach the database. */
const MAX_ID = 2_147_483_647;

export const datacenter = z.object({ dataCenterId: z.number().int(), dataCenterName: z.string() });
export type Datacenter = z.infer<typeof datacenter>;

export const datahub = z.object({
  name: z.string(),
  status: z.union([z.literal(0), z.literal(1)]),
  dataCenterId: z.number().int(),
  /** ISO 8601; null until the storage area is ready. */
  activatedAt: z.string().nullable(),
});
export type Datahub = z.infer<typeof datahub>;

export const datahubParams = z.object({
  dataCenterId: z.coerce
    .number({ error: '数据中心编号必须是数字' })
    .int({ error: '数据中心编号必须是整数' })
    .positive({ error: '数据中心编号必须是正整数' })
    .max(MAX_ID, { error: '数据中心编号超出范围' }),
});

/** Datahub names: shown in the dialog and used as a label only (the storage path is derived from ids). */

export const activateDatahubBody = z.strictObject({
  center_id: z
    .number({ error: 'center_id 必须是数字' })
    .int({ error: 'center_id 必须是整数' })
    .positive({ error: 'center_id 必须是正整数' })
    .max(MAX_ID, { error: 'center_id 超出范围' }),
  name: plainText('数据中转站名称', DATAHUB_NAME_MAX),
});
export type ActivateDatahubBody = z.infer<typeof activateDatahubBody>;
