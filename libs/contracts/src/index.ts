export * from './queues';
export * from './jobs';
export * from './rpc';
export * from './webhooks-catalog';
export * from './webhooks';
export * from './custody';
export * from './verification';
export * from './media';
