// webhook-dispatcher is an app and ships no declarations; the test boots its compiled module.
declare module '@tessera/webhook-dispatcher/dist/app.module' {
  export const AppModule: { forRoot(env: unknown): import('@nestjs/common').DynamicModule };
}
declare module '@tessera/webhook-dispatcher/dist/config/env' {
  export function loadEnv(env: Record<string, string | undefined>): unknown;
}
declare module '@tessera/webhook-dispatcher/dist/database/database' {
  export function databaseOptions(url: string): import('@tessera/platform').ServiceDatabaseOptions;
}
