import { isolationScenario } from './fixture/isolation';

// Runs in parallel with isolation-b.e2e-spec.ts (Jest workers); each must see only its own rows.
isolationScenario('a');
