// Structured JSON logs (pino): one object per line, with the request id of the API request being
// served when there is one. Every string that reaches a line — the message and every field — goes
// through redact() (card numbers, API keys, provider secrets, bearer tokens, URL passwords), and
// fields that are secrets by name are censored whatever their value.

import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { redact } from '../api/log-redaction.ts';
import { currentRequestId } from './request-context.ts';

export type { Logger };

/** Field names whose values never reach a log line (at the top level and one level down). */
const SECRET_FIELDS = [
  'authorization', 'cookie', 'api_key', 'apiKey', 'secret', 'secret_key', 'password', 'token', 'tokens',
  'card', 'card_number', 'number', 'cvc', 'test_card', 'testCard', 'payment_method', 'paymentMethod', 'webhook_secrets', 'raw_body', 'rawBody',
];
const REDACT_PATHS = [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`), 'req.headers.authorization', 'headers.authorization', 'headers["x-api-key"]'];

function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redact(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = redactDeep(v, depth + 1);
  return out;
}

export interface LoggerOptions {
  readonly level?: string;
}

/** A logger writing JSON lines to a stream (stderr by default) or to a function taking one line. */
export function createLogger(destination: DestinationStream | ((line: string) => void) = pino.destination(2), o: LoggerOptions = {}): Logger {
  const stream: DestinationStream = typeof destination === 'function' ? { write: (s: string) => destination(s.replace(/\n$/, '')) } : destination;
  return pino(
    {
      level: o.level ?? 'info',
      base: { service: 'switchyard' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: {
        level: (label) => ({ level: label }),
        log: (obj) => redactDeep(obj) as Record<string, unknown>,
      },
      mixin: () => {
        const requestId = currentRequestId();
        return requestId === undefined ? {} : { request_id: requestId };
      },
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((a) => (typeof a === 'string' ? redact(a) : a));
          method.apply(this, cleaned as Parameters<typeof method>);
        },
      },
    },
    stream,
  );
}

const WARNING = /\b(fail(ed|s)?|error|unexpected|cannot|dead letter|lost|refused|open)\b/i;

/** The `log(line)` function the rest of the code takes, written as pino lines (warn when it reads like trouble). */
export function lineLog(logger: Logger): (line: string) => void {
  return (line: string) => {
    if (WARNING.test(line)) logger.warn(line);
    else logger.info(line);
  };
}
