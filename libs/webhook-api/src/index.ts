export * from './webhook-api.module';
