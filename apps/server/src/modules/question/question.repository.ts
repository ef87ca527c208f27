import { and, desc, eq, gte, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { questions } from '../../db/schema/question.ts';

export type QuestionRow = typeof questions.$inferSelect;
export type NewQuestion = typeof questions.$inferInsert;

export function createQuestionRepository(db: DbOrTx) {
  return {
    /**
     * Serialises submissions of one sender inside the caller's transaction, so two parallel posts
     * can't both pass the hourly count. The phone lock is always taken first: no lock cycles.
     */
    async lockSender(tenantId: number, phone: string, userId: number | null): Promise<void> {
      await db.execute(sql`select pg_advisory_xact_lock(${tenantId}, hashtext(${`question:phone:${phone}`}))`);
      if (userId !== null) await db.execute(sql`select pg_advisory_xact_lock(${tenantId}, hashtext(${`question:user:${userId}`}))`);
    },
    /** Requests of the tenant since `since` from this phone or this user, and the oldest one's time. */
    async countSince(tenantId: number, phone: string, userId: number | null, since: Date): Promise<{ count: number; oldest: Date | null }> {
      const sender = userId === null ? eq(questions.phone, phone) : or(eq(questions.phone, phone), eq(questions.userId, userId));
      const rows = await db
        .select({ count: sql<number>`count(*)::int`, oldest: sql<string | null>`min(${questions.createdAt})` })
        .from(questions)
        .where(and(eq(questions.tenantId, tenantId), sender, gte(questions.createdAt, since)));
      const r = rows[0];
      return { count: r?.count ?? 0, oldest: r?.oldest ? new Date(r.oldest) : null };
    },
    async insert(values: NewQuestion): Promise<QuestionRow> {
      const [row] = await db.insert(questions).values(values).returning();
      if (!row) throw new Error('question insert returned nothing');
      return row;
    },
    /** One page of the tenant's requests, newest first (id breaks ties so pages never overlap). */
    async listByTenant(tenantId: number, page: number, pageSize: number): Promise<{ rows: QuestionRow[]; total: number }> {
      const [rows, totals] = await Promise.all([
        db
          .select()
          .from(questions)
          .where(eq(questions.tenantId, tenantId))
          .orderBy(desc(questions.createdAt), desc(questions.id))
          .limit(pageSize)
          .offset((page - 1) * pageSize),
        db.select({ total: sql<number>`count(*)::int` }).from(questions).where(eq(questions.tenantId, tenantId)),
      ]);
      return { rows, total: totals[0]?.total ?? 0 };
    },
  };
}
export type QuestionRepository = ReturnType<typeof createQuestionRepository>;
