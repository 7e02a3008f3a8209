import { sessionOptions } from './database';

describe('sessionOptions', () => {
  it("sets the schema's search_path, then the service's own settings", () => {
    expect(sessionOptions('webhooks')).toBe('-c search_path=webhooks,public');
    expect(
      sessionOptions('webhooks', { enable_seqscan: 'off', 'auto_explain.log_min_duration': '5ms' }),
    ).toBe('-c search_path=webhooks,public -c enable_seqscan=off -c auto_explain.log_min_duration=5ms');
  });

  it.each([
    ['a value with a space', { enable_seqscan: 'off -c fsync=off' }],
    ['a value with a quote', { application_name: "x'y" }],
    ['an empty value', { enable_seqscan: '' }],
    ['a name with a space', { 'enable seqscan': 'off' }],
    ['a name that starts a new option', { '-c fsync': 'off' }],
  ])('refuses %s, which would change what the startup packet says', (_, settings) => {
    expect(() => sessionOptions('webhooks', settings)).toThrow(/Invalid session setting/);
  });
});
