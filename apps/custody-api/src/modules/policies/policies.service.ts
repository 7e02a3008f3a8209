import { Injectable } from '@nestjs/common';
import {
  pendingApprovalsView,
  policyDecisionView,
  withdrawalPolicyInput,
  type WithdrawalPolicyView,
} from '@tessera/contracts';
import { badRequest, notFound, type FieldErrors } from '@tessera/platform';
import type { EntityManager } from 'typeorm';
import type { z } from 'zod';
import { formatAmount, parseAmount } from '../../common/amounts';
import type { Caller, Environment } from '../../common/caller';
import { idParam, parse } from '../../common/validation';
import { AssetsService } from '../assets/assets.service';
import type { AssetEntity } from '../assets/entities/asset.entity';
import { normalizeExternalAddress } from '../chain/addresses';
import type { PolicyGate, PolicyVerdict } from '../transactions/transaction-writer';
import { PoliciesRepository, type DecisionRow } from './policies.repository';
import { EMPTY_POLICY, isEmptyPolicy, type PolicyDocument } from './policy-document';
import { evaluatePolicy } from './policy-evaluator';

/** The scope a named approver's key must carry. */
export const APPROVE_SCOPE = 'withdrawals:approve';

const KEY_ENVIRONMENT = { test: 'sandbox', live: 'production' } as const;
const ENVIRONMENT_KEY = { sandbox: 'test', production: 'live' } as const;

/** What a withdrawal's policy gate needs to know about it. */
export interface WithdrawalContext {
  transactionId: string;
  walletId: string;
  vaultId: string;
  asset: AssetEntity;
  units: bigint;
  destinationAddress: string;
  destinationTag: string | null;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/**
 * Withdrawal policies (decision 0220): the operator sets them per tenant and environment, the tenant reads
 * them, and the withdrawal path evaluates them inside its database transaction through `gate`.
 */
@Injectable()
export class PoliciesService {
  constructor(
    private readonly repository: PoliciesRepository,
    private readonly assets: AssetsService,
  ) {}

  private environment(value: string): Environment {
    if (value !== 'test' && value !== 'live') throw notFound('Policy environment must be test or live');
    return KEY_ENVIRONMENT[value];
  }

  private async tenant(tenantRef: string): Promise<string> {
    const tenantId = idParam(tenantRef, 'Tenant');
    if (!(await this.repository.tenantExists(tenantId))) throw notFound('Tenant not found');
    return tenantId;
  }

  /** GET /admin/tenants/{tenantId}/policies/{test|live} */
  async adminGet(tenantRef: string, environmentRef: string): Promise<WithdrawalPolicyView> {
    const environment = this.environment(environmentRef);
    const tenantId = await this.tenant(tenantRef);
    return this.view(tenantId, environment);
  }

  /** PUT /admin/tenants/{tenantId}/policies/{test|live}: replaces the whole policy. */
  async adminSet(tenantRef: string, environmentRef: string, input: unknown): Promise<WithdrawalPolicyView> {
    const environment = this.environment(environmentRef);
    const tenantId = await this.tenant(tenantRef);
    const body = parse(withdrawalPolicyInput, input);
    const document = await this.normalize(tenantId, environment, body);
    await this.repository.save(tenantId, environment, document);
    return this.view(tenantId, environment);
  }

  /** GET /policies (scope policies:read): the policy of the caller's environment. */
  tenantGet(caller: Caller): Promise<WithdrawalPolicyView> {
    return this.view(caller.tenantId, caller.environment);
  }

  private async view(tenantId: string, environment: Environment): Promise<WithdrawalPolicyView> {
    const row = await this.repository.find(tenantId, environment);
    const d = row?.document ?? EMPTY_POLICY;
    const asset = async (id: string) => {
      const a = await this.assets.findAny(id);
      return { assetId: id, assetSymbol: a?.symbol ?? '?', decimals: a?.decimals ?? 0 };
    };
    const fmt = (units: string, decimals: number) => formatAmount(units, decimals);
    return {
      tenantId,
      environment: ENVIRONMENT_KEY[environment],
      version: row?.version ?? 0,
      updatedAt: row ? iso(row.updatedAt) : null,
      maxAmount: await Promise.all(
        d.maxAmount.map(async (m) => {
          const { decimals, ...a } = await asset(m.assetId);
          return { ...a, amount: fmt(m.units, decimals) };
        }),
      ),
      velocity: await Promise.all(
        d.velocity.map(async (v) => {
          const { decimals, ...a } = await asset(v.assetId);
          return { ...a, per: v.per, amount: fmt(v.units, decimals), windowHours: 24 as const };
        }),
      ),
      approvals: await Promise.all(
        d.approvals.map(async (r) => {
          const { decimals, ...a } = await asset(r.assetId);
          return { ...a, above: fmt(r.aboveUnits, decimals), required: r.required, approvers: r.approvers };
        }),
      ),
      addressCooldownSeconds: d.addressCooldownSeconds,
      destinations: d.destinations
        ? {
            mode: d.destinations.mode,
            entries: await Promise.all(
              d.destinations.entries.map(async (e) => {
                const { decimals: _, ...a } = await asset(e.assetId);
                return { ...a, address: e.address, tag: e.tag };
              }),
            ),
          }
        : null,
      approvalWindowSeconds: d.approvalWindowSeconds,
    };
  }

  /** Checks every asset, amount, address and approver, and reports all problems at once by field path. */
  private async normalize(
    tenantId: string,
    environment: Environment,
    body: z.infer<typeof withdrawalPolicyInput>,
  ): Promise<PolicyDocument> {
    const errors: FieldErrors = {};
    const fail = (field: string, message: string) => (errors[field] ??= []).push(message);
    const assetAt = async (ref: string, field: string) => {
      const asset = await this.assets.findByRef(ref);
      if (!asset) fail(field, 'Unknown asset');
      return asset;
    };
    const unitsAt = (asset: AssetEntity | undefined, value: string, field: string, zeroAllowed = false) => {
      if (!asset) return '0';
      if (zeroAllowed && value === '0') return '0';
      const parsed = parseAmount(value, asset.decimals);
      if (!parsed.ok) {
        fail(field, parsed.message);
        return '0';
      }
      return parsed.units.toString();
    };
    const seen = new Set<string>();
    const once = (key: string, field: string, what: string) => {
      if (seen.has(key)) fail(field, `Only one ${what} per asset`);
      seen.add(key);
    };

    const maxAmount: PolicyDocument['maxAmount'] = [];
    for (const [i, m] of body.maxAmount.entries()) {
      const asset = await assetAt(m.asset, `maxAmount.${i}.asset`);
      if (asset) once(`max:${asset.id}`, `maxAmount.${i}.asset`, 'maximum');
      maxAmount.push({ assetId: asset?.id ?? '', units: unitsAt(asset, m.amount, `maxAmount.${i}.amount`) });
    }
    const velocity: PolicyDocument['velocity'] = [];
    for (const [i, v] of body.velocity.entries()) {
      const asset = await assetAt(v.asset, `velocity.${i}.asset`);
      if (asset) once(`vel:${v.per}:${asset.id}`, `velocity.${i}.asset`, `${v.per} velocity limit`);
      velocity.push({
        assetId: asset?.id ?? '',
        per: v.per,
        units: unitsAt(asset, v.amount, `velocity.${i}.amount`),
      });
    }
    const approvals: PolicyDocument['approvals'] = [];
    const named = [...new Set(body.approvals.flatMap((a) => a.approvers))];
    const keys = new Map(
      (named.length > 0 ? await this.repository.keysOf(tenantId, named) : []).map((k) => [k.apiKey, k]),
    );
    for (const [i, a] of body.approvals.entries()) {
      const asset = await assetAt(a.asset, `approvals.${i}.asset`);
      if (asset) once(`appr:${asset.id}`, `approvals.${i}.asset`, 'approval threshold');
      const approvers = [...new Set(a.approvers)];
      if (approvers.length !== a.approvers.length) fail(`approvals.${i}.approvers`, 'Each approver once');
      if (a.required > approvers.length) {
        fail(`approvals.${i}.required`, `At most the number of approvers (${approvers.length})`);
      }
      for (const [j, apiKey] of approvers.entries()) {
        const key = keys.get(apiKey);
        const field = `approvals.${i}.approvers.${j}`;
        if (!key) fail(field, 'Not an API key of this tenant');
        else if (key.revoked) fail(field, 'This API key is revoked');
        else if (key.environment !== ENVIRONMENT_KEY[environment]) {
          fail(field, `Must be a ${ENVIRONMENT_KEY[environment]} key, like the policy`);
        } else if (!key.scopes.includes(APPROVE_SCOPE))
          fail(field, `This API key lacks the scope ${APPROVE_SCOPE}`);
      }
      approvals.push({
        assetId: asset?.id ?? '',
        aboveUnits: unitsAt(asset, a.above, `approvals.${i}.above`, true),
        required: a.required,
        approvers,
      });
    }
    let destinations: PolicyDocument['destinations'] = null;
    if (body.destinations) {
      const entries: NonNullable<PolicyDocument['destinations']>['entries'] = [];
      for (const [i, e] of body.destinations.entries.entries()) {
        const asset = await assetAt(e.asset, `destinations.entries.${i}.asset`);
        if (!asset) continue;
        const normalized = normalizeExternalAddress(asset, environment, e.address, e.tag);
        if (!normalized.ok) {
          fail(`destinations.entries.${i}.${normalized.field}`, normalized.message);
          continue;
        }
        entries.push({ assetId: asset.id, address: normalized.address, tag: normalized.tag });
      }
      destinations = { mode: body.destinations.mode, entries };
    }
    if (Object.keys(errors).length > 0) throw badRequest('The policy is not valid', errors);
    return {
      maxAmount,
      velocity,
      approvals,
      addressCooldownSeconds: body.addressCooldownSeconds,
      destinations,
      approvalWindowSeconds: body.approvalWindowSeconds,
    };
  }

  /**
   * The gate of one withdrawal: evaluated by the transaction writer inside its database transaction, after it
   * locked the wallet's balance row. That lock serialises every withdrawal of the wallet, so the velocity
   * window it reads cannot move under it; a vault holds one wallet per asset, so the same lock serialises the
   * vault's window for the asset too.
   */
  gate(caller: Caller, w: WithdrawalContext): PolicyGate {
    const windowKey = (per: 'wallet' | 'vault') =>
      per === 'wallet' ? `wallet:${w.walletId}` : `vault:${w.vaultId}:${w.asset.id}`;
    return {
      evaluate: async (manager, usage): Promise<PolicyVerdict> => {
        const row = await this.repository.policyIn(manager, caller.tenantId, caller.environment);
        if (!row || isEmptyPolicy(row.document)) {
          return {
            ok: true,
            usage: [],
            // The create response already says `pendingApprovals: null, policyDecisions: []`.
            persist: async () => ({}),
          };
        }
        const evaluation = await evaluatePolicy(row.document, {
          assetId: w.asset.id,
          assetSymbol: w.asset.symbol,
          decimals: w.asset.decimals,
          units: w.units,
          requestedBy: caller.apiKey,
          destination: { address: w.destinationAddress, tag: w.destinationTag },
          bookEntryAge: () =>
            this.repository.bookEntryAgeIn(
              manager,
              caller,
              w.asset.id,
              w.destinationAddress,
              w.destinationTag,
            ),
          withdrawnInWindow: async (per) =>
            (await this.repository.withdrawnIn(
              manager,
              per === 'wallet' ? { walletId: w.walletId } : { vaultId: w.vaultId, assetId: w.asset.id },
            )) + (usage.get(windowKey(per)) ?? 0n),
          activeKeys: (keys) => this.repository.activeKeysIn(manager, caller.tenantId, keys),
        });
        if (evaluation.refused) return { ok: false, rule: evaluation.rule, message: evaluation.message };
        const decisions: DecisionRow[] = evaluation.results.map((r) => ({
          transactionId: w.transactionId,
          kind: 'evaluation',
          rule: r.rule,
          outcome: r.outcome,
          keyId: caller.apiKey,
          policyVersion: row.version,
          detail: r.detail,
        }));
        const approval = evaluation.approval;
        return {
          ok: true,
          usage: evaluation.windows.map((per) => [windowKey(per), w.units]),
          persist: async (m: EntityManager) => {
            if (approval) {
              await this.repository.insertApprovalIn(m, {
                transactionId: w.transactionId,
                tenantId: caller.tenantId,
                environment: caller.environment,
                requestedBy: caller.apiKey,
                required: approval.required,
                approvers: approval.approvers,
                windowSeconds: approval.windowSeconds,
              });
            }
            await this.repository.insertDecisionsIn(m, decisions);
            // Read back in the same transaction: the create response equals a later GET.
            return this.approvalFields(w.transactionId, 'Submitted', m);
          },
        };
      },
    };
  }

  /** `pendingApprovals` and `policyDecisions` of a withdrawal, as GET /transactions/{id} shows them. */
  async approvalFields(transactionId: string, transactionStatus: string, manager?: EntityManager) {
    const [approval, decisions] = await Promise.all([
      this.repository.approvalOf(transactionId, manager),
      this.repository.decisionsOf(transactionId, manager),
    ]);
    const pending: z.infer<typeof pendingApprovalsView> | null = approval
      ? {
          // A request left pending by the partner's own cancel shows as cancelled.
          status: (approval.status === 'pending' && transactionStatus !== 'Submitted'
            ? 'cancelled'
            : approval.status) as z.infer<typeof pendingApprovalsView>['status'],
          required: approval.required,
          approvers: approval.approvers,
          approvals: decisions
            .filter((d) => d.kind === 'approval')
            .map((d) => ({ keyId: d.keyId!, at: iso(d.createdAt)! })),
          requestedBy: approval.requestedBy,
          expiresAt: iso(approval.expiresAt)!,
          decidedAt: iso(approval.decidedAt),
          reason: approval.reason,
        }
      : null;
    const policyDecisions: z.infer<typeof policyDecisionView>[] = decisions.map((d) => ({
      kind: d.kind as z.infer<typeof policyDecisionView>['kind'],
      rule: d.rule as z.infer<typeof policyDecisionView>['rule'],
      outcome: d.outcome,
      keyId: d.keyId,
      policyVersion: d.policyVersion,
      detail: d.detail,
      at: iso(d.createdAt)!,
    }));
    return { pendingApprovals: pending, policyDecisions };
  }
}
