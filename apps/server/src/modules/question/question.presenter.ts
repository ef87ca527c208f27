import type { QuestionItem } from '@suanli/contract/question';
import type { QuestionRow } from './question.repository.ts';

/** Row -> operator list item; the internal user id never leaves the server. */
export function presentQuestion(row: QuestionRow): QuestionItem {
  return {
    id: row.id,
    name: row.name,
    phone: row.phone,
    company: row.company,
    email: row.email,
    gpuType: row.gpuType,
    gpuCount: row.gpuCount,
    content: row.content,
    fromUser: row.userId !== null,
    createdAt: row.createdAt.toISOString(),
  };
}
