// The chaos harness's own gateway entry: what `switchyard start --role ... --port ...` does, with
// one planted bug injected through the gateway's seams. Only the harness starts it.

import { Command, Option } from 'commander';
import { startGateway, stopOnSignals } from '../src/cli/gateway.ts';
import { settingsFromEnv } from '../src/cli/settings.ts';
import { isPlantedBug, plantedSeams, PLANTED_BUGS } from './planted-bugs.ts';
import { seamsFollowing } from './planted-switch.ts';

const program = new Command('planted-gateway')
  .addOption(new Option('--plant <bug>', 'the bug to inject').choices(PLANTED_BUGS).conflicts('plantFile'))
  .option('--plant-file <file>', 'the bug named in this file now (empty: none), re-read while running')
  .addOption(new Option('--role <role>').choices(['api', 'worker']).makeOptionMandatory())
  .requiredOption('--port <port>', 'HTTP port', (v) => Number(v))
  .action(async (o: { plant?: string; plantFile?: string; role: 'api' | 'worker'; port: number }) => {
    const print = (line: string): void => console.log(line);
    let seams;
    if (o.plantFile !== undefined) seams = seamsFollowing(o.plantFile, print);
    else if (o.plant !== undefined && isPlantedBug(o.plant)) seams = plantedSeams(o.plant);
    else throw new Error('--plant <bug> or --plant-file <file> is required');
    const gateway = await startGateway({
      ...settingsFromEnv(), role: o.role, port: o.port, listen: true, print, log: (l) => console.error(l), seams,
    });
    print(`planted bug: ${o.plantFile === undefined ? o.plant! : `as ${o.plantFile} says`}`);
    stopOnSignals(gateway, print);
  });

await program.parseAsync(process.argv);
