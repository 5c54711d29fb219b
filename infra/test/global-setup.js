// Tests publish on the platform's real exchanges, whose durable queues would keep those messages for
// whoever runs the platform next on this machine. So the tests use a virtual host of their own,
// created here (and its durable queues emptied, as nothing consumes them between runs).
const { execFileSync } = require('node:child_process');
const { TEST_VHOST } = require('./vhost');

const ctl = (...args) =>
  execFileSync('rabbitmqctl', ['-q', ...args], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });

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
      if (name && durable === 'true') ctl('purge_queue', '-p', TEST_VHOST, name);
    }
  } catch (error) {
    throw new Error(
      `could not prepare the RabbitMQ virtual host "${TEST_VHOST}" with rabbitmqctl (${error.message.split('\n')[0]}). ` +
        'Create it yourself, or point the tests at a broker with RABBITMQ_URL.',
    );
  }
};
