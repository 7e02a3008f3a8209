export * from './encryption';
export * from './ip-allow-list';
export * from './rate-limiter';
export * from './replay-cache';
export * from './request-signing';
export * from './secrets';
export * from './sdk-token';
export * from './webhook-signature';
