import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The next nonce of one sending address: taken under a row lock, so concurrent sends get distinct nonces. */
@Entity({ name: 'evm_nonces' })
export class EvmNonceEntity {
  @PrimaryColumn('integer', { name: 'chain_id' })
  chainId: number;

  @PrimaryColumn('text')
  address: string;

  @Column('bigint', { name: 'next_nonce' })
  nextNonce: string;
}
