import type { EntityManager } from 'typeorm';
import type { PolicyGate } from './transaction-writer';

/**
 * A withdrawal's gate in its write transaction (after the wallet's balance row is locked): the destination must be
 * in the address book, its entry held until the commit so that a DELETE of it waits (decision 0220); then the
 * tenant's withdrawal policy. The address book's refusal is its own verdict (`notInAddressBook`), answered on
 * `destinationAddress`, never as a policy rule.
 */
export function bookThenPolicy(
  inBook: (manager: EntityManager) => Promise<boolean>,
  policy: PolicyGate,
): PolicyGate {
  return {
    evaluate: async (manager, usage) =>
      (await inBook(manager)) ? policy.evaluate(manager, usage) : { ok: false, notInAddressBook: true },
  };
}
