CREATE TABLE "server_keys" (
	"name" text PRIMARY KEY NOT NULL,
	"public_key_pem" text NOT NULL,
	"private_key" text,
	"private_key_format" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tenants" ALTER COLUMN "payment_settings" SET DEFAULT '{}'::jsonb;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "password_failures" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "password_locked_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "wallets" ADD COLUMN "last_hash" text;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "lease_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD COLUMN "hash" text;--> statement-breakpoint
ALTER TABLE "payment_notifications" ADD COLUMN "body_sha256" text;--> statement-breakpoint
ALTER TABLE "payment_notifications" ADD COLUMN "body_bytes" integer;--> statement-breakpoint
CREATE INDEX "jobs_claim" ON "jobs" USING btree ("kind","status","run_at");--> statement-breakpoint
CREATE INDEX "payments_flagged" ON "payments" USING btree ("tenant_id","paid_at") WHERE "payments"."flagged";--> statement-breakpoint
-- ==== hand-written (helper pay, issue #7 item 8): bound the unverified notification bodies already stored ====
UPDATE "payment_notifications" SET "body_sha256" = encode(sha256(convert_to("body", 'UTF8')), 'hex'), "body_bytes" = octet_length("body"), "body" = left("body", 4096) WHERE NOT "verified" AND octet_length("body") > 4096;
--> statement-breakpoint
-- >>> HAND-WRITTEN (helper core, issue #7 item 22): backfill the ledger hash chain of existing rows,
-- then make the column NOT NULL (drizzle-kit generated `ADD COLUMN "hash" text NOT NULL`, which fails
-- on a non-empty table). The expression is the one of ledger.repository.ts `entryHash`; keep both equal.
DO $$
DECLARE
  r record;
  prev text := '';
  cur bigint;
BEGIN
  FOR r IN SELECT id, user_id, kind, amount, ref, balance_after, created_at FROM ledger_entries ORDER BY user_id, id LOOP
    IF cur IS DISTINCT FROM r.user_id THEN
      prev := '';
      cur := r.user_id;
    END IF;
    prev := encode(sha256(convert_to(prev || jsonb_build_array(r.kind, r.amount, r.ref, r.balance_after, (extract(epoch FROM r.created_at) * 1000000)::bigint)::text, 'UTF8')), 'hex');
    UPDATE ledger_entries SET hash = prev WHERE id = r.id;
  END LOOP;
  UPDATE wallets w SET last_hash = (SELECT l.hash FROM ledger_entries l WHERE l.user_id = w.user_id ORDER BY l.id DESC LIMIT 1);
END $$;
--> statement-breakpoint
ALTER TABLE "ledger_entries" ALTER COLUMN "hash" SET NOT NULL;
-- <<< END HAND-WRITTEN
--> statement-breakpoint
-- >>> HAND-WRITTEN (issue #7 item 26): the server no longer writes default user names in Chinese;
-- an empty name means "not chosen" and the console shows a default in its language.
UPDATE "users" SET "user_name" = '' WHERE "user_name" = '用户' || right("phone", 4);--> statement-breakpoint
UPDATE "users" u SET "user_name" = '' FROM "tenants" t WHERE u."tenant_id" = t."id" AND u."role" = 'operator' AND u."user_name" = t."title" || '运营';
-- <<< END HAND-WRITTEN
