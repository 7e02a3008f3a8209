export * from './queues';
export * from './jobs';
export * from './rpc';
export * from './verification';
