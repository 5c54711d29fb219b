// The README's configuration table names every variable every service reads (issue 10: "every
// variable of every service in the configuration table").
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { configSchemaOf, ROOT } from './configuracao';

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const tableRows = readme.split('\n').filter((line) => line.startsWith('| `'));
const services = readdirSync(path.join(ROOT, 'services')).filter((name) => configSchemaOf(name, true));

test('When the services are listed, then each of them with a config.ts is checked here', () => {
  expect(services).toEqual(
    expect.arrayContaining([
      'gateway',
      'access',
      'function',
      'hub-api',
      'delivery-worker',
      'identity-dev',
      'demo-receiver',
    ]),
  );
});

test.each(services)(
  "When %s's configuration is read, then every variable of it is in the README's table",
  (service) => {
    const missing = Object.keys(configSchemaOf(service, true)!.shape).filter(
      (name) => !tableRows.some((row) => row.includes(`\`${name}\``)),
    );
    expect(missing).toEqual([]);
  },
);
