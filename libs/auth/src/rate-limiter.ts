import type Redis from 'ioredis';

export interface RateLimitRule {
  /** Requests allowed in one window. */
  limit: number;
  windowSeconds: number;
  /** The window slides in this many segments (custody: 4 segments of 15 s). */
  segments: number;
}

export interface RateLimitResult {
  allowed: boolean;
  remaining: number;
  /** Whole seconds until a request would be allowed again (0 when allowed). */
  retryAfterSeconds: number;
}

/**
 * Sliding window of N fixed segments, one counter per segment. The whole decision (sum the live segments,
 * refuse or count) is one Lua script, so concurrent requests cannot both take the last slot.
 * Time comes from the Redis server, so every replica agrees on the segment boundaries.
 * KEYS[1] = key base (hash-tagged, so all segments share a cluster slot).
 * ARGV = limit, segment length in ms, segment count.
 * Returns {allowed (0|1), remaining, retryAfterMs}.
 */
const SLIDING_WINDOW = `
local limit = tonumber(ARGV[1])
local segMs = tonumber(ARGV[2])
local segments = tonumber(ARGV[3])
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local current = math.floor(nowMs / segMs)
local total = 0
local counts = {}
for i = 0, segments - 1 do
  local c = tonumber(redis.call('GET', KEYS[1] .. ':' .. (current - i)) or '0')
  counts[i] = c
  total = total + c
end
if total >= limit then
  local excess = total - limit + 1
  local retryMs = segMs
  for i = segments - 1, 0, -1 do
    excess = excess - counts[i]
    if excess <= 0 then
      retryMs = (current - i + segments) * segMs - nowMs
      break
    end
  end
  return {0, 0, retryMs}
end
local key = KEYS[1] .. ':' .. current
redis.call('INCR', key)
redis.call('PEXPIRE', key, segMs * (segments + 1))
return {1, limit - total - 1, 0}
`;

type WithSlidingWindow = Redis & {
  tesseraSlidingWindow(
    key: string,
    limit: number,
    segmentMs: number,
    segments: number,
  ): Promise<[number, number, number]>;
};

export class RateLimiter {
  private readonly redis: WithSlidingWindow;

  constructor(
    redis: Redis,
    private readonly keyPrefix: string,
  ) {
    // defineCommand sends the script once and then calls it by its SHA (EVALSHA).
    if (!('tesseraSlidingWindow' in redis)) {
      redis.defineCommand('tesseraSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
    }
    this.redis = redis as WithSlidingWindow;
  }

  async consume(bucket: string, rule: RateLimitRule): Promise<RateLimitResult> {
    const segmentMs = Math.ceil((rule.windowSeconds * 1000) / rule.segments);
    const [allowed, remaining, retryMs] = await this.redis.tesseraSlidingWindow(
      `${this.keyPrefix}:rl:{${bucket}}`,
      rule.limit,
      segmentMs,
      rule.segments,
    );
    return {
      allowed: allowed === 1,
      remaining,
      retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil(retryMs / 1000)),
    };
  }
}
