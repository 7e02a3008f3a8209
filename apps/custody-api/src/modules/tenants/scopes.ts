/** Every scope a custody key can carry (DECISIONS.md, "Custody API"). */
export const SCOPES = [
  'vaults:read',
  'vaults:write',
  'wallets:read',
  'wallets:create',
  'assets:read',
  'transactions:read',
  'transfers:write',
  'withdrawals:write',
  'withdrawals:approve',
  'policies:read',
  'address-book:read',
  'address-book:write',
  'webhooks:read',
  'webhooks:write',
  'sandbox:write',
] as const;

export const SANDBOX_ONLY_SCOPES = ['sandbox:write'];
