// Tests publish on the platform's real exchanges, whose durable queues would keep those messages for
// whoever runs the platform next on this machine. So the tests use a virtual host of their own,
// created here (and its durable queues emptied, as nothing consumes them between runs).
const { execFileSync } = require('node:child_process');
const { TEST_RABBITMQ_URL, TEST_VHOST } = require('./vhost');

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

/**
 * A connection to the test virtual host, made (with the guest user's permissions) when it is not
 * there: RabbitMQ refuses the connection to a virtual host that does not exist.
 */
async function conectar(amqp) {
  try {
    return await amqp.connect(TEST_RABBITMQ_URL);
  } catch {
    try {
      ctl('add_vhost', TEST_VHOST);
      ctl('set_permissions', '-p', TEST_VHOST, 'guest', '.*', '.*', '.*');
    } catch (error) {
      throw new Error(
        `could not prepare the RabbitMQ virtual host "${TEST_VHOST}" with rabbitmqctl (${String(error.message).split('\n')[0]}). ` +
          'Create it yourself, or point the tests at a broker with RABBITMQ_URL.',
      );
    }
    return amqp.connect(TEST_RABBITMQ_URL);
  }
}

/** The test virtual host's durable queues but those of a run still going (one rabbitmqctl call). */
const filasDuraveis = () =>
  ctl('list_queues', '-p', TEST_VHOST, 'name', 'durable')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([name, durable]) => name && durable === 'true' && !deUmaExecucaoViva(name))
    .map(([name]) => name);

/**
 * Empties the durable queues through AMQP, on one connection: a rabbitmqctl call per queue boots an
 * Erlang VM each (about a second of CPU), and with some forty queues that was twenty seconds before
 * every run, even of a single test file.
 */
module.exports = async () => {
  if (process.env.RABBITMQ_URL) return; // the caller chose the broker and virtual host
  const amqp = require('amqplib');
  const conexao = await conectar(amqp);
  try {
    let canal = await conexao.createChannel();
    for (const nome of filasDuraveis()) {
      try {
        await canal.purgeQueue(nome);
      } catch (error) {
        // Deleted since it was listed (its test ended): nothing left to empty. The 404 closed the channel.
        if (!/NOT_FOUND|no queue/i.test(String(error.message))) throw error;
        canal = await conexao.createChannel();
      }
    }
    await canal.close().catch(() => undefined);
  } finally {
    await conexao.close();
  }
};
