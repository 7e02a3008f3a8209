export * from './encryption';
export * from './rate-limiter';
export * from './secrets';
export * from './sdk-token';
