// A progress bar for long CLI work, on stderr so stdout stays parseable. On a terminal it redraws
// one line; elsewhere (logs, CI) it writes a line at most every 10%.

export interface Progress {
  tick(label?: string): void;
  done(): void;
}

export function progressBar(total: number, title: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  let n = 0;
  let lastDecile = -1;
  const width = 30;
  const render = (label: string): string => {
    const filled = total === 0 ? width : Math.round((n / total) * width);
    return `${title} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${n}/${total}${label === '' ? '' : ` ${label}`}`;
  };
  return {
    tick(label = '') {
      n += 1;
      if (stream.isTTY) {
        stream.write(`\r${render(label)}\x1b[K`);
        return;
      }
      const decile = total === 0 ? 10 : Math.floor((n / total) * 10);
      if (decile !== lastDecile) {
        lastDecile = decile;
        stream.write(`${render(label)}\n`);
      }
    },
    done() {
      if (stream.isTTY && total > 0) stream.write('\n');
    },
  };
}
