import { z } from 'zod';
import { type LookupAddress, lookup as dnsLookup } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import type { Ambiente } from '@hub/config';
import ipaddr from 'ipaddr.js';

/**
 * Where deliveries may go (DESIGN §5). In SANDBOX and PRODUCTION a subscription must not reach the
 * hub's own network: loopback, private, link-local (the 169.254.169.254 metadata service
 * included), CGNAT, multicast, reserved, unspecified and unique-local addresses are refused, also
 * when written as IPv4-mapped IPv6, and also when a host name resolves to one of them. An
 * allow-list of CIDRs opens exceptions. LOCALHOST allows everything.
 *
 * The delivery worker checks again the address it actually connects to (`createSafeLookup`), so a
 * name that resolves differently later (DNS rebinding) gets nowhere either.
 */

export type Address = ipaddr.IPv4 | ipaddr.IPv6;
export type Cidr = [Address, number];

const FORBIDDEN_IPV4 = new Set([
  'unspecified',
  'broadcast',
  'multicast',
  'linkLocal',
  'loopback',
  'carrierGradeNat',
  'private',
  'reserved',
]);
// IPv6 ranges that carry an IPv4 address in their last 32 bits: judged by that address.
const EMBEDDING_IPV4 = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052']);

/** "10.1.0.0/16, fd00::/8" to CIDRs; a bare address is a /32 or /128. Throws on a bad entry. */
export function parseAllowlist(text: string): Cidr[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      try {
        if (entry.includes('/')) return ipaddr.parseCIDR(entry) as Cidr;
        const address = ipaddr.parse(entry);
        return [address, address.kind() === 'ipv4' ? 32 : 128] as Cidr;
      } catch {
        throw new Error(`"${entry}" is not a CIDR like 10.0.0.0/8 or fd00::/8`);
      }
    });
}

function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = address.toByteArray();
  return new ipaddr.IPv4(bytes.slice(12, 16));
}

function inAllowlist(address: Address, allowlist: readonly Cidr[]): boolean {
  return allowlist.some(
    ([network, bits]) => network.kind() === address.kind() && address.match(network as never, bits),
  );
}

/**
 * True when a delivery must not go to this address. Anything that is not a plain IP address is
 * forbidden too (fail closed). Export for the delivery worker: check the connected address.
 */
export function isForbiddenAddress(ip: string, allowlist: readonly Cidr[] = []): boolean {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (!isIP(text.split('%')[0] ?? '')) return true;
  let address: Address;
  try {
    address = ipaddr.parse(text);
  } catch {
    return true;
  }
  if (inAllowlist(address, allowlist)) return false;
  if (address.kind() === 'ipv6') {
    const v6 = address as ipaddr.IPv6;
    const range = v6.range();
    if (EMBEDDING_IPV4.has(range)) {
      const v4 = embeddedIpv4(v6);
      return !inAllowlist(v4, allowlist) && FORBIDDEN_IPV4.has(v4.range());
    }
    return range !== 'unicast';
  }
  return FORBIDDEN_IPV4.has(address.range());
}

export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: LookupAll = (hostname) => dnsLookupAll(hostname, { all: true, verbatim: true });

export interface DestinationPolicy {
  ambiente: Ambiente;
  allowlist: readonly Cidr[];
  /** Name resolution; dns.lookup (hosts file included, as the worker's connection uses) by default. */
  lookup?: LookupAll;
  lookupTimeoutMs?: number;
}

export type DestinationVerdict =
  | { permitido: true; enderecos: string[] }
  | { permitido: false; codigo: 'destino_proibido' | 'destino_nao_resolvido'; motivo: string };

/** Whether a delivery may go to the host of this URL under the policy. */
export async function checkDestination(url: URL, policy: DestinationPolicy): Promise<DestinationVerdict> {
  if (policy.ambiente === 'LOCALHOST') return { permitido: true, enderecos: [] };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await withTimeout((policy.lookup ?? systemLookup)(host), policy.lookupTimeoutMs ?? 5_000)).map(
        (a) => a.address,
      );
    } catch (error) {
      return {
        permitido: false,
        codigo: 'destino_nao_resolvido',
        motivo: `the host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      };
    }
    if (addresses.length === 0)
      return { permitido: false, codigo: 'destino_nao_resolvido', motivo: `the host ${host} has no address` };
  }
  const forbidden = addresses.find((address) => isForbiddenAddress(address, policy.allowlist));
  if (forbidden) {
    const via = forbidden === host ? '' : ` (${host} resolves to ${forbidden})`;
    return {
      permitido: false,
      codigo: 'destino_proibido',
      motivo: `deliveries may not go to internal, private or reserved addresses${via}; ask an operator to add it to DESTINATION_ALLOWLIST if it is meant`,
    };
  }
  return { permitido: true, enderecos: addresses };
}

/**
 * A `lookup` for http.request/net.connect (or an undici Agent's `connect.lookup`) that refuses
 * forbidden addresses with the error code EDESTINOPROIBIDO: the check on the address the
 * connection really uses.
 */
export function createSafeLookup(
  allowlist: readonly Cidr[] = [],
  lookup: typeof dnsLookup = dnsLookup,
): LookupFunction {
  return ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
    lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error);
      const forbidden = addresses.find((a) => isForbiddenAddress(a.address, allowlist));
      if (forbidden) {
        const refusal = Object.assign(
          new Error(`${hostname} resolves to ${forbidden.address}, where deliveries may not go`),
          { code: 'EDESTINOPROIBIDO' },
        );
        return callback(refusal);
      }
      if ((options as { all?: boolean }).all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }));
      return callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer in ${ms} ms`), { code: 'ETIMEOUT' })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * DESTINATION_ALLOWLIST as a config field (hub-api and the delivery worker read it alike): a
 * comma-separated list of CIDRs, parsed, or a config error naming what is wrong.
 */
export const allowlistFromEnv = (description: string) =>
  z
    .string()
    .default('')
    .transform((text, ctx) => {
      try {
        return parseAllowlist(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    })
    .describe(description);
