// Runs in every worker of the `unit` project (jest.config.js). Unit tests need neither RabbitMQ nor
// PostgreSQL: both are pointed at a closed port, so a unit test that reaches either fails at once
// (connection refused) instead of passing on a machine that happens to run them.
const CLOSED = '127.0.0.1:1';

process.env.HUB_AMBIENTE ??= 'LOCALHOST';
process.env.RABBITMQ_URL = `amqp://guest:guest@${CLOSED}/unit-tests-have-no-broker`;
for (const name of ['TEST_DATABASE_URL', 'HUB_DATABASE_URL', 'ACCESS_DATABASE_URL', 'FUNCTION_DATABASE_URL']) {
  process.env[name] = `postgresql://postgres@${CLOSED}/unit_tests_have_no_database`;
}
