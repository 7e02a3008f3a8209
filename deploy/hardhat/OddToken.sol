// SPDX-License-Identifier: MIT
// Test only: the ways real tokens depart from ERC-20's letter, put in place of the USDT stand-in's code with
// `hardhat_setCode` (the same storage layout as OpenZeppelin's ERC20, so every balance stays where it was).
// `mode` (storage slot 100, set with `hardhat_setStorageAt`):
//   0: transfer answers false and moves nothing, without reverting (tokens that report failure by value);
//   1: transfer takes a 1 % fee to FEE_SINK, with a Transfer log for each part (USDT with basisPointsRate > 0);
//   2: transfer moves the amount and returns no value at all (mainnet USDT's ABI).
pragma solidity 0.8.26;

contract OddToken {
    mapping(address => uint256) private _balances; // slot 0, as OpenZeppelin's ERC20
    mapping(address => mapping(address => uint256)) private _allowances; // slot 1
    uint256 private _totalSupply; // slot 2
    uint256[97] private _gap; // slots 3-99 (OpenZeppelin's _name and _symbol live in 3 and 4)
    uint256 public mode; // slot 100

    address public constant FEE_SINK = 0x000000000000000000000000000000000000FEE0;

    event Transfer(address indexed from, address indexed to, uint256 value);

    function balanceOf(address owner) external view returns (uint256) {
        return _balances[owner];
    }

    function decimals() external pure returns (uint8) {
        return 6;
    }

    function transfer(address to, uint256 value) external {
        uint256 m = mode;
        if (m == 0) {
            assembly {
                mstore(0, 0)
                return(0, 32)
            }
        }
        require(_balances[msg.sender] >= value, "insufficient balance");
        uint256 fee = m == 1 ? value / 100 : 0;
        _balances[msg.sender] -= value;
        _balances[to] += value - fee;
        if (fee > 0) {
            _balances[FEE_SINK] += fee;
            emit Transfer(msg.sender, FEE_SINK, fee);
        }
        emit Transfer(msg.sender, to, value - fee);
        if (m == 1) {
            assembly {
                mstore(0, 1)
                return(0, 32)
            }
        }
    }
}
