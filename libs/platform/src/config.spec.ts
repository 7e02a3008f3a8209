import { baseEnvSchema, ConfigError, envList, loadConfig } from './config';

const valid = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1/tessera',
  REDIS_URL: 'redis://127.0.0.1:6379',
  PORT: '3001',
};

describe('loadConfig', () => {
  it('parses and applies defaults', () => {
    const env = loadConfig(baseEnvSchema, valid);
    expect(env.PORT).toBe(3001);
    expect(env.LOG_LEVEL).toBe('info');
    expect(env.QUEUE_PREFIX).toBe('tessera');
    expect(env.MIGRATE_ON_BOOT).toBe(false);
  });

  it('crashes with every bad variable named', () => {
    let error: unknown;
    try {
      loadConfig(baseEnvSchema, {
        ...valid,
        PORT: 'eighty',
        REDIS_URL: 'localhost:6379',
        SECRETS_MASTER_KEY: 'c2hvcnQ=',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/^Invalid environment configuration/);
    expect(message).toMatch(/PORT: /);
    expect(message).toMatch(/REDIS_URL: must be a redis:\/\/ URL/);
    expect(message).toMatch(/SECRETS_MASTER_KEY: must be base64 of exactly 32 bytes/);
  });

  it('names a missing required variable', () => {
    expect(() => loadConfig(baseEnvSchema, { REDIS_URL: valid.REDIS_URL, PORT: '1' })).toThrow(
      /DATABASE_URL/,
    );
  });

  it('treats an empty string as unset, so defaults apply', () => {
    expect(loadConfig(baseEnvSchema, { ...valid, LOG_LEVEL: '' }).LOG_LEVEL).toBe('info');
  });

  it('refuses a boolean that is not true/false/1/0', () => {
    expect(() => loadConfig(baseEnvSchema, { ...valid, MIGRATE_ON_BOOT: 'yes' })).toThrow(/MIGRATE_ON_BOOT/);
  });

  it('reads a comma list and names each entry its check refuses', () => {
    const schema = baseEnvSchema.extend({
      LIST: envList((e) => (/^\d+$/.test(e) ? undefined : `${e} is not a number`)).default([]),
    });
    expect(loadConfig(schema, { ...valid, LIST: ' 1, 2,,3 ' }).LIST).toEqual(['1', '2', '3']);
    expect(loadConfig(schema, valid).LIST).toEqual([]);
    expect(() => loadConfig(schema, { ...valid, LIST: '1,x,2,y' })).toThrow(
      /LIST: x is not a number.*y is not/s,
    );
  });
});
