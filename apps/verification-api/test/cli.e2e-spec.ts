import { createTestEnvironment, type TestEnvironment } from '@tessera/testing';
import { runCli } from '../src/cli/run';
import { migrator } from './harness';

let env: TestEnvironment;
beforeAll(async () => {
  env = await createTestEnvironment([migrator]);
});
afterAll(() => env?.teardown());

const cli = (...argv: string[]) => runCli(argv, env.env);

describe('operator CLI', () => {
  it('creates a product, keys, a level, updates it and deactivates a key, printing JSON', async () => {
    const product = await cli('create-product', '--name', 'Acme');
    expect(product).toEqual({ code: 0, output: { id: expect.any(String), name: 'Acme' } });
    const productId = (product.output as { id: string }).id;
    const key = await cli('create-key', '--product', productId, '--environment', 'sandbox');
    expect(key.output).toEqual({
      apiKey: expect.stringMatching(/^vk_test_/),
      apiSecret: expect.any(String),
      environment: 'sandbox',
    });
    const level = await cli(
      'create-level',
      '--product',
      productId,
      '--json',
      JSON.stringify({ name: 'CLI_LEVEL', applicantType: 'individual', steps: [{ kind: 'selfie' }] }),
    );
    expect(level.output).toMatchObject({ name: 'CLI_LEVEL', steps: [{ kind: 'selfie', optional: false }] });
    const updated = await cli(
      'update-level',
      '--product',
      productId,
      '--level',
      'CLI_LEVEL',
      '--json',
      '{"isActive":false}',
    );
    expect(updated.output).toMatchObject({ name: 'CLI_LEVEL', isActive: false });
    const apiKey = (key.output as { apiKey: string }).apiKey;
    expect(await cli('deactivate-key', '--key', apiKey)).toEqual({
      code: 0,
      output: { apiKey, active: false },
    });
  });

  it('reports errors as JSON with exit code 1', async () => {
    expect(await cli('deactivate-key', '--key', 'vk_live_nope')).toEqual({
      code: 1,
      output: { message: 'Key not found', status: 404 },
    });
    expect((await cli('create-product')).output).toMatchObject({ message: '--name is required' });
    expect((await cli('frobnicate')).code).toBe(1);
  });
});
