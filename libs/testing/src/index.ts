export * from './app';
export * from './database';
export * from './environment';
export * from './log-capture';
export * from './redis';
export * from './tcp-proxy';
export * from './service-checks';
export * from './service-suite';
