// The sandbox's TLS material: a private CA and a server certificate for 127.0.0.1 / localhost,
// minted once with node:crypto and kept in a directory so every run (and the connector's `ca`)
// trusts the same CA. Parallel test files may race to create it: the set is written to a private
// temporary directory and renamed into place, and whoever loses the rename reads the winner's.

import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bitString, booleanTrue, explicit, implicitPrimitive, objectIdentifier, octetString, sequence, set, time, unsignedInteger, utf8String } from './der.ts';
import type { Der } from './der.ts';

export interface SandboxTlsMaterial {
  /** The CA certificate a client trusts (`ca` option); served by the control API as ca.pem. */
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

const BUNDLE_DIR = 'adyen-sandbox-tls-v1';

/** Where the CA certificate of a sandbox using `directory` lives: clients in other processes trust it from here. */
export function sandboxCaFile(directory: string): string {
  return join(directory, BUNDLE_DIR, 'ca.pem');
}
const DAY_MS = 86_400_000;
const ECDSA_WITH_SHA256 = sequence(objectIdentifier('1.2.840.10045.4.3.2'));

const name = (commonName: string): Der => sequence(set(sequence(objectIdentifier('2.5.4.3'), utf8String(commonName))));
const extension = (oid: string, critical: boolean, value: Der): Der =>
  sequence(objectIdentifier(oid), ...(critical ? [booleanTrue()] : []), octetString(value));

interface CertificateSpec {
  readonly subject: string;
  readonly issuer: string;
  readonly publicKey: KeyObject;
  readonly signingKey: KeyObject;
  readonly extensions: readonly Der[];
  readonly now: Date;
}

function certificate(spec: CertificateSpec): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    ECDSA_WITH_SHA256,
    name(spec.issuer),
    sequence(time(new Date(spec.now.getTime() - DAY_MS)), time(new Date(spec.now.getTime() + 3650 * DAY_MS))),
    name(spec.subject),
    spec.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...spec.extensions)),
  );
  const signature = sign('sha256', tbs, spec.signingKey); // DER ECDSA-Sig-Value
  const der = sequence(tbs, ECDSA_WITH_SHA256, bitString(signature));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** Mints a CA and a server certificate (SAN 127.0.0.1, ::1, localhost) signed by it. */
export function mintSandboxTlsMaterial(now: Date = new Date()): SandboxTlsMaterial {
  const ca = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const server = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caPem = certificate({
    subject: 'Switchyard Adyen sandbox CA',
    issuer: 'Switchyard Adyen sandbox CA',
    publicKey: ca.publicKey,
    signingKey: ca.privateKey,
    now,
    extensions: [
      extension('2.5.29.19', true, sequence(booleanTrue())), // basicConstraints CA:TRUE
      extension('2.5.29.15', true, bitString(Buffer.from([0x06]))), // keyUsage keyCertSign, cRLSign
    ],
  });
  const san = sequence(
    implicitPrimitive(7, Buffer.from([127, 0, 0, 1])),
    implicitPrimitive(7, Buffer.concat([Buffer.alloc(15), Buffer.from([1])])),
    implicitPrimitive(2, Buffer.from('localhost', 'ascii')),
  );
  const certPem = certificate({
    subject: '127.0.0.1',
    issuer: 'Switchyard Adyen sandbox CA',
    publicKey: server.publicKey,
    signingKey: ca.privateKey,
    now,
    extensions: [
      extension('2.5.29.19', true, sequence()), // basicConstraints CA:FALSE
      extension('2.5.29.37', false, sequence(objectIdentifier('1.3.6.1.5.5.7.3.1'))), // extKeyUsage serverAuth
      extension('2.5.29.17', false, san),
    ],
  });
  const keyPem = server.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { caPem, certPem, keyPem };
}

function readBundle(dir: string): SandboxTlsMaterial | null {
  const files = ['ca.pem', 'server-cert.pem', 'server-key.pem'].map((f) => join(dir, f));
  if (!files.every((f) => existsSync(f))) return null;
  const [caPem, certPem, keyPem] = files.map((f) => readFileSync(f, 'utf8')) as [string, string, string];
  // Expired or not signed by its CA (a half-copied directory): mint a new one.
  const cert = new X509Certificate(certPem);
  if (Date.parse(cert.validTo) < Date.now() + DAY_MS || !cert.verify(new X509Certificate(caPem).publicKey)) return null;
  return { caPem, certPem, keyPem };
}

/** Loads the TLS material kept in `directory`, minting it on first use. */
export function ensureSandboxTlsMaterial(directory: string): SandboxTlsMaterial {
  const target = join(directory, BUNDLE_DIR);
  const existing = readBundle(target);
  if (existing !== null) return existing;
  mkdirSync(directory, { recursive: true });
  const material = mintSandboxTlsMaterial();
  const staging = mkdtempSync(join(directory, `.${BUNDLE_DIR}-`));
  writeFileSync(join(staging, 'ca.pem'), material.caPem);
  writeFileSync(join(staging, 'server-cert.pem'), material.certPem);
  writeFileSync(join(staging, 'server-key.pem'), material.keyPem, { mode: 0o600 });
  try {
    if (existsSync(target)) rmSync(target, { recursive: true, force: true }); // stale or broken
    renameSync(staging, target);
    return material;
  } catch {
    rmSync(staging, { recursive: true, force: true });
    const winner = readBundle(target);
    if (winner === null) throw new Error(`could not create the sandbox TLS material in ${target}`);
    return winner;
  }
}
