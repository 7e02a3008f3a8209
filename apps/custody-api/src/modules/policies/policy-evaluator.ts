import type { WithdrawalPolicyRule } from '@tessera/contracts';
import { formatAmount } from '../../common/amounts';
import type { PolicyDocument } from './policy-document';

/** What a rule needs to know about one withdrawal; the database facts are read only for configured rules. */
export interface WithdrawalFacts {
  assetId: string;
  assetSymbol: string;
  decimals: number;
  units: bigint;
  requestedBy: string;
  destination: { address: string; tag: string | null };
  /** Age of the oldest address-book entry admitting the destination; null when none does. */
  bookEntryAge: () => Promise<{ ageSeconds: number; createdAt: Date } | null>;
  /** Base units already in the rolling 24 h window (the database's count plus this batch's accepted items). */
  withdrawnInWindow: (per: 'wallet' | 'vault') => Promise<bigint>;
  /** Of these approvers, the keys not revoked. */
  activeKeys: (apiKeys: string[]) => Promise<Set<string>>;
}

export interface RuleResult {
  rule: WithdrawalPolicyRule;
  outcome: 'passed' | 'refused' | 'approval-required';
  detail: Record<string, unknown>;
}

export type Evaluation =
  | { refused: true; rule: WithdrawalPolicyRule; message: string; results: RuleResult[] }
  | {
      refused: false;
      results: RuleResult[];
      /** Windows this withdrawal counts in once accepted. */
      windows: ('wallet' | 'vault')[];
      approval: { required: number; approvers: string[]; windowSeconds: number } | null;
    };

/**
 * Evaluates a policy against one withdrawal, in this order (the first breach refuses):
 * 1. destinations (allow or deny list), 2. address-book cool-down, 3. per-transaction maximum,
 * 4. velocity per wallet, then per vault, 5. approval threshold (an unreachable quorum refuses).
 * Only configured rules for the withdrawal's asset are evaluated and recorded.
 */
export async function evaluatePolicy(policy: PolicyDocument, f: WithdrawalFacts): Promise<Evaluation> {
  const results: RuleResult[] = [];
  const amount = (units: bigint) => `${formatAmount(units, f.decimals)} ${f.assetSymbol}`;
  const refuse = (rule: WithdrawalPolicyRule, message: string, detail: Record<string, unknown>) => {
    results.push({ rule, outcome: 'refused', detail: { ...detail, message } });
    return { refused: true as const, rule, message, results };
  };

  if (policy.destinations) {
    const { mode, entries } = policy.destinations;
    const listed = entries.some(
      (e) =>
        e.assetId === f.assetId &&
        e.address === f.destination.address &&
        (e.tag === null || e.tag === f.destination.tag),
    );
    if (mode === 'allow' && !listed) {
      return refuse('destinations', 'The destination is not on the policy allow list', { mode, listed });
    }
    if (mode === 'deny' && listed) {
      return refuse('destinations', 'The destination is on the policy deny list', { mode, listed });
    }
    results.push({ rule: 'destinations', outcome: 'passed', detail: { mode, listed } });
  }

  if (policy.addressCooldownSeconds > 0) {
    const entry = await f.bookEntryAge();
    const cooldownSeconds = policy.addressCooldownSeconds;
    if (!entry || entry.ageSeconds < cooldownSeconds) {
      const usableAt = entry
        ? new Date(new Date(entry.createdAt).getTime() + cooldownSeconds * 1000).toISOString()
        : null;
      return refuse(
        'addressCooldown',
        `The address-book entry is younger than the ${cooldownSeconds} s cool-down` +
          (usableAt ? `; withdrawals to it are allowed from ${usableAt}` : ''),
        { cooldownSeconds, entryAgeSeconds: entry ? Math.floor(entry.ageSeconds) : null, usableAt },
      );
    }
    results.push({
      rule: 'addressCooldown',
      outcome: 'passed',
      detail: { cooldownSeconds, entryAgeSeconds: Math.floor(entry.ageSeconds) },
    });
  }

  const max = policy.maxAmount.find((m) => m.assetId === f.assetId);
  if (max) {
    const limit = BigInt(max.units);
    if (f.units > limit) {
      return refuse('maxAmount', `The amount is above the ${amount(limit)} per-transaction maximum`, {
        limit: formatAmount(limit, f.decimals),
        amount: formatAmount(f.units, f.decimals),
      });
    }
    results.push({
      rule: 'maxAmount',
      outcome: 'passed',
      detail: { limit: formatAmount(limit, f.decimals), amount: formatAmount(f.units, f.decimals) },
    });
  }

  const windows: ('wallet' | 'vault')[] = [];
  for (const per of ['wallet', 'vault'] as const) {
    const rule = policy.velocity.find((v) => v.assetId === f.assetId && v.per === per);
    if (!rule) continue;
    windows.push(per);
    const limit = BigInt(rule.units);
    const used = await f.withdrawnInWindow(per);
    const detail = {
      per,
      limit: formatAmount(limit, f.decimals),
      usedInWindow: formatAmount(used, f.decimals),
      amount: formatAmount(f.units, f.decimals),
      windowHours: 24,
    };
    if (used + f.units > limit) {
      return refuse(
        'velocity',
        `Withdrawals from this ${per} in the last 24 h would reach ${amount(used + f.units)}, above the ` +
          `${amount(limit)} limit (${amount(used)} already used)`,
        detail,
      );
    }
    results.push({ rule: 'velocity', outcome: 'passed', detail });
  }

  const threshold = policy.approvals.find((a) => a.assetId === f.assetId);
  let approval: { required: number; approvers: string[]; windowSeconds: number } | null = null;
  if (threshold) {
    const above = BigInt(threshold.aboveUnits);
    const detail = {
      above: formatAmount(above, f.decimals),
      amount: formatAmount(f.units, f.decimals),
      required: threshold.required,
      approvers: threshold.approvers,
    };
    if (f.units > above) {
      const active = await f.activeKeys(threshold.approvers);
      const eligible = threshold.approvers.filter((k) => k !== f.requestedBy && active.has(k));
      if (eligible.length < threshold.required) {
        return refuse(
          'approvals',
          `The amount needs ${threshold.required} approvals but only ${eligible.length} of the named approvers ` +
            'other than the requester can approve',
          { ...detail, eligible: eligible.length },
        );
      }
      approval = {
        required: threshold.required,
        approvers: threshold.approvers,
        windowSeconds: policy.approvalWindowSeconds,
      };
      results.push({ rule: 'approvals', outcome: 'approval-required', detail });
    } else {
      results.push({ rule: 'approvals', outcome: 'passed', detail });
    }
  }
  return { refused: false, results, windows, approval };
}
