import { z } from 'zod';
import { companyInfoPatchSchema } from './verification';
import { uboCreateSchema, uboPatchSchema } from './verification-ubos';
import './zod-messages';

const firstMessage = (schema: z.ZodType, input: unknown) => {
  const result = schema.safeParse(input);
  if (result.success) throw new Error('expected a refusal');
  return { path: result.error.issues[0].path, message: result.error.issues[0].message };
};

describe('house wording of zod issues (decision 0483)', () => {
  it.each([
    [uboPatchSchema, { fullName: 5 }, ['fullName'], 'must be a string'],
    [uboPatchSchema, { ownershipPercent: '10' }, ['ownershipPercent'], 'must be a number'],
    [uboPatchSchema, { roles: 'ubo' }, ['roles'], 'must be an array'],
    [uboPatchSchema, { email: 7 }, ['email'], 'must be a string'],
    [companyInfoPatchSchema, { companyName: 42 }, ['companyName'], 'must be a string'],
    [companyInfoPatchSchema, { phone: { n: 1 } }, ['phone'], 'must be a string'],
    [companyInfoPatchSchema, { companyName: '' }, ['companyName'], 'must not be empty'],
    [companyInfoPatchSchema, { email: 'x'.repeat(501) }, ['email'], 'must be at most 500 characters'],
    [
      z.object({ ubos: z.array(uboCreateSchema) }),
      { ubos: [{ fullName: 5 }] },
      ['ubos', 0, 'fullName'],
      'must be a string',
    ],
    [z.object({ on: z.boolean() }), { on: 'yes' }, ['on'], 'must be true or false'],
    [
      z.object({ type: z.enum(['individual', 'company']) }),
      { type: 'x' },
      ['type'],
      'must be one of individual, company',
    ],
    [z.object({ name: z.string() }), {}, ['name'], 'is required'],
  ])('case %#', (schema, input, path, message) => {
    expect(firstMessage(schema, input)).toEqual({ path, message });
  });

  it("keeps a schema's own message", () => {
    const schema = z.object({ name: z.string({ error: 'name is required' }) });
    expect(firstMessage(schema, { name: 1 }).message).toBe('name is required');
  });
});
