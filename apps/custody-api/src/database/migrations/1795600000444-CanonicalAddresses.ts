import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stored withdrawal destinations in their canonical spelling (normalizeExternalAddress since this release), so that
 * string comparison finds them: bech32 Bitcoin addresses lowercase, XRP tags without leading zeros, in the address
 * book, in the withdrawals still in flight and in the policies' allow and deny lists. Before, `BC1Q…` and `bc1q…`, or the tags `07` and `7`, were two
 * destinations, and a deny list could be passed by spelling its address another way. Data only; `down` leaves the
 * canonical spelling (the old one was never meaningful).
 */
export class CanonicalAddresses1795600000444 implements MigrationInterface {
  name = 'CanonicalAddresses1795600000444';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE "address_book" b SET "address" = lower(b."address") FROM "assets" a
        WHERE a."id" = b."asset_id" AND a."network" = 'bitcoin' AND lower(b."address") ~ '^(bc|tb)1'
          AND b."address" <> lower(b."address")`,
    );
    await q.query(
      `UPDATE "address_book" b SET "tag" = (b."tag"::numeric)::text FROM "assets" a
        WHERE a."id" = b."asset_id" AND a."network" = 'ripple' AND b."tag" ~ '^0[0-9]+$'`,
    );
    // Withdrawals still in flight: the worker checks their destination against the book again before the
    // broadcast, by the same string comparison.
    await q.query(
      `UPDATE "transactions" t SET "destination_address" = lower(t."destination_address") FROM "assets" a
        WHERE a."id" = t."asset_id" AND a."network" = 'bitcoin' AND t."type" = 'Withdrawal'
          AND t."completed_at" IS NULL AND lower(t."destination_address") ~ '^(bc|tb)1'
          AND t."destination_address" <> lower(t."destination_address")`,
    );
    await q.query(
      `UPDATE "transactions" t SET "destination_tag" = (t."destination_tag"::numeric)::text FROM "assets" a
        WHERE a."id" = t."asset_id" AND a."network" = 'ripple' AND t."type" = 'Withdrawal'
          AND t."completed_at" IS NULL AND t."destination_tag" ~ '^0[0-9]+$'`,
    );
    await q.query(
      `UPDATE "withdrawal_policies" p SET "document" = jsonb_set(p."document", '{destinations,entries}', (
         SELECT COALESCE(jsonb_agg(
           CASE
             WHEN a."network" = 'bitcoin' AND lower(x.e->>'address') ~ '^(bc|tb)1'
               THEN jsonb_set(x.e, '{address}', to_jsonb(lower(x.e->>'address')))
             WHEN a."network" = 'ripple' AND (x.e->>'tag') ~ '^0[0-9]+$'
               THEN jsonb_set(x.e, '{tag}', to_jsonb(((x.e->>'tag')::numeric)::text))
             ELSE x.e
           END ORDER BY x.n), '[]'::jsonb)
         FROM jsonb_array_elements(p."document"->'destinations'->'entries') WITH ORDINALITY AS x(e, n)
         LEFT JOIN "assets" a ON a."id"::text = x.e->>'assetId'))
       WHERE jsonb_typeof(p."document"->'destinations') = 'object'`,
    );
  }

  async down(): Promise<void> {
    // Nothing to undo: the canonical spelling names the same destinations.
  }
}
