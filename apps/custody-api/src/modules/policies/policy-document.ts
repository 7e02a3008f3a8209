/**
 * A withdrawal policy as stored (`withdrawal_policies.document`): asset ids, amounts in base units as decimal
 * strings of integers, addresses normalised like the address book's. The wire form is in libs/contracts
 * (custody-policies.ts); PoliciesService converts between the two.
 */
export interface PolicyDocument {
  maxAmount: { assetId: string; units: string }[];
  velocity: { assetId: string; per: 'wallet' | 'vault'; units: string }[];
  approvals: { assetId: string; aboveUnits: string; required: number; approvers: string[] }[];
  addressCooldownSeconds: number;
  destinations: {
    mode: 'allow' | 'deny';
    entries: { assetId: string; address: string; tag: string | null }[];
  } | null;
  approvalWindowSeconds: number;
}

export const EMPTY_POLICY: PolicyDocument = {
  maxAmount: [],
  velocity: [],
  approvals: [],
  addressCooldownSeconds: 0,
  destinations: null,
  approvalWindowSeconds: 86400,
};

/** True when no rule would ever look at a withdrawal. */
export const isEmptyPolicy = (d: PolicyDocument) =>
  d.maxAmount.length === 0 &&
  d.velocity.length === 0 &&
  d.approvals.length === 0 &&
  d.addressCooldownSeconds === 0 &&
  d.destinations === null;
