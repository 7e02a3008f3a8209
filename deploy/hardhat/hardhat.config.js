// Hardhat 2 config of the local chain (tests, `pnpm start --chain evm`, docker compose): chain id 31337,
// automine on; the default funded accounts of the "test test … junk" mnemonic.
module.exports = { networks: { hardhat: { chainId: 31337 } } };
