import { z } from 'zod';
import {
  applicantCreateSchema,
  companyInfoPatchSchema,
  emailAddress,
  personalInfoPatchSchema,
} from './verification';
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
    [companyInfoPatchSchema, { legalForm: 'x'.repeat(501) }, ['legalForm'], 'must be at most 500 characters'],
    [companyInfoPatchSchema, { email: 'not-an-email' }, ['email'], 'must be an email address'],
    [companyInfoPatchSchema, { email: 7 }, ['email'], 'must be a string'],
    [personalInfoPatchSchema, { email: 'a@b' }, ['email'], 'must be an email address'],
    [
      applicantCreateSchema,
      { externalUserId: 'u', email: 'a@' + 'b'.repeat(250) + '.co' },
      ['email'],
      'must be at most 254 characters',
    ],
    [
      applicantCreateSchema,
      { externalUserId: 'alice ' },
      ['externalUserId'],
      'must not start or end with whitespace',
    ],
    [
      applicantCreateSchema,
      { externalUserId: '\u00a0alice' },
      ['externalUserId'],
      'must not start or end with whitespace',
    ],
    [applicantCreateSchema, { externalUserId: ' \t ' }, ['externalUserId'], 'is required'],
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

describe('one email rule for every stored address', () => {
  it('trims, then takes one address of at most 254 characters', () => {
    expect(emailAddress.parse(' jane@example.com ')).toBe('jane@example.com');
    expect(emailAddress.parse('müller@bücher.de')).toBe('müller@bücher.de');
    for (const bad of ['jane', 'jane@', '@example.com', 'a b@example.com', 'jane@example', 'x@y..z', ''])
      expect(emailAddress.safeParse(bad).success).toBe(false);
  });

  it('keeps an externalUserId exactly as sent', () => {
    expect(applicantCreateSchema.parse({ externalUserId: 'a b/c' }).externalUserId).toBe('a b/c');
  });
});
