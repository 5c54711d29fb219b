// Tests publish on the platform's real exchanges, whose durable queues would keep those messages for
// whoever runs the platform next on this machine. So the tests use a virtual host of their own,
// created here (and its durable queues emptied, as nothing consumes them between runs).
const { execFileSync } = require('node:child_process');
const { TEST_VHOST } = require('./vhost');

const ctl = (...args) =>
  execFileSync('rabbitmqctl', ['-q', ...args], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });

/**
 * Whether a queue belongs to a test run still going on this machine: a test's own queues are named by
 * uniqueName (@hub/testing: prefix, pid, time, random), and emptying one under another run (a second
 * `jest` beside this one) takes the messages its test waits for.
 */
function deUmaExecucaoViva(name) {
  const pid = /\.(\d+)\.[0-9a-z]{6,}\.[0-9a-z]{1,6}(?:\.|$)/.exec(name)?.[1];
  if (pid === undefined || Number(pid) === process.pid) return false;
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

module.exports = async () => {
  if (process.env.RABBITMQ_URL) return; // the caller chose the broker and virtual host
  try {
    if (
      !ctl('list_vhosts')
        .split('\n')
        .some((line) => line.trim() === TEST_VHOST)
    )
      ctl('add_vhost', TEST_VHOST);
    ctl('set_permissions', '-p', TEST_VHOST, 'guest', '.*', '.*', '.*');
    for (const line of ctl('list_queues', '-p', TEST_VHOST, 'name', 'durable').split('\n')) {
      const [name, durable] = line.trim().split(/\s+/);
      if (!name || durable !== 'true' || deUmaExecucaoViva(name)) continue;
      try {
        ctl('purge_queue', '-p', TEST_VHOST, name);
      } catch (error) {
        // Deleted since it was listed (its test ended): nothing left to empty.
        if (!/not.found|no queue/i.test(String(error.stderr ?? error.message))) throw error;
      }
    }
  } catch (error) {
    throw new Error(
      `could not prepare the RabbitMQ virtual host "${TEST_VHOST}" with rabbitmqctl (${error.message.split('\n')[0]}). ` +
        'Create it yourself, or point the tests at a broker with RABBITMQ_URL.',
    );
  }
};
