// One file at a time: each e2e file boots its own set of real apps, and the machine has 2 shared cores.
module.exports = require('../../jest.base.js')({ maxWorkers: 1, testTimeout: 60000 });
