// node --import tsx bench/cpu-summary.ts <file.cpuprofile> [top]
// Summarizes a V8 CPU profile (node --cpu-prof): self time by function and by package or source
// directory, and inclusive time of our own source files, so a profile can be read without DevTools.

import { readFileSync } from 'node:fs';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

const file = process.argv[2];
if (file === undefined) throw new Error('usage: cpu-summary.ts <file.cpuprofile> [top]');
const top = Number(process.argv[3] ?? 30);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<number, number>();
p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000));
const total = [...self.values()].reduce((a, b) => a + b, 0);

const where = (url: string): string => {
  if (url === '') return '(native/idle)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split('/');
    return `npm:${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  if (src >= 0) return url.slice(src + 1).split('/').slice(0, 2).join('/');
  return url.replace(/^file:\/\//, '');
};

const add = (m: Map<string, number>, k: string, v: number): void => void m.set(k, (m.get(k) ?? 0) + v);
const fnSelf = new Map<string, number>();
const pkgSelf = new Map<string, number>();
const fileIncl = new Map<string, number>();
for (const [id, ms] of self) {
  const n = byId.get(id)!;
  const f = n.callFrame;
  add(fnSelf, `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`, ms);
  add(pkgSelf, where(f.url), ms);
  // Inclusive per our source file: count each file once per sample stack.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const u = byId.get(cur)!.callFrame.url;
    const s = u.indexOf('/src/');
    if (s >= 0 && !u.includes('node_modules')) seen.add(u.slice(s + 1));
  }
  for (const s of seen) add(fileIncl, s, ms);
}
const show = (title: string, m: Map<string, number>): void => {
  console.log(`\n== ${title}`);
  for (const [k, v] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(v / total * 100).toFixed(1).padStart(5)} %  ${k}`);
};
console.log(`profile: ${(total / 1000).toFixed(1)} s sampled`);
show('self time by package / directory', pkgSelf);
show('self time by function', fnSelf);
show('inclusive time by our source file', fileIncl);
