import { request } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  checkDestination,
  createSafeLookup,
  type DestinationPolicy,
  isForbiddenAddress,
  parseAllowlist,
} from './safety';
import { parseDestinationUrl } from './url';

const sandbox: DestinationPolicy = { ambiente: 'SANDBOX', allowlist: [] };

describe('isForbiddenAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local metadata service'],
    ['100.64.0.1', 'CGNAT'],
    ['224.0.0.1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'documentation (reserved)'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata (hex)'],
    ['64:ff9b::a00:1', 'NAT64 of a private address'],
    ['fe80::1', 'IPv6 link-local'],
    ['fd12:3456::1', 'unique-local fc00::/7'],
    ['fc00::1', 'unique-local fc00::/7'],
    ['ff02::1', 'IPv6 multicast'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['not-an-ip', 'not an address'],
    ['0x7f.1', 'a non-canonical IPv4 spelling'],
  ])('When the address is %s (%s), then it is forbidden', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '[2606:4700:4700::1111]'])(
    'When the address is public (%s), then it is allowed',
    (ip) => {
      expect(isForbiddenAddress(ip)).toBe(false);
    },
  );

  it.each([
    ['::7f00:1', 'IPv4-compatible loopback, as the URL parser writes [::127.0.0.1]'],
    ['::127.0.0.1', 'IPv4-compatible loopback, dotted'],
    ['::a9fe:a9fe', 'IPv4-compatible metadata service'],
    ['::8.8.8.8', 'IPv4-compatible (deprecated) even of a public address'],
    ['::ffff:a83f:8110', 'IPv4-mapped Azure wireserver'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata service'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::a83f:8110', 'NAT64 of the Azure wireserver'],
    ['64:ff9b:1::808:808', 'local-use NAT64 (64:ff9b:1::/48), not global'],
    ['2002:a00:1::1', '6to4 of a private address'],
    ['2002:7f00:1::1', '6to4 of loopback'],
    ['2002:808:808::1', '6to4 of a public address (deprecated relay)'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['100::1', 'IPv6 discard'],
    ['4000::1', 'IPv6 outside global unicast 2000::/3'],
    ['168.63.129.16', 'Azure wireserver (public space)'],
    ['100.100.100.200', 'Alibaba metadata'],
    ['169.254.170.2', 'AWS ECS credentials'],
    ['fd00:ec2::254', 'AWS metadata over IPv6'],
    ['fd20:ce::254', 'GCP metadata over IPv6'],
  ])('When the address is %s (%s), then it is forbidden', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each(['64:ff9b::808:808', '64:ff9b::8.8.8.8', '2a00:1450:4001::200e'])(
    'When an IPv6 address is global or carries a public IPv4 through NAT64 (%s), then it is allowed',
    (ip) => {
      expect(isForbiddenAddress(ip)).toBe(false);
    },
  );

  it('When the allow-list covers a cloud metadata address, then that address stays forbidden and its neighbours are opened', () => {
    const allowlist = parseAllowlist('168.63.0.0/16, 169.254.0.0/16, fd00:ec2::/32, 100.64.0.0/10');
    for (const ip of ['168.63.129.16', '169.254.169.254', '::ffff:169.254.169.254', 'fd00:ec2::254', '100.100.100.200'])
      expect({ ip, proibido: isForbiddenAddress(ip, allowlist) }).toEqual({ ip, proibido: true });
    for (const ip of ['168.63.1.1', '169.254.1.1', 'fd00:ec2::1', '100.64.0.1'])
      expect({ ip, proibido: isForbiddenAddress(ip, allowlist) }).toEqual({ ip, proibido: false });
  });

  it('When the allow-list holds a private subnet, then addresses inside it are allowed and others are not', () => {
    const allowlist = parseAllowlist('10.20.0.0/16, fd00:1::/32, 127.0.0.1');
    expect(isForbiddenAddress('10.20.3.4', allowlist)).toBe(false);
    expect(isForbiddenAddress('::ffff:10.20.3.4', allowlist)).toBe(false);
    expect(isForbiddenAddress('fd00:1::5', allowlist)).toBe(false);
    expect(isForbiddenAddress('127.0.0.1', allowlist)).toBe(false);
    expect(isForbiddenAddress('10.21.0.1', allowlist)).toBe(true);
    expect(isForbiddenAddress('127.0.0.2', allowlist)).toBe(true);
  });

  it('When the allow-list has a bad entry, then parsing says which', () => {
    expect(() => parseAllowlist('10.0.0.0/8,nonsense')).toThrow(/"nonsense"/);
    expect(parseAllowlist(' ')).toEqual([]);
  });
});

describe('checkDestination', () => {
  it.each([
    'http://127.0.0.1/x',
    'http://10.0.0.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]:8080/',
    'http://[::ffff:127.0.0.1]/',
    'http://2130706433/',
    'http://0x7f.0.0.1/',
  ])('When the URL is %s in SANDBOX, then it is refused', async (text) => {
    const parsed = parseDestinationUrl(text);
    if (!('url' in parsed)) throw new Error(parsed.problema);
    expect(await checkDestination(parsed.url, sandbox)).toMatchObject({ permitido: false, codigo: 'destino_proibido' });
    expect(await checkDestination(parsed.url, { ...sandbox, ambiente: 'LOCALHOST' })).toMatchObject({
      permitido: true,
    });
  });

  it.each([
    'http://[::127.0.0.1]/',
    'https://[::a9fe:a9fe]/latest/meta-data',
    'https://[64:ff9b::10.0.0.1]/',
    'https://[2002:a00:1::1]/',
    'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
    'http://168.63.129.16/machine?comp=goalstate',
    'https://[fd00:ec2::254]/latest/meta-data',
    'https://100.100.100.200/latest/meta-data',
  ])('When the URL is %s in PRODUCTION, then it is refused as destino_proibido', async (text) => {
    const parsed = parseDestinationUrl(text);
    if (!('url' in parsed)) throw new Error(parsed.problema);
    expect(await checkDestination(parsed.url, { ...sandbox, ambiente: 'PRODUCTION' })).toMatchObject({
      permitido: false,
      codigo: 'destino_proibido',
    });
  });

  it('When a host name resolves to a private address, then the refusal does not name the address and gives it apart for the log', async () => {
    const lookup = async () => [{ address: '10.11.12.13', family: 4 }];
    const verdict = await checkDestination(new URL('https://interno.example/'), { ...sandbox, lookup });
    expect(verdict).toMatchObject({ permitido: false, codigo: 'destino_proibido', enderecoRecusado: '10.11.12.13' });
    if (verdict.permitido) throw new Error('allowed');
    expect(verdict.motivo).toMatch(/interno\.example resolves to a non-public address/);
    expect(verdict.motivo).not.toMatch(/10\.11/);
  });

  it.each(['SANDBOX', 'PRODUCTION'] as const)(
    'When the URL is http in %s, then it is refused as https_obrigatorio; https, DESTINATION_ALLOW_HTTP or LOCALHOST accept it',
    async (ambiente) => {
      const policy = { ...sandbox, ambiente };
      expect(await checkDestination(new URL('http://93.184.215.14/hook'), policy)).toMatchObject({
        permitido: false,
        codigo: 'https_obrigatorio',
        motivo: expect.stringMatching(/https/),
      });
      expect(await checkDestination(new URL('https://93.184.215.14/hook'), policy)).toMatchObject({ permitido: true });
      expect(
        await checkDestination(new URL('http://93.184.215.14/hook'), { ...policy, permitirHttp: true }),
      ).toMatchObject({ permitido: true });
      expect(
        await checkDestination(new URL('http://93.184.215.14/hook'), { ...policy, ambiente: 'LOCALHOST' }),
      ).toMatchObject({ permitido: true });
    },
  );

  it('When a host name resolves to a loopback address (localhost), then it is refused in PRODUCTION', async () => {
    const verdict = await checkDestination(new URL('http://localhost:9999/'), { ...sandbox, ambiente: 'PRODUCTION' });
    expect(verdict).toMatchObject({ permitido: false, codigo: 'destino_proibido' });
  });

  it('When one of several resolved addresses is private, then the host is refused', async () => {
    const lookup = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    expect(await checkDestination(new URL('https://mixed.example/'), { ...sandbox, lookup })).toMatchObject({
      permitido: false,
      codigo: 'destino_proibido',
    });
  });

  it('When the host does not resolve, then it is refused as unresolvable', async () => {
    const lookup = async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    };
    expect(await checkDestination(new URL('https://nowhere.invalid/'), { ...sandbox, lookup })).toMatchObject({
      permitido: false,
      codigo: 'destino_nao_resolvido',
    });
  });

  it('When the address is public, then it is allowed', async () => {
    expect(await checkDestination(new URL('https://93.184.215.14/hook'), sandbox)).toEqual({
      permitido: true,
      enderecos: ['93.184.215.14'],
    });
  });
});

describe('parseDestinationUrl', () => {
  it.each([
    ['ftp://example.com/', /http or https/],
    ['https://user:secret@example.com/', /credentials/],
    ['not a url', /absolute/],
    [`https://example.com/${'a'.repeat(2048)}`, /2048/],
  ])('When the URL is %s, then it is refused', (text, problem) => {
    const parsed = parseDestinationUrl(text);
    expect('problema' in parsed && parsed.problema).toMatch(problem);
  });
});

describe('createSafeLookup', () => {
  it('When the worker connects through the safe lookup to a loopback host, then the connection is refused before it is made', async () => {
    let reached = false;
    const server = createServer((_req, res) => {
      reached = true;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const attempt = (lookup: ReturnType<typeof createSafeLookup>) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: 'localhost', port, path: '/', lookup, family: 4 }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    try {
      const recusados: string[] = [];
      const refusal = attempt(createSafeLookup([], undefined, (host, address) => recusados.push(`${host} ${address}`)));
      await expect(refusal).rejects.toMatchObject({ code: 'EDESTINOPROIBIDO' });
      // The error (stored on the attempt) does not name the address; the log hook gets it.
      await expect(refusal).rejects.toThrow('localhost resolves to a non-public address, where deliveries may not go');
      expect(recusados).toEqual(['localhost 127.0.0.1']);
      expect(reached).toBe(false);
      expect(await attempt(createSafeLookup(parseAllowlist('127.0.0.0/8')))).toBe(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('When the resolver answers no address at all, then the lookup fails with ENOTFOUND, with or without `all`', async () => {
    const vazio = ((_host: string, _options: object, callback: (...args: unknown[]) => void) =>
      callback(null, [])) as unknown as typeof import('node:dns').lookup;
    const safe = createSafeLookup([], vazio);
    for (const options of [{}, { all: true }]) {
      const erro = await new Promise((resolve) => safe('vazio.test', options, resolve));
      expect(erro).toMatchObject({ code: 'ENOTFOUND', message: 'vazio.test has no address' });
    }
  });
});
