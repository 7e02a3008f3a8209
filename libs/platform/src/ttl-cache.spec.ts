import { TtlCache } from './ttl-cache';

describe('TtlCache', () => {
  it('drops exact keys and every key under a prefix', () => {
    const cache = new TtlCache<number>(60_000);
    for (const key of ['product:1:name:A', 'product:1:default:individual', 'product:2:name:A', 'id:9'])
      cache.set(key, 1);
    cache.invalidate({ prefixes: ['product:1:'], keys: ['id:9'] });
    expect(
      ['product:1:name:A', 'product:1:default:individual', 'product:2:name:A', 'id:9'].map((k) =>
        cache.get(k),
      ),
    ).toEqual([undefined, undefined, 1, undefined]);
  });

  it('does not store a value loaded before an invalidation that arrived during the load', () => {
    const cache = new TtlCache<string>(60_000);
    const before = cache.version;
    cache.invalidate({ keys: ['k'] }); // arrives while the (old) row is being read
    cache.set('k', 'old row', before);
    expect(cache.get('k')).toBeUndefined();
    cache.set('k', 'fresh row', cache.version);
    expect(cache.get('k')).toBe('fresh row');
  });

  it('stores nothing with a TTL of 0 and forgets entries once expired', async () => {
    const off = new TtlCache<number>(0);
    off.set('k', 1);
    expect(off.get('k')).toBeUndefined();
    const short = new TtlCache<number>(20);
    short.set('k', 1);
    expect(short.get('k')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(short.get('k')).toBeUndefined();
  });
});
