import { readFileSync } from 'node:fs';
import path from 'node:path';
import { origemDaUrl, parseDestinationUrl } from './url';

describe('origemDaUrl (pure rule)', () => {
  it('When the port is the scheme default, then it is dropped; any other port stays', () => {
    expect(origemDaUrl('http://exemplo.com:80/a')).toBe('http://exemplo.com');
    expect(origemDaUrl('https://exemplo.com:443/a?b#c')).toBe('https://exemplo.com');
    expect(origemDaUrl('http://exemplo.com:443/')).toBe('http://exemplo.com:443');
    expect(origemDaUrl('https://exemplo.com:80/')).toBe('https://exemplo.com:80');
    expect(origemDaUrl('https://exemplo.com:8443/x')).toBe('https://exemplo.com:8443');
  });

  it('When the host is IPv6, then it keeps its brackets (and its port after them)', () => {
    expect(origemDaUrl('http://[::1]:8080/ganchos')).toBe('http://[::1]:8080');
    expect(origemDaUrl('https://[2001:DB8::1]/')).toBe('https://[2001:db8::1]');
  });

  it('When scheme or host are in upper case, then the origin is in lower case; path, query, fragment and credentials are not part of it', () => {
    expect(origemDaUrl('HTTPS://Exemplo.COM/Caminho?Q=1#F')).toBe('https://exemplo.com');
    expect(origemDaUrl('http://user:senha@exemplo.com/')).toBe('http://exemplo.com');
  });

  it('When given a parsed URL or its text, then the origin is the same; a text that is no URL is refused', () => {
    const texto = 'https://Exemplo.com:443/a';
    expect(origemDaUrl(new URL(texto))).toBe(origemDaUrl(texto));
    expect(() => origemDaUrl('não é url')).toThrow(/Invalid URL/);
  });

  it('When a URL is stored normalised, then its origin is what origem_da_url of the migration takes from it', () => {
    const sql = readFileSync(path.join(__dirname, '../../hub-data/migrations/008.do.destinos.sql'), 'utf8');
    const padrao = /substring\(url from '([^']+)'\)/.exec(sql)?.[1];
    expect(padrao).toBeDefined();
    for (const texto of [
      'HTTP://Exemplo.com:80/a',
      'https://[::1]:8443/b?c',
      'https://x.exemplo.com:443',
      'http://h:81',
    ]) {
      const parsed = parseDestinationUrl(texto);
      if (!('url' in parsed)) throw new Error(`${texto}: ${parsed.problema}`);
      const stored = parsed.url.href;
      expect(new RegExp(padrao!).exec(stored)?.[0]).toBe(origemDaUrl(stored));
    }
  });
});
