// The chaos harness's own gateway entry: what `switchyard start --role ... --port ...` does, with
// one planted bug injected through the gateway's seams. Only the harness starts it.

import { Command, Option } from 'commander';
import { startGateway, stopOnSignals } from '../src/cli/gateway.ts';
import { settingsFromEnv } from '../src/cli/settings.ts';
import { isPlantedBug, plantedSeams, PLANTED_BUGS } from './planted-bugs.ts';

const program = new Command('planted-gateway')
  .addOption(new Option('--plant <bug>', 'the bug to inject').choices(PLANTED_BUGS).makeOptionMandatory())
  .addOption(new Option('--role <role>').choices(['api', 'worker']).makeOptionMandatory())
  .requiredOption('--port <port>', 'HTTP port', (v) => Number(v))
  .action(async (o: { plant: string; role: 'api' | 'worker'; port: number }) => {
    if (!isPlantedBug(o.plant)) throw new Error(`unknown bug ${o.plant}`);
    const print = (line: string): void => console.log(line);
    const gateway = await startGateway({
      ...settingsFromEnv(), role: o.role, port: o.port, listen: true, print, log: (l) => console.error(l), seams: plantedSeams(o.plant),
    });
    print(`planted bug: ${o.plant}`);
    stopOnSignals(gateway, print);
  });

await program.parseAsync(process.argv);
