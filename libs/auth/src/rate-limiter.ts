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
 * admit what fits, count it) is one Lua script, so concurrent requests cannot both take the last slot.
 * Time comes from the Redis server, so every replica agrees on the segment boundaries.
 * KEYS[1] = key base (hash-tagged, so all segments share a cluster slot).
 * ARGV = limit, segment length in ms, segment count, requests wanted (default 1).
 * Admits as many of the wanted requests as the window still has room for.
 * Returns {admitted, remaining, retryAfterMs (0 when all were admitted), the segment they were counted in}.
 */
const SLIDING_WINDOW = `
local limit = tonumber(ARGV[1])
local segMs = tonumber(ARGV[2])
local segments = tonumber(ARGV[3])
local wanted = tonumber(ARGV[4] or '1')
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
local admitted = math.min(wanted, math.max(0, limit - total))
if admitted > 0 then
  local key = KEYS[1] .. ':' .. current
  redis.call('INCRBY', key, admitted)
  redis.call('PEXPIRE', key, segMs * (segments + 1))
  counts[0] = counts[0] + admitted
  total = total + admitted
end
local retryMs = 0
if admitted < wanted then
  local excess = total - limit + 1
  retryMs = segMs
  for i = segments - 1, 0, -1 do
    excess = excess - counts[i]
    if excess <= 0 then
      retryMs = (current - i + segments) * segMs - nowMs
      break
    end
  end
end
return {admitted, math.max(0, limit - total), retryMs, current}
`;

/**
 * Hands back permits counted in one segment and not used (PermitLeases): takes up to ARGV[2] off that
 * segment's counter, never below zero and never after the counter has expired with its segment.
 * KEYS[1] = key base, ARGV = segment, count. Returns how many were handed back.
 */
const HAND_BACK = `
local key = KEYS[1] .. ':' .. ARGV[1]
local back = math.min(tonumber(ARGV[2]), tonumber(redis.call('GET', key) or '0'))
if back > 0 then
  redis.call('DECRBY', key, back)
end
return back
`;

export interface RateLimitTake {
  /** How many of the wanted requests fit in the window (and were counted). */
  admitted: number;
  remaining: number;
  /** Whole seconds until a refused request would be allowed again (0 when every one was admitted). */
  retryAfterSeconds: number;
  /** The window segment the admitted requests were counted in (for `handBack`). */
  segment: number;
}

type WithSlidingWindow = Redis & {
  tesseraSlidingWindow(
    key: string,
    limit: number,
    segmentMs: number,
    segments: number,
    wanted: number,
  ): Promise<[number, number, number, number]>;
  tesseraSlidingWindowHandBack(key: string, segment: number, count: number): Promise<number>;
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
      redis.defineCommand('tesseraSlidingWindowHandBack', { numberOfKeys: 1, lua: HAND_BACK });
    }
    this.redis = redis as WithSlidingWindow;
  }

  async consume(bucket: string, rule: RateLimitRule): Promise<RateLimitResult> {
    const { admitted, remaining, retryAfterSeconds } = await this.take(bucket, rule, 1);
    return { allowed: admitted === 1, remaining, retryAfterSeconds };
  }

  /**
   * Counts `wanted` requests at once (requests that arrived together): admits as many as the window still
   * has room for. `retryAfterSeconds` is for the ones that were not admitted (0 when all were).
   */
  async take(bucket: string, rule: RateLimitRule, wanted: number): Promise<RateLimitTake> {
    const segmentMs = Math.ceil((rule.windowSeconds * 1000) / rule.segments);
    const [admitted, remaining, retryMs, segment] = await this.redis.tesseraSlidingWindow(
      this.keyOf(bucket),
      rule.limit,
      segmentMs,
      rule.segments,
      wanted,
    );
    return {
      admitted,
      remaining,
      retryAfterSeconds: admitted === wanted ? 0 : Math.max(1, Math.ceil(retryMs / 1000)),
      segment,
    };
  }

  /**
   * Uncounts `count` requests that `take` admitted in `segment` but that were never served, so the window
   * has room for them again. Answers how many were handed back (fewer once the segment has expired).
   */
  handBack(bucket: string, segment: number, count: number): Promise<number> {
    return this.redis.tesseraSlidingWindowHandBack(this.keyOf(bucket), segment, count);
  }

  private keyOf(bucket: string): string {
    return `${this.keyPrefix}:rl:{${bucket}}`;
  }
}
