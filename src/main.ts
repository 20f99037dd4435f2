// `npm start`: the whole gateway in one process — migrations, the API, the workers and the
// in-process sandboxes the config names — on PORT (default 8080).

import { redact } from './api/log-redaction.ts';
import { startGateway, stopOnSignals } from './cli/gateway.ts';
import { stopWithNpm } from './cli/npm-parent.ts';
import { safeErrorText } from './observability/safe-error-text.ts';
import { startFailureLine } from './cli/start-retry.ts';
import { settingsFromEnv } from './cli/settings.ts';

const print = (line: string): void => console.log(line);
const log = (line: string): void => console.error(redact(line));

// Local development: webhook endpoints on this machine are allowed unless told otherwise.
// `switchyard start` (production) allows no internal address unless SWITCHYARD_WEBHOOK_ALLOW says so.
process.env['SWITCHYARD_WEBHOOK_ALLOW'] ??= '127.0.0.0/8,::1,localhost';

try {
  const gateway = await startGateway({ ...settingsFromEnv(), role: 'all', listen: true, print, log });
  const stop = stopOnSignals(gateway, print);
  stopWithNpm(stop);
} catch (err) {
  console.error(startFailureLine(err) ?? `switchyard: cannot start: ${safeErrorText(err)}`);
  process.exit(1);
}
