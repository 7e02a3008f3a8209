import { z } from 'zod';
import { optionalOrNull } from './optional-fields';

/**
 * Withdrawal policies of the custody API (docs/custody-api.md, "Withdrawal policies"; decision 0220).
 * Amounts are decimal strings in asset units with the one amount grammar of the API (decision 0014): no sign,
 * exponent, leading zeros or whitespace. The service checks each against the asset's decimals.
 */
export const POLICY_AMOUNT = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

const policyAmount = z
  .string()
  .max(100)
  .regex(POLICY_AMOUNT, 'Must be a decimal string such as "1.25" (no sign, spaces or leading zeros)');
/** An asset by id or symbol (`ETH`, case-insensitive). */
const assetRef = z.string().trim().min(1).max(100);
/** An API key of the tenant, `ck_test_…` or `ck_live_…`. */
export const custodyApiKeyRef = z.string().regex(/^ck_(test|live)_[0-9a-f]{32}$/, 'Must be an API key');

/** The rules a policy can hold; also the names that refusals carry in `errors` (`policy.<rule>`). */
export const WITHDRAWAL_POLICY_RULES = [
  'destinations',
  'addressCooldown',
  'maxAmount',
  'velocity',
  'approvals',
] as const;
export type WithdrawalPolicyRule = (typeof WITHDRAWAL_POLICY_RULES)[number];

/** PUT /admin/tenants/{tenantId}/policies/{environment}: the whole policy, replacing the previous one. */
export const withdrawalPolicyInput = z
  .object({
    /** Per-transaction maximum per asset: a withdrawal above it is refused. */
    maxAmount: z
      .array(z.object({ asset: assetRef, amount: policyAmount }).strict())
      .max(100)
      .default([]),
    /** Rolling 24 h limit per asset, per wallet or per vault (what is in flight or completed counts). */
    velocity: z
      .array(z.object({ asset: assetRef, per: z.enum(['wallet', 'vault']), amount: policyAmount }).strict())
      .max(200)
      .default([]),
    /** Above `above` (strictly), `required` of the named `approvers` must approve before it proceeds. */
    approvals: z
      .array(
        z
          .object({
            asset: assetRef,
            above: policyAmount,
            required: z.number().int().min(1).max(20),
            approvers: z.array(custodyApiKeyRef).min(1).max(50),
          })
          .strict(),
      )
      .max(100)
      .default([]),
    /** No withdrawal to an address-book entry younger than this; 0 turns the rule off. */
    addressCooldownSeconds: z
      .number()
      .int()
      .min(0)
      .max(90 * 86400)
      .default(0),
    /** A deny list (these destinations are refused) or an allow list (only these are accepted); null: none. */
    destinations: z
      .object({
        mode: z.enum(['allow', 'deny']),
        entries: z
          .array(
            z
              .object({
                asset: assetRef,
                address: z.string().trim().min(1).max(200),
                tag: optionalOrNull(z.string().trim().min(1).max(20)),
              })
              .strict(),
          )
          .max(1000),
      })
      .strict()
      .nullable()
      // prefault, not default: zod leaves a default out of the request schema when the value holds a transform
      // (the entries' optionalOrNull tag); null parses to null either way.
      .prefault(null),
    /** How long a withdrawal waits for its approvals before it is Cancelled (expired). */
    approvalWindowSeconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 86400)
      .default(86400),
  })
  .strict();
export type WithdrawalPolicyInput = z.input<typeof withdrawalPolicyInput>;

const assetView = { assetId: z.string().uuid(), assetSymbol: z.string() };

/** A policy as GET /policies and the operator API show it. Version 0 with no rules: no policy set. */
export const withdrawalPolicyView = z.object({
  tenantId: z.string().uuid(),
  environment: z.enum(['test', 'live']),
  version: z.number().int(),
  updatedAt: z.string().nullable(),
  maxAmount: z.array(z.object({ ...assetView, amount: z.string() })),
  velocity: z.array(
    z.object({
      ...assetView,
      per: z.enum(['wallet', 'vault']),
      amount: z.string(),
      windowHours: z.literal(24),
    }),
  ),
  approvals: z.array(
    z.object({ ...assetView, above: z.string(), required: z.number(), approvers: z.array(z.string()) }),
  ),
  addressCooldownSeconds: z.number(),
  destinations: z
    .object({
      mode: z.enum(['allow', 'deny']),
      entries: z.array(z.object({ ...assetView, address: z.string(), tag: z.string().nullable() })),
    })
    .nullable(),
  approvalWindowSeconds: z.number(),
});
export type WithdrawalPolicyView = z.infer<typeof withdrawalPolicyView>;

/** POST /transactions/{id}/approve: no body needed; an optional note is recorded with the approval. */
export const approveWithdrawalInput = z.object({ note: optionalOrNull(z.string().max(1000)) }).strict();
/** POST /transactions/{id}/reject: the reason is recorded and shown on the Cancelled transaction. */
export const rejectWithdrawalInput = z
  .object({ reason: optionalOrNull(z.string().trim().min(1).max(1000)) })
  .strict();

export const PENDING_APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired', 'cancelled'] as const;

/** `pendingApprovals` of a withdrawal that needed approval (null on every other transaction). */
export const pendingApprovalsView = z.object({
  status: z.enum(PENDING_APPROVAL_STATUSES),
  required: z.number().int(),
  approvers: z.array(z.string()),
  approvals: z.array(z.object({ keyId: z.string(), at: z.string() })),
  requestedBy: z.string(),
  expiresAt: z.string(),
  decidedAt: z.string().nullable(),
  reason: z.string().nullable(),
});

/** One recorded policy decision (`policyDecisions` on GET /transactions/{id}), oldest first. */
export const policyDecisionView = z.object({
  kind: z.enum(['evaluation', 'approval', 'rejection', 'quorum', 'expiry']),
  rule: z.enum(WITHDRAWAL_POLICY_RULES).nullable(),
  outcome: z.string(),
  keyId: z.string().nullable(),
  policyVersion: z.number().int().nullable(),
  detail: z.record(z.string(), z.unknown()),
  at: z.string(),
});
