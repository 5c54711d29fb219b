import { z } from 'zod';
import { type LookupAddress, lookup as dnsLookup } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import type { Ambiente } from '@hub/config';
import ipaddr from 'ipaddr.js';

/**
 * Where deliveries may go (architecture §5). In SANDBOX and PRODUCTION a subscription must not reach the
 * hub's own network: loopback, private, link-local (the 169.254.169.254 metadata service
 * included), CGNAT, multicast, reserved and unspecified IPv4 addresses are refused; an IPv6 address
 * must be global unicast (2000::/3, no special range such as 6to4, Teredo or documentation).
 * IPv6 forms that carry an IPv4 address (IPv4-mapped, SIIT, the NAT64 well-known prefix) are
 * judged by that address; IPv4-compatible addresses (::a.b.c.d) and local-use NAT64 are refused.
 * So is every address that resolves a host name. An allow-list of CIDRs opens exceptions, except
 * for the cloud metadata services, which no allow-list opens. LOCALHOST allows everything.
 *
 * The delivery worker checks again the address it actually connects to (`createSafeLookup`), so a
 * name that resolves differently later (DNS rebinding) gets nowhere either.
 *
 * A refusal never names the address a host name resolved to (it would tell a caller the hub's
 * internal DNS answers); it goes to the caller of the check (`enderecoRecusado`, `aoRecusar`) for
 * the server log.
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
/**
 * Cloud metadata and platform services (instance credentials, agent channels): refused in every
 * form and never opened by the allow-list. Most are link-local or unique-local already; Azure's
 * wireserver (168.63.129.16) is in public space, which is why the list exists.
 */
const METADATA: readonly string[] = [
  '169.254.169.254', // AWS, GCP, Azure IMDS, OpenStack, Oracle, DigitalOcean…
  '169.254.169.253', // AWS DNS resolver
  '169.254.169.123', // AWS time sync
  '169.254.170.2', // AWS ECS task credentials
  '169.254.0.23', // Tencent Cloud
  '168.63.129.16', // Azure wireserver (DHCP, DNS, health probes, VM agent)
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud (legacy)
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::253', // AWS DNS over IPv6
  'fd00:ec2::123', // AWS time sync over IPv6
  'fd20:ce::254', // GCP metadata over IPv6
];
const METADATA_KEYS = new Set(METADATA.map((ip) => ipaddr.parse(ip).toNormalizedString()));

/** Global unicast IPv6: everything else (::/8 included, so IPv4-compatible ::a.b.c.d) is not public. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/**
 * IPv6 prefixes whose last 32 bits are an IPv4 address the packet really goes to: IPv4-mapped
 * (::ffff:0:0/96), SIIT (::ffff:0:0:0/96, RFC 6145) and the NAT64 well-known prefix (64:ff9b::/96).
 * Local-use NAT64 (64:ff9b:1::/48) is not here: its operator chooses where the IPv4 sits, and it
 * is not global, so it is refused whole.
 */
const EMBEDDING_IPV4 = ['::ffff:0:0/96', '::ffff:0:0:0/96', '64:ff9b::/96'].map((cidr) => ipaddr.parseCIDR(cidr));

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

/** The IPv4 address inside an IPv4-mapped, SIIT or well-known NAT64 address; undefined otherwise. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (!EMBEDDING_IPV4.some((cidr) => address.match(cidr))) return undefined;
  return new ipaddr.IPv4(address.toByteArray().slice(12, 16));
}

function inAllowlist(address: Address, allowlist: readonly Cidr[]): boolean {
  return allowlist.some(
    ([network, bits]) => network.kind() === address.kind() && address.match(network as never, bits),
  );
}

const isMetadata = (address: Address) => METADATA_KEYS.has(address.toNormalizedString());

function isForbiddenIpv4(address: ipaddr.IPv4, allowlist: readonly Cidr[]): boolean {
  if (isMetadata(address)) return true;
  if (inAllowlist(address, allowlist)) return false;
  return FORBIDDEN_IPV4.has(address.range());
}

function isForbiddenIpv6(address: ipaddr.IPv6, allowlist: readonly Cidr[]): boolean {
  if (isMetadata(address)) return true;
  if (inAllowlist(address, allowlist)) return false;
  const v4 = embeddedIpv4(address);
  if (v4) return isForbiddenIpv4(v4, allowlist);
  // 6to4, Teredo and the other special ranges inside 2000::/3 are refused whole: deprecated
  // transition relays or space that is not a host's own.
  return !address.match(GLOBAL_UNICAST) || address.range() !== 'unicast';
}

/**
 * An IPv6 text ending in dotted IPv4 (`::ffff:1.2.3.4`, `::1.2.3.4`), rewritten with two hex groups:
 * ipaddr.js reads `::1.2.3.4` as IPv4-mapped, but it is the IPv4-compatible ::102:304.
 */
const DOTTED_TAIL = /:(\d+)\.(\d+)\.(\d+)\.(\d+)$/;
const hexTail = (_: string, a: string, b: string, c: string, d: string) =>
  `:${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`;

/**
 * True when a delivery must not go to this address. Anything that is not a plain IP address is
 * forbidden too (fail closed). Export for the delivery worker: check the connected address.
 */
export function isForbiddenAddress(ip: string, allowlist: readonly Cidr[] = []): boolean {
  const text = (ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip).split('%')[0] ?? '';
  if (!isIP(text)) return true;
  let address: Address;
  try {
    address = ipaddr.parse(text.replace(DOTTED_TAIL, hexTail));
  } catch {
    return true;
  }
  return address.kind() === 'ipv6'
    ? isForbiddenIpv6(address as ipaddr.IPv6, allowlist)
    : isForbiddenIpv4(address as ipaddr.IPv4, allowlist);
}

export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: LookupAll = (hostname) => dnsLookupAll(hostname, { all: true, verbatim: true });

export interface DestinationPolicy {
  ambiente: Ambiente;
  allowlist: readonly Cidr[];
  /**
   * Outside LOCALHOST a new url_de_destino must be https unless this is set (DESTINATION_ALLOW_HTTP,
   * for a closed network). Only subscriptions are checked: deliveries to a URL already accepted go on.
   */
  permitirHttp?: boolean;
  /** Name resolution; dns.lookup (hosts file included, as the worker's connection uses) by default. */
  lookup?: LookupAll;
  lookupTimeoutMs?: number;
}

export type DestinationVerdict =
  | { permitido: true; enderecos: string[] }
  | {
      permitido: false;
      codigo: 'destino_proibido' | 'destino_nao_resolvido' | 'https_obrigatorio';
      /** For the caller: never names an address a host name resolved to. */
      motivo: string;
      /** For the server log only: the resolved address that was refused. */
      enderecoRecusado?: string;
    };

const PROIBIDO = 'deliveries may not go to internal, private, reserved or cloud metadata addresses';
const PEDIR = 'ask an operator to add it to DESTINATION_ALLOWLIST if it is meant';

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
        motivo: `the host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'no answer'})`,
      };
    }
    if (addresses.length === 0)
      return { permitido: false, codigo: 'destino_nao_resolvido', motivo: `the host ${host} has no address` };
  }
  const forbidden = addresses.find((address) => isForbiddenAddress(address, policy.allowlist));
  if (forbidden) {
    // The caller wrote a literal address: naming it tells nothing. A name's answer is not told.
    if (forbidden === host) return { permitido: false, codigo: 'destino_proibido', motivo: `${PROIBIDO}; ${PEDIR}` };
    return {
      permitido: false,
      codigo: 'destino_proibido',
      motivo: `the host ${host} resolves to a non-public address; ${PROIBIDO}; ${PEDIR}`,
      enderecoRecusado: forbidden,
    };
  }
  if (url.protocol !== 'https:' && !policy.permitirHttp)
    return {
      permitido: false,
      codigo: 'https_obrigatorio',
      motivo: `must use https in ${policy.ambiente} (deliveries carry signed data; http is allowed only where an operator set DESTINATION_ALLOW_HTTP)`,
    };
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
  /** Told the refused address, for the server log; the error itself never names it. */
  aoRecusar?: (hostname: string, address: string) => void,
): LookupFunction {
  return ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
    lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error);
      const forbidden = addresses.find((a) => isForbiddenAddress(a.address, allowlist));
      if (forbidden) {
        aoRecusar?.(hostname, forbidden.address);
        const refusal = Object.assign(
          new Error(`${hostname} resolves to a non-public address, where deliveries may not go`),
          { code: 'EDESTINOPROIBIDO' },
        );
        return callback(refusal);
      }
      const first = addresses[0];
      // Checked for `all` too: net, given an empty list, fails with a TypeError of its own.
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }));
      if ((options as { all?: boolean }).all) return callback(null, addresses);
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
