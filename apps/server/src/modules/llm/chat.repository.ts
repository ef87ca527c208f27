import { and, asc, count, desc, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/client.ts';
import { chatConversations, chatMessages } from '../../db/schema/llm.ts';
import { createUserRepository } from '../user/user.repository.ts';

export type Owner = { tenantId: number; userId: number };
export type ConversationRow = typeof chatConversations.$inferSelect;
export type ChatMessageRow = typeof chatMessages.$inferSelect;
export type NewChatMessage = typeof chatMessages.$inferInsert;

const ownedBy = (o: Owner, id: string) => and(eq(chatConversations.id, id), eq(chatConversations.tenantId, o.tenantId), eq(chatConversations.userId, o.userId));

/** The console chat's conversations and messages (schema chat_conversations, chat_messages). */
export function createChatRepository(db: Db) {
  return {
    db,
    /** The user's conversations, most recently active first. */
    list(o: Owner): Promise<ConversationRow[]> {
      return db
        .select()
        .from(chatConversations)
        .where(and(eq(chatConversations.tenantId, o.tenantId), eq(chatConversations.userId, o.userId)))
        .orderBy(desc(chatConversations.updatedAt), desc(chatConversations.createdAt));
    },

    /** Another user's or tenant's conversation is undefined, like a missing one. */
    async find(o: Owner, id: string, tx: DbOrTx = db): Promise<ConversationRow | undefined> {
      const [row] = await tx.select().from(chatConversations).where(ownedBy(o, id));
      return row;
    },

    /** Inserts unless the user already keeps `max` conversations (checked under a lock on the user row). */
    async insertCapped(o: Owner, values: { title: string; model: string; systemPrompt: string; temperature: number; at: Date }, max: number): Promise<ConversationRow | 'full'> {
      return db.transaction(async (tx) => {
        await createUserRepository(tx).lockRow(o.userId);
        const [n] = await tx
          .select({ n: count() })
          .from(chatConversations)
          .where(and(eq(chatConversations.tenantId, o.tenantId), eq(chatConversations.userId, o.userId)));
        if ((n?.n ?? 0) >= max) return 'full' as const;
        const [row] = await tx
          .insert(chatConversations)
          .values({ tenantId: o.tenantId, userId: o.userId, ...values, createdAt: values.at, updatedAt: values.at })
          .returning();
        if (!row) throw new Error('chat: conversation insert returned nothing');
        return row;
      });
    },

    async update(o: Owner, id: string, patch: Partial<Pick<ConversationRow, 'title' | 'model' | 'systemPrompt' | 'temperature' | 'updatedAt'>>, tx: DbOrTx = db): Promise<ConversationRow | undefined> {
      const [row] = await tx.update(chatConversations).set(patch).where(ownedBy(o, id)).returning();
      return row;
    },

    /** Deletes the conversation (its messages cascade); false when it isn't the user's. */
    async remove(o: Owner, id: string): Promise<boolean> {
      const rows = await db.delete(chatConversations).where(ownedBy(o, id)).returning({ id: chatConversations.id });
      return rows.length > 0;
    },

    /** Oldest first; a user message before its reply when both carry the same instant. */
    messages(conversationId: string, tx: DbOrTx = db): Promise<ChatMessageRow[]> {
      return tx
        .select()
        .from(chatMessages)
        .where(eq(chatMessages.conversationId, conversationId))
        .orderBy(asc(chatMessages.createdAt), sql`case ${chatMessages.role} when 'user' then 0 else 1 end`, asc(chatMessages.id));
    },

    async insertMessage(values: NewChatMessage, tx: DbOrTx = db): Promise<ChatMessageRow> {
      const [row] = await tx.insert(chatMessages).values(values).returning();
      if (!row) throw new Error('chat: message insert returned nothing');
      return row;
    },

    async deleteMessage(conversationId: string, id: string, tx: DbOrTx = db): Promise<void> {
      await tx.delete(chatMessages).where(and(eq(chatMessages.conversationId, conversationId), eq(chatMessages.id, id)));
    },
  };
}
export type ChatRepository = ReturnType<typeof createChatRepository>;
