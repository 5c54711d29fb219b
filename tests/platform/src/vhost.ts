import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ctl = (...args: string[]) => run('rabbitmqctl', ['-q', ...args], { timeout: 30_000 });

export interface OwnVhost {
  url: string;
  remove(): Promise<void>;
}

/**
 * A virtual host of its own for one platform, beside the test virtual host of RABBITMQ_URL (same
 * broker and user, named after it). The services declare queues with fixed names
 * (`access.colaboradores`, …) bound to the platform's exchanges, so in a shared virtual host they
 * would consume the messages other test files publish, and the other files' services would consume
 * theirs. Made with rabbitmqctl, as infra/test/global-setup.js makes the test virtual host; where
 * rabbitmqctl cannot reach the broker, the platform runs in RABBITMQ_URL's virtual host itself.
 */
export async function ownVhost(baseUrl: string): Promise<OwnVhost> {
  const url = new URL(baseUrl);
  const parent = decodeURIComponent(url.pathname.slice(1)) || 'root';
  const name = `${parent}.platform.${randomBytes(4).toString('hex')}`;
  try {
    await ctl('add_vhost', name);
  } catch {
    return { url: baseUrl, remove: async () => undefined };
  }
  const remove = async () => {
    await ctl('delete_vhost', name);
  };
  try {
    await ctl('set_permissions', '-p', name, decodeURIComponent(url.username) || 'guest', '.*', '.*', '.*');
  } catch (error) {
    await remove();
    throw error;
  }
  url.pathname = `/${encodeURIComponent(name)}`;
  return { url: url.toString(), remove };
}
