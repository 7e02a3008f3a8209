import type { EntityManager } from 'typeorm';
import type { PolicyGate } from './transaction-writer';

/** The rule of the address-book refusal: the withdraw answers it on `destinationAddress`, not as a policy rule. */
export const NOT_IN_BOOK = 'addressBook';

/**
 * A withdrawal's gate in its write transaction (after the wallet's balance row is locked): the destination must be
 * in the address book, its entry held until the commit so that a DELETE of it waits (decision 0220); then the
 * tenant's withdrawal policy.
 */
export function bookThenPolicy(
  inBook: (manager: EntityManager) => Promise<boolean>,
  policy: PolicyGate,
): PolicyGate {
  return {
    evaluate: async (manager, usage) =>
      (await inBook(manager))
        ? policy.evaluate(manager, usage)
        : { ok: false, rule: NOT_IN_BOOK, message: 'Destination address is not in the address book' },
  };
}
