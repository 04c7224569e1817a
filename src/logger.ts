import pino, { type Logger } from 'pino';
import type { Config } from './config.js';

/** Header values that must never reach a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
];

export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>): Logger {
  return pino({
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    ...(config.logFormat === 'pretty'
      ? { transport: { target: 'pino-pretty', options: { colorize: process.stdout.isTTY } } }
      : {}),
  });
}
