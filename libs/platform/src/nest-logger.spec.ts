import type { LoggerService } from '@nestjs/common';
import { NestLogger } from './logging';

function recorder() {
  const calls: [string, unknown[]][] = [];
  const record =
    (level: string) =>
    (message: unknown, ...rest: unknown[]) =>
      calls.push([level, [message, ...rest]]);
  const inner: LoggerService = {
    log: record('info'),
    error: record('error'),
    warn: record('warn'),
    debug: record('debug'),
    verbose: record('verbose'),
  };
  return { calls, logger: new NestLogger(inner) };
}

describe('NestLogger', () => {
  it('logs Nest’s route mapping at debug and everything else at its own level', () => {
    const { calls, logger } = recorder();
    logger.log('Mapped {/health, GET} route', 'RouterExplorer');
    logger.log('HealthController {/}:', 'RoutesResolver');
    logger.log('Nest application successfully started', 'NestApplication');
    logger.warn('careful', 'Somewhere');
    logger.fatal('gone', 'Somewhere');
    expect(calls.map(([level, args]) => [level, args[0]])).toEqual([
      ['debug', 'Mapped {/health, GET} route'],
      ['debug', 'HealthController {/}:'],
      ['info', 'Nest application successfully started'],
      ['warn', 'careful'],
      ['error', 'gone'],
    ]);
  });
});
