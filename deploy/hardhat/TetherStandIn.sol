// SPDX-License-Identifier: MIT
// The local USDT stand-in: an OpenZeppelin 4.9.6 ERC-20 with USDT's 6 decimals and its whole fixed supply
// minted to the deployer. Compiled once with solc 0.8.24 (see README.md here); the artifact is committed.
pragma solidity 0.8.24;

import "@openzeppelin/contracts/token/ERC20/ERC20.sol";

contract TetherStandIn is ERC20 {
    constructor(uint256 supply) ERC20("Tether USD (local)", "USDT") {
        _mint(msg.sender, supply);
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }
}
