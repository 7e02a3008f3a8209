import { isolationScenario } from './fixture/isolation';

// Runs in parallel with isolation-a.e2e-spec.ts (Jest workers); each must see only its own rows.
isolationScenario('b');
