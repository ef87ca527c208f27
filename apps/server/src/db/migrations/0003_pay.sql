ALTER TABLE "tenants" ALTER COLUMN "payment_settings" SET DEFAULT '{}'::jsonb;--> statement-breakpoint
ALTER TABLE "payment_notifications" ADD COLUMN "body_sha256" text;--> statement-breakpoint
ALTER TABLE "payment_notifications" ADD COLUMN "body_bytes" integer;--> statement-breakpoint
CREATE INDEX "payments_flagged" ON "payments" USING btree ("tenant_id","paid_at") WHERE "payments"."flagged";--> statement-breakpoint
-- ==== hand-written (helper pay, issue #7 item 8): bound the unverified notification bodies already stored ====
UPDATE "payment_notifications" SET "body_sha256" = encode(sha256(convert_to("body", 'UTF8')), 'hex'), "body_bytes" = octet_length("body"), "body" = left("body", 4096) WHERE NOT "verified" AND octet_length("body") > 4096;
